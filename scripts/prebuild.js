// npm run prebuilds: builds the addon into
// prebuilds/linux-<arch>/arenacache.abi<N>.glibc.node (prebuildify), which the
// loader (lib/native/addon.js, by node-gyp-build's matching rules) prefers to a
// local build, so that installing needs no compiler.
//
// The addon uses one V8 API function (src/native/external_shared_buffer.h),
// so a binary is tied to a Node ABI: one is built per Node major, each
// against that release's own headers, taken from the npm registry's
// node-linux-<arch> packages (scripts/node-runtime.js): no download from
// nodejs.org. arm64 is cross-compiled with Debian's g++-aarch64-linux-gnu.
//
//   node scripts/prebuild.js                 this Node's major, this machine's arch
//   node scripts/prebuild.js --all           every major and arch in node-targets.json
//                                            (an arch without its cross compiler is skipped, saying so)
//   node scripts/prebuild.js --node 22,24 --arch arm64
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { nodeRuntime, nodeTargets } from './node-runtime.js';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// What each architecture is built with when it is not this machine's.
const CROSS_TOOLCHAINS = {
  arm64: { prefix: 'aarch64-linux-gnu-', debianPackage: 'g++-aarch64-linux-gnu' },
  x64: { prefix: 'x86_64-linux-gnu-', debianPackage: 'g++-x86-64-linux-gnu' },
};

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** The compiler environment for `arch`, or a reason it cannot be built here. */
function toolchainFor(arch) {
  if (arch === process.arch) return { env: {}, stripBin: 'strip' };
  const cross = CROSS_TOOLCHAINS[arch];
  if (!onPath(`${cross.prefix}g++`)) {
    return { missing: `no ${cross.prefix}g++ on PATH (Debian: apt-get install ${cross.debianPackage})` };
  }
  return {
    env: { CC: `${cross.prefix}gcc`, CXX: `${cross.prefix}g++`, LINK: `${cross.prefix}g++`, AR: `${cross.prefix}ar` },
    stripBin: `${cross.prefix}strip`,
  };
}

function buildOne(version, arch, toolchain) {
  const runtime = nodeRuntime(version, arch);
  console.log(`arenacache: building for Node ${version} (${arch}) against ${runtime.prefix}`);
  // napi=false: the binary is tagged with the Node ABI it was built for.
  const result = spawnSync(
    process.execPath,
    [
      require.resolve('prebuildify/bin.js'),
      '--napi=false',
      `--target=node@${version}`,
      `--arch=${arch}`,
      '--strip',
      `--strip-bin=${toolchain.stripBin}`,
      '--tag-libc',
      `--node-gyp=${path.join(root, 'node_modules', '.bin', 'node-gyp')}`,
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, ...toolchain.env, npm_config_nodedir: runtime.prefix } },
  );
  if (result.status !== 0) throw new Error(`prebuildify exited with ${result.status ?? result.error?.message}`);
}

const { values } = parseArgs({
  options: { all: { type: 'boolean' }, node: { type: 'string' }, arch: { type: 'string' } },
});
const currentMajor = process.versions.node.split('.')[0];
const majors = values.node ? values.node.split(',') : values.all ? Object.keys(nodeTargets.majors) : [currentMajor];
const arches = values.arch ? values.arch.split(',') : values.all ? nodeTargets.arches : [process.arch];

for (const major of majors) {
  if (!(major in nodeTargets.majors)) {
    console.error(`arenacache: --node must list majors from scripts/node-targets.json (${Object.keys(nodeTargets.majors).join(', ')}); got ${major}`);
    process.exit(2);
  }
}
let failed = false;
for (const arch of arches) {
  const toolchain = toolchainFor(arch);
  if (toolchain.missing) {
    // --all builds what this machine can; an arch asked for by name must build.
    console.error(`arenacache: ${values.all ? 'skipping' : 'cannot build'} linux-${arch}: ${toolchain.missing}`);
    if (!values.all) failed = true;
    continue;
  }
  for (const major of majors) {
    try {
      buildOne(nodeTargets.majors[major], arch, toolchain);
    } catch (error) {
      console.error(`arenacache: prebuild for Node ${major} (${arch}) failed: ${error.message}`);
      failed = true;
    }
  }
}
// The local build in build/Release now belongs to the last target built;
// remove it so that the loader does not meet a binary for another ABI or arch.
spawnSync(process.execPath, [path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'), 'clean'], { cwd: root, stdio: 'ignore' });
for (const arch of arches) {
  const folder = path.join(root, 'prebuilds', `linux-${arch}`);
  if (existsSync(folder)) console.log(`arenacache: ${folder}: ${readdirSync(folder).join(', ')}`);
}
process.exit(failed ? 1 : 0);

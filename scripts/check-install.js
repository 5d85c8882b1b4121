// npm run check:install: installs the release tarball as a user would, on a
// machine without a compiler, for every Node release in node-targets.json,
// and checks that it works there:
//
//   node scripts/check-install.js [tarball]   default: dist/arenacache-<version>.tgz,
//                                             what `npm run release` wrote
//
// - the tarball carries every prebuild (scripts/prebuild-set.js);
// - for each release: an empty directory, PATH without cc, g++, make or
//   python3, `npm install <tarball>`; then require() and import of every
//   entry, a file-backed SharedCache on the prebuilt binary, and (for each
//   supported major) test/types/*.ts compiled under `strict` against the
//   installed declarations;
// - the same tarball without its prebuilds, on the same compiler-less PATH:
//   the install succeeds and its warning reaches npm's own output although
//   npm hides the script's (its stderr a pipe, as in CI and docker build),
//   `arenacache doctor` exits 3 with the recorded reason, the first native
//   call throws ERR_NATIVE_UNAVAILABLE explaining how to fix it, and with
//   ARENACACHE_REQUIRE_NATIVE=1 the install fails.
//
// Exit status 0 when every check passed. Used by .ci/run.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeRuntime, nodeTargets } from './node-runtime.js';
import { checkTarball } from './prebuild-set.js';
import { TARBALL } from './release.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(os.tmpdir(), 'arenacache-install-'));
const failures = [];

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? result.error.message : ''}` };
}

function check(label, ok, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${label}`);
  if (!ok) {
    failures.push(label);
    if (detail) console.log(detail.trim().split('\n').slice(-25).map((line) => `     ${line}`).join('\n'));
  }
}

// A PATH that has every program of this machine's PATH except the compiler
// toolchain, node-gyp's python, and any node other than the one under test.
const NO_TOOLCHAIN = /^(cc|c\+\+|cpp|gcc|g\+\+|make|gmake|clang.*|python.*|node|nodejs|.*-(gcc|g\+\+|cc|c\+\+)(-\d+)?|(gcc|g\+\+|cpp)-\d+)$/;
function compilerlessPath(nodeBinary) {
  const bin = path.join(work, `bin-${statSync(nodeBinary).ino}`);
  if (existsSync(bin)) return bin;
  mkdirSync(bin);
  symlinkSync(nodeBinary, path.join(bin, 'node'));
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!directory || !existsSync(directory)) continue;
    for (const name of readdirSync(directory)) {
      const target = path.join(bin, name);
      if (NO_TOOLCHAIN.test(name) || existsSync(target)) continue;
      symlinkSync(path.join(directory, name), target);
    }
  }
  return bin;
}

function installEnv(bin) {
  const env = { ...process.env, PATH: bin };
  for (const name of ['CC', 'CXX', 'LINK', 'npm_config_nodedir', 'ARENACACHE_REQUIRE_NATIVE', 'ARENACACHE_NATIVE']) delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
  return env;
}

// Exactly the tarball a release publishes: the one given, or the one `npm run release` wrote.
function releaseTarball() {
  const given = process.argv[2];
  const tarball = given === undefined ? TARBALL : path.resolve(given);
  if (!existsSync(tarball)) {
    throw new Error(given === undefined ? `no ${path.relative(root, TARBALL)}: make it with npm run release (or pass a tarball)` : `no such tarball: ${tarball}`);
  }
  const sha256 = createHash('sha256').update(readFileSync(tarball)).digest('hex');
  console.log(`installing ${tarball} (sha256 ${sha256}, made ${statSync(tarball).mtime.toISOString()})`);
  return tarball;
}

// What a user's code does first: every entry by require() and by import,
// then a file-backed cache, which needs the addon.
const SMOKE_CJS = `
const assert = require('node:assert');
const entries = ['arenacache', 'arenacache/fs', 'arenacache/meta', 'arenacache/snapshot', 'arenacache/keyv', 'arenacache/rate-limit', 'arenacache/redis'];
for (const entry of entries) assert.ok(Object.keys(require(entry)).length > 0, entry);
console.log('require ok');
`;
const SMOKE_ESM = `
import assert from 'node:assert';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { SharedCache } from 'arenacache';
for (const entry of ['arenacache/fs', 'arenacache/meta', 'arenacache/snapshot', 'arenacache/keyv', 'arenacache/rate-limit', 'arenacache/redis']) {
  assert.ok(Object.keys(await import(entry)).length > 0, entry);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arenacache-smoke-'));
try {
  const cache = SharedCache.open(path.join(dir, 'cache.arena'), { memoryBytes: 4 << 20 });
  cache.set('k', { n: 1 });
  assert.deepStrictEqual(cache.get('k'), { n: 1 });
  cache.close();
  const reopened = SharedCache.open(path.join(dir, 'cache.arena'));
  assert.deepStrictEqual(reopened.get('k'), { n: 1 });
  reopened.close();
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
const native = await import(createRequire(import.meta.url).resolve('arenacache').replace(/index\\.js$/, 'native/addon.js'));
console.log('binary', native.nativeBinary);
`;
const SMOKE_UNAVAILABLE = `
import assert from 'node:assert';
import { SharedCache, codes } from 'arenacache';
const cache = new SharedCache({ memoryBytes: 1 << 20 });
cache.set('k', 1);
assert.strictEqual(cache.get('k'), 1);
assert.throws(() => SharedCache.open('/tmp/arenacache-never.arena', { memoryBytes: 1 << 20 }), (error) => {
  assert.strictEqual(error.code, codes.ERR_NATIVE_UNAVAILABLE);
  assert.match(error.message, /needs the arenacache native addon/);
  assert.match(error.message, /npm rebuild arenacache/);
  return true;
});
console.log('unavailable ok');
`;

function freshProject(name, fields = {}) {
  const directory = path.join(work, name);
  mkdirSync(directory);
  writeFileSync(path.join(directory, 'package.json'), JSON.stringify({ name: `check-${name}`, private: true, type: 'module', ...fields }));
  writeFileSync(path.join(directory, 'smoke.cjs'), SMOKE_CJS);
  writeFileSync(path.join(directory, 'smoke.mjs'), SMOKE_ESM);
  return directory;
}

function typescriptCheck(directory, env) {
  const typesDir = path.join(directory, 'types-test');
  mkdirSync(typesDir);
  for (const file of readdirSync(path.join(root, 'test', 'types'))) {
    if (file.endsWith('.ts')) copyFileSync(path.join(root, 'test', 'types', file), path.join(typesDir, file));
  }
  copyFileSync(path.join(root, 'test', 'types', 'tsconfig.json'), path.join(typesDir, 'tsconfig.json'));
  return run(path.join(directory, 'node_modules', '.bin', 'tsc'), ['-p', typesDir], { cwd: directory, env });
}

const versionOf = (name) => JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;

try {
  const tarball = releaseTarball();
  const listing = run('tar', ['tzf', tarball]).output;
  const missing = checkTarball(tarball);
  check('tarball has a prebuild for every Node major and CPU of scripts/node-targets.json', missing.length === 0, `${missing.join('\n')}\nmake the release tarball with: npm run release`);
  for (const file of ['package/types/index.d.ts', 'package/LICENSE', 'package/lib/index.js']) check(`tarball has ${file}`, listing.includes(file));

  const releases = [...Object.values(nodeTargets.majors), ...nodeTargets.oldest];
  for (const version of releases) {
    const full = Object.values(nodeTargets.majors).includes(version);
    const runtime = nodeRuntime(version);
    const bin = compilerlessPath(runtime.node);
    const env = installEnv(bin);
    const directory = freshProject(`node-${version}`);
    check(`Node ${version}: no compiler on PATH`, run('sh', ['-c', 'command -v cc || command -v g++ || command -v make'], { env }).status !== 0);
    // The type tests also use the optional peers' own types (prom-client, keyv), cache-manager,
    // express-rate-limit's Store type (the rate-limit store must fit it; it needs express's types), and ioredis's clients (the Redis tier's must fit them).
    const peers = ['keyv'];
    const typing = ['typescript', '@types/node', 'prom-client', 'cache-manager', 'express-rate-limit', '@types/express', 'ioredis'];
    const extra = (full ? [...peers, ...typing] : peers).map((name) => `${name}@${versionOf(name)}`);
    const install = run('npm', ['install', '--no-audit', '--no-fund', tarball, ...extra], { cwd: directory, env });
    check(`Node ${version}: npm install <tarball> without a compiler`, install.status === 0, install.output);
    if (install.status !== 0) continue;
    const cjs = run(runtime.node, ['smoke.cjs'], { cwd: directory, env });
    check(`Node ${version}: require() of every entry`, cjs.status === 0, cjs.output);
    const esm = run(runtime.node, ['smoke.mjs'], { cwd: directory, env });
    check(`Node ${version}: import of every entry, SharedCache.open() on a file`, esm.status === 0, esm.output);
    check(`Node ${version}: the prebuilt binary loaded`, /binary .*prebuilds\/linux-x64\/arenacache\.abi\d+\.glibc\.node/.test(esm.output), esm.output);
    if (full) {
      const tsc = typescriptCheck(directory, env);
      check(`Node ${version}: test/types/*.ts compile under strict against the installed package`, tsc.status === 0, tsc.output);
    }
  }

  // linux-arm64: the same tarball installed for an arm64 machine (npm picks
  // the arm64 builds of lmdb and msgpackr), run by arm64 Node under
  // qemu-user, with its arm64 system libraries from Debian's cross packages.
  const qemu = run('sh', ['-c', 'command -v qemu-aarch64']).output.trim();
  const sysroot = '/usr/aarch64-linux-gnu';
  if (!listing.includes('package/prebuilds/linux-arm64/')) {
    console.log('skip linux-arm64: the tarball has no arm64 prebuilds (npm run prebuilds -- --all with g++-aarch64-linux-gnu)');
  } else if (!qemu || !existsSync(path.join(sysroot, 'lib', 'libstdc++.so.6'))) {
    console.log('skip linux-arm64 under emulation: needs qemu-aarch64 and /usr/aarch64-linux-gnu (Debian: apt-get install qemu-user g++-aarch64-linux-gnu)');
  } else {
    for (const version of Object.values(nodeTargets.majors)) {
      const arm = nodeRuntime(version, 'arm64');
      const directory = freshProject(`arm64-node-${version}`);
      const env = installEnv(compilerlessPath(nodeRuntime(version).node));
      // --ignore-scripts: an install script would run on this x64 host and look for x64 binaries.
      const install = run('npm', ['install', '--no-audit', '--no-fund', '--cpu=arm64', '--os=linux', '--ignore-scripts', tarball, `keyv@${versionOf('keyv')}`], { cwd: directory, env });
      check(`linux-arm64 Node ${version}: npm install <tarball> --cpu=arm64`, install.status === 0, install.output);
      if (install.status !== 0) continue;
      for (const [label, file] of [['require() of every entry', 'smoke.cjs'], ['import, SharedCache.open() on a file', 'smoke.mjs']]) {
        const result = run(qemu, ['-L', sysroot, arm.node, file], { cwd: directory, env, timeout: 300_000 });
        check(`linux-arm64 Node ${version} (qemu): ${label}`, result.status === 0, result.output);
        if (file === 'smoke.mjs') {
          check(`linux-arm64 Node ${version} (qemu): the arm64 prebuild loaded`, /binary .*prebuilds\/linux-arm64\/arenacache\.abi\d+\.glibc\.node/.test(result.output), result.output);
        }
      }
    }
  }

  // Nothing fits: the same package without prebuilds, still no compiler.
  const bare = path.join(work, 'bare');
  mkdirSync(bare);
  run('tar', ['xzf', tarball, '-C', bare]);
  rmSync(path.join(bare, 'package', 'prebuilds'), { recursive: true, force: true });
  const bareTarball = path.join(work, 'arenacache-without-prebuilds.tgz');
  run('tar', ['czf', bareTarball, '-C', bare, 'package']);
  const runtime = nodeRuntime(nodeTargets.majors[process.versions.node.split('.')[0]] ?? Object.values(nodeTargets.majors)[0]);
  const env = installEnv(compilerlessPath(runtime.node));
  // npm 11 runs a dependency's install script only when the project allows it.
  const directory = freshProject('without-prebuilds', { allowScripts: { arenacache: true } });
  writeFileSync(path.join(directory, 'unavailable.mjs'), SMOKE_UNAVAILABLE);
  // No --foreground-scripts, and npm's stderr a pipe, as in a CI job or a
  // docker build: npm hides the script's output, the warning must still show.
  const quoted = (value) => `'${value.replaceAll("'", "'\\''")}'`;
  const install = run('sh', ['-c', `{ npm install --no-audit --no-fund ${quoted(bareTarball)} 2>&1; echo "npm exit status $?"; } | cat`], { cwd: directory, env });
  check('without prebuilds or compiler: npm install succeeds', /npm exit status 0\n$/.test(install.output), install.output);
  check("without prebuilds or compiler: npm's output says why there is no addon, though npm hides the script's",
    /arenacache: no prebuilt binary fits .* could not be built/.test(install.output) && /npx arenacache doctor/.test(install.output), install.output);
  const doctor = run(runtime.node, [path.join(directory, 'node_modules', 'arenacache', 'bin', 'arenacache.js'), 'doctor'], { cwd: directory, env });
  check('without prebuilds or compiler: arenacache doctor exits 3 with the recorded reason and the fix',
    doctor.status === 3 && /the install script could not build it/.test(doctor.output) && /npm rebuild arenacache/.test(doctor.output), doctor.output);
  const unavailable = run(runtime.node, ['unavailable.mjs'], { cwd: directory, env });
  check('without prebuilds or compiler: memory cache works, SharedCache.open() explains ERR_NATIVE_UNAVAILABLE', unavailable.status === 0, unavailable.output);
  const strict = freshProject('without-prebuilds-required', { allowScripts: { arenacache: true } });
  const required = run('npm', ['install', '--no-audit', '--no-fund', bareTarball], { cwd: strict, env: { ...env, ARENACACHE_REQUIRE_NATIVE: '1' } });
  check('without prebuilds or compiler: ARENACACHE_REQUIRE_NATIVE=1 makes the install fail, saying why',
    required.status !== 0 && /could not be built/.test(required.output), required.output);
} catch (error) {
  check(`check-install: ${error.message}`, false);
} finally {
  if (process.env.KEEP_CHECK_DIR !== '1') rmSync(work, { recursive: true, force: true });
  else console.log(`kept ${work}`);
}
console.log(failures.length === 0 ? 'check-install: every check passed' : `check-install: ${failures.length} check(s) failed`);
process.exit(failures.length === 0 ? 0 : 1);

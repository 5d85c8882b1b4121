// npm run release: makes the tarball users install, in dist/, and checks it.
//
// 1. Builds every prebuilt binary (scripts/prebuild.js --all: each Node
//    major of scripts/node-targets.json, for x64 and, cross-compiled, arm64).
// 2. Packs (`npm pack`, whose prepack hook, scripts/check-prebuilds.js,
//    refuses a package without the full set) into dist/.
// 3. Checks the tarball: a binary for every major and CPU, each a 64-bit ELF
//    shared object for its CPU (scripts/prebuild-set.js); and, for this
//    machine's CPU, the packed loader loads the packed binary of each major
//    with that Node.
// 4. Prints the tarball's path, size and sha256, and writes the sha256 to
//    dist/<tarball>.sha256 (sha256sum's format).
//
// `npm run check:install` then installs exactly this tarball without a
// compiler; `npm publish dist/<tarball>` publishes it.
//
//   npm run release                   all of it (several minutes)
//   npm run release -- --skip-build   pack and check the prebuilds/ already built
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { nodeRuntime, nodeTargets } from './node-runtime.js';
import { checkTarball } from './prebuild-set.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { name, version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

/** Where the release tarball goes, and its name: what check-install.js installs by default. */
export const DIST = path.join(root, 'dist');
export const TARBALL = path.join(DIST, `${name}-${version}.tgz`);

function fail(message) {
  console.error(`arenacache release: ${message}`);
  process.exit(1);
}

function step(text) {
  console.log(`\n=== ${text} ===`);
}

/** Loads each packed binary of this machine's CPU with its own Node, through the packed loader. */
function loadCheck(tarball) {
  const problems = [];
  const dir = mkdtempSync(path.join(os.tmpdir(), 'arenacache-release-'));
  try {
    const extracted = spawnSync('tar', ['xzf', tarball, '-C', dir], { encoding: 'utf8' });
    if (extracted.status !== 0) return [`tar could not extract ${tarball}: ${extracted.stderr}`];
    const pkg = path.join(dir, 'package');
    // The packed loader needs node-gyp-build, a dependency: this checkout's.
    symlinkSync(path.join(root, 'node_modules'), path.join(pkg, 'node_modules'));
    const probe =
      `const n = await import(${JSON.stringify(new URL('lib/native/addon.js', `file://${pkg}/`).href)});` +
      'console.log(JSON.stringify({ available: n.nativeAvailable, binary: n.nativeBinary, reason: n.nativeUnavailableReason }));';
    for (const [major, release] of Object.entries(nodeTargets.majors)) {
      const runtime = nodeRuntime(release);
      const env = { ...process.env };
      delete env.ARENACACHE_NATIVE;
      const result = spawnSync(runtime.node, ['--input-type=module', '-e', probe], { encoding: 'utf8', env });
      let outcome;
      try {
        outcome = JSON.parse(result.stdout);
      } catch {
        problems.push(`Node ${release}: the loader did not run (${result.stderr.trim().split('\n').pop()})`);
        continue;
      }
      const expected = path.join(pkg, 'prebuilds', `linux-${process.arch}`);
      if (!outcome.available) problems.push(`Node ${release}: the packed binary does not load: ${outcome.reason}`);
      else if (path.dirname(outcome.binary) !== expected) problems.push(`Node ${release}: loaded ${outcome.binary}, not a prebuild`);
      else console.log(`ok   Node ${major} (${release}) on linux-${process.arch} loads ${path.relative(pkg, outcome.binary)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return problems;
}

function main() {
  const { values } = parseArgs({ options: { 'skip-build': { type: 'boolean' } } });
  const started = Date.now();

  if (!values['skip-build']) {
    step('prebuilt binaries for every Node major and CPU (scripts/prebuild.js --all)');
    const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'prebuild.js'), '--all'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) fail(`scripts/prebuild.js --all failed (exit ${built.status ?? built.error?.message})`);
  }

  step(`npm pack into ${path.relative(root, DIST)}/ (prepack refuses a package without every prebuild)`);
  mkdirSync(DIST, { recursive: true });
  rmSync(TARBALL, { force: true });
  const env = { ...process.env };
  // A release never takes the development escape.
  delete env.ARENACACHE_PACK_WITHOUT_PREBUILDS;
  const packed = spawnSync('npm', ['pack', '--pack-destination', DIST], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'], env });
  if (packed.status !== 0) fail(`npm pack failed (exit ${packed.status ?? packed.error?.message})`);
  try {
    statSync(TARBALL);
  } catch {
    fail(`npm pack did not write ${TARBALL}`);
  }

  step('the tarball carries a loadable binary for every target');
  const problems = checkTarball(TARBALL);
  for (const problem of problems) console.log(`FAIL ${problem}`);
  if (problems.length === 0) console.log(`ok   every prebuild of scripts/node-targets.json is in the tarball (${nodeTargets.arches.join(', ')} × Node ${Object.keys(nodeTargets.majors).join(', ')}), each an ELF shared object for its CPU`);
  const loadProblems = loadCheck(TARBALL);
  for (const problem of loadProblems) console.log(`FAIL ${problem}`);
  problems.push(...loadProblems);
  if (problems.length > 0) {
    rmSync(TARBALL, { force: true });
    fail(`the tarball is not a release (${problems.length} problem(s) above); it was removed`);
  }

  const bytes = readFileSync(TARBALL);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  writeFileSync(`${TARBALL}.sha256`, `${sha256}  ${path.basename(TARBALL)}\n`);
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' });
  step('release tarball');
  console.log(`${path.relative(root, TARBALL)}  (${(bytes.length / 2 ** 20).toFixed(1)} MiB, ${((Date.now() - started) / 1000).toFixed(0)} s)`);
  console.log(`sha256 ${sha256}  (also in ${path.relative(root, TARBALL)}.sha256)`);
  if (dirty.status === 0 && dirty.stdout.trim() !== '') console.log('note: the working tree has uncommitted changes to tracked files; they are in the tarball');
  console.log(`next: npm run check:install (installs this tarball without a compiler), then npm publish ${path.relative(root, TARBALL)}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();

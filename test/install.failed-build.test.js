// An install whose addon build fails (here: no python3, make or compiler on
// PATH, as in a slim Docker image) or is skipped stays an install of a
// working in-memory cache, and is not silent: the install script records
// why there is no addon (build/arenacache-install.json), the loader's
// ERR_NATIVE_UNAVAILABLE quotes that reason, and `arenacache doctor` reports
// it with exit code 3, so that a CI step or a Dockerfile's RUN line fails.
// ARENACACHE_REQUIRE_NATIVE=1 makes the install itself fail.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './helpers/fs-tree.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * A copy of the package as npm installs it (no prebuilds, no build/), its
 * node_modules linked, and a PATH that holds node and nothing else.
 */
function installedCopy(t) {
  const dir = tempDir(t, 'failed-build');
  const pkg = path.join(dir, 'arenacache');
  mkdirSync(pkg);
  for (const entry of ['lib', 'bin', 'scripts', 'src', 'binding.gyp', 'package.json']) cpSync(path.join(root, entry), path.join(pkg, entry), { recursive: true });
  symlinkSync(path.join(root, 'node_modules'), path.join(pkg, 'node_modules'));
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, path.join(bin, 'node'));
  const env = { PATH: bin, HOME: dir, TMPDIR: process.env.TMPDIR ?? '/tmp' };
  return { pkg, env };
}

function run(pkg, env, args) {
  const result = spawnSync(process.execPath, args, { cwd: pkg, env, encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, output: `${result.stdout}${result.stderr}` };
}

const recordOf = (pkg) => JSON.parse(readFileSync(path.join(pkg, 'build', 'arenacache-install.json'), 'utf8'));

// What a user's code meets afterwards: the memory cache, then a file-backed one.
const USE = `
import { SharedCache } from './lib/index.js';
const cache = new SharedCache({ memoryBytes: 1 << 20 });
cache.set('k', { n: 1 });
let open;
try { SharedCache.open('/nonexistent-dir/x.arena', { memoryBytes: 1 << 20 }); } catch (error) { open = { code: error.code, message: error.message }; }
console.log(JSON.stringify({ memory: cache.get('k'), open }));
`;

test('a failed build: the install succeeds, records why, the loader and `arenacache doctor` (exit 3) report it, the memory cache works', (t) => {
  const { pkg, env } = installedCopy(t);
  const install = run(pkg, env, ['scripts/install.js']);
  assert.equal(install.code, 0, install.output);
  assert.match(install.stderr, /could not be built \(node-gyp exited with status 1/);
  assert.match(install.stderr, /npx arenacache doctor/);

  const record = recordOf(pkg);
  assert.equal(record.outcome, 'failed');
  assert.equal(record.node, process.version);
  assert.equal(record.required, false);
  assert.match(record.reason, /^node-gyp exited with status 1/);
  // The line of node-gyp's output that says what is missing.
  assert.match(record.reason, /Python/);

  const used = run(pkg, env, ['--input-type=module', '-e', USE]);
  assert.equal(used.code, 0, used.output);
  const { memory, open } = JSON.parse(used.stdout);
  assert.deepEqual(memory, { n: 1 });
  assert.equal(open.code, 'ERR_NATIVE_UNAVAILABLE');
  assert.ok(open.message.includes(`the install script could not build it (${process.version}, `), open.message);
  assert.ok(open.message.includes(record.reason), open.message);

  const doctor = run(pkg, env, ['bin/arenacache.js', 'doctor']);
  assert.equal(doctor.code, 3, doctor.output);
  assert.equal(doctor.stderr, '');
  assert.match(doctor.stdout, /^native addon: unavailable$/m);
  assert.ok(doctor.stdout.includes(record.reason), doctor.stdout);
  assert.match(doctor.stdout, /apt-get install python3 make g\+\+/);
  assert.match(doctor.stdout, /npm rebuild arenacache/);
  assert.match(doctor.stdout, /in-memory SharedCache works/);

  const json = run(pkg, env, ['bin/arenacache.js', 'doctor', '--json']);
  assert.equal(json.code, 3, json.output);
  const report = JSON.parse(json.stdout);
  assert.equal(report.ok, false);
  assert.equal(report.native.available, false);
  assert.equal(report.native.binary, null);
  assert.ok(report.native.reason.includes(record.reason));
  assert.deepEqual(report.install, record);
});

test('ARENACACHE_REQUIRE_NATIVE=1: the same failed build fails the install, and the reason is recorded', (t) => {
  const { pkg, env } = installedCopy(t);
  const install = run(pkg, { ...env, ARENACACHE_REQUIRE_NATIVE: '1' }, ['scripts/install.js']);
  assert.equal(install.code, 1, install.output);
  assert.match(install.stderr, /could not be built/);
  assert.equal(recordOf(pkg).outcome, 'failed');
  assert.equal(recordOf(pkg).required, true);
});

test('a skipped build (ARENACACHE_SKIP_BUILD=1) is recorded and reported as skipped', (t) => {
  const { pkg, env } = installedCopy(t);
  const install = run(pkg, { ...env, ARENACACHE_SKIP_BUILD: '1' }, ['scripts/install.js']);
  assert.equal(install.code, 0, install.output);
  assert.equal(recordOf(pkg).outcome, 'skipped');
  const doctor = run(pkg, env, ['bin/arenacache.js', 'doctor']);
  assert.equal(doctor.code, 3, doctor.output);
  assert.match(doctor.stdout, /the install script did not build it \(.*ARENACACHE_SKIP_BUILD=1/);
});

test('an install script that never ran (npm 11 without approval, --ignore-scripts) is named as the reason', (t) => {
  const { pkg, env } = installedCopy(t);
  assert.equal(existsSync(path.join(pkg, 'build')), false);
  const doctor = run(pkg, env, ['bin/arenacache.js', 'doctor']);
  assert.equal(doctor.code, 3, doctor.output);
  assert.match(doctor.stdout, /the install script has not run here \(npm 11 runs it only when approved: npm install-scripts approve arenacache\)/);
});

// Stands in for npm: runs the install script with its output into pipes
// and throws that output away, as npm does with a script that succeeds.
const PACKAGE_MANAGER = `
const { spawnSync } = require('node:child_process');
const result = spawnSync(process.execPath, ['scripts/install.js'], { stdio: ['ignore', 'pipe', 'pipe'] });
process.exit(result.status);
`;

test("the warning reaches the package manager's own stderr (a CI log, docker build output), though it hides the script's output", (t) => {
  const { pkg, env } = installedCopy(t);
  // Named npm, as npm's process title is: the script writes only to a package manager's stderr.
  const npm = path.join(path.dirname(env.PATH), 'npm-stand-in', 'npm');
  mkdirSync(path.dirname(npm));
  writeFileSync(npm, PACKAGE_MANAGER);
  // Its stderr a pipe, as a CI runner's or docker build's is (Node's own
  // child "pipes" are sockets, which /proc cannot open: hence sh and cat).
  const shell = `"${process.execPath}" "${npm}" install 2>&1 >/dev/null | /bin/cat`;
  const piped = spawnSync('/bin/sh', ['-c', shell], { cwd: pkg, env, encoding: 'utf8', timeout: 120_000 });
  assert.equal(piped.status, 0, piped.stderr);
  assert.match(piped.stdout, /^arenacache: no prebuilt binary fits .* could not be built \(node-gyp exited with status 1/);
  assert.match(piped.stdout, /npx arenacache doctor/);
  // Into a regular file, npm's next write would overwrite the text (it has its own offset): left alone.
  const log = path.join(path.dirname(pkg), 'install.log');
  const fd = openSync(log, 'w');
  try {
    const filed = spawnSync(process.execPath, [npm, 'install'], { cwd: pkg, env, stdio: ['ignore', 'ignore', fd], timeout: 120_000 });
    assert.equal(filed.status, 0);
  } finally {
    closeSync(fd);
  }
  assert.equal(readFileSync(log, 'utf8'), '');
  assert.equal(recordOf(pkg).outcome, 'failed');
});

// `arenacache doctor`: whether the native addon loads here, which binary,
// and when it does not, why and how to fix it; exit code 0 when it loads,
// 3 when it does not, 2 on a usage error; --json for scripts; listed in the
// main --help. (A failed build in an installed copy: install.failed-build.test.js.)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nativeAvailable, nativeBinary } from '../lib/native/addon.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = path.join(root, 'bin/arenacache.js');

function cli(args, extraEnv = {}) {
  const env = { ...process.env, ...extraEnv };
  if (!('ARENACACHE_NATIVE' in extraEnv)) delete env.ARENACACHE_NATIVE;
  const result = spawnSync(process.execPath, [bin, ...args], { cwd: root, env, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('doctor with the addon loaded: exit 0, the binary, this Node and platform', { skip: !nativeAvailable && 'native addon unavailable' }, () => {
  const result = cli(['doctor']);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  assert.match(result.stdout, new RegExp(`^arenacache \\S+ on Node ${process.version} \\(ABI ${process.versions.modules}\\), ${process.platform}-${process.arch}$`, 'm'));
  assert.ok(result.stdout.includes(`native addon: loaded from ${nativeBinary}`), result.stdout);

  const json = cli(['doctor', '--json']);
  assert.equal(json.code, 0);
  const report = JSON.parse(json.stdout);
  assert.equal(report.ok, true);
  assert.deepEqual(report.native, { available: true, binary: nativeBinary, reason: null });
  assert.deepEqual(report.node, { version: process.version, abi: process.versions.modules, platform: process.platform, arch: process.arch });
});

test('doctor with the addon disabled (ARENACACHE_NATIVE=off): exit 3, the reason and what still works', () => {
  const result = cli(['doctor'], { ARENACACHE_NATIVE: 'off' });
  assert.equal(result.code, 3);
  assert.match(result.stdout, /^native addon: unavailable$/m);
  assert.match(result.stdout, /disabled by the environment variable ARENACACHE_NATIVE=off/);
  assert.match(result.stdout, /in-memory SharedCache works/);
  const json = JSON.parse(cli(['doctor', '--json'], { ARENACACHE_NATIVE: 'off' }).stdout);
  assert.equal(json.ok, false);
  assert.equal(json.native.available, false);
});

test('doctor --help prints the usage and the exit codes (exit 0); the main help lists doctor', () => {
  const help = cli(['doctor', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: arenacache doctor \[--json\]$/m);
  assert.match(help.stdout, /Exit codes: 0 the addon loads, 2 usage error, 3 the addon is unavailable/);
  const main = cli(['--help']);
  assert.match(main.stdout, /^ {2}doctor +Say whether the native addon loads here/m);
});

test('doctor usage errors exit 2 with one line on stderr', () => {
  const extra = cli(['doctor', 'now']);
  assert.equal(extra.code, 2);
  assert.equal(extra.stdout, '');
  assert.equal(extra.stderr, 'arenacache: doctor takes 0 argument(s), got 1; usage: arenacache doctor [--json]\n');
  const unknown = cli(['doctor', '--fix']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^arenacache: Unknown option '--fix'.*; run arenacache doctor --help\n$/);
  const json = cli(['doctor', '--fix', '--json']);
  assert.equal(json.code, 2);
  assert.equal(JSON.parse(json.stdout).error.code, 'ERR_USAGE');
});

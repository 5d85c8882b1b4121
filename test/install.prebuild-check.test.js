// A release tarball carries a prebuilt binary for every Node major and CPU
// in scripts/node-targets.json: `npm pack` (its prepack hook,
// scripts/check-prebuilds.js) refuses to pack without the full set, naming
// each missing, foreign or stale binary and how to build it, unless
// ARENACACHE_PACK_WITHOUT_PREBUILDS=1 says the pack is for development; and
// the tarball check of `npm run release` (checkTarball) finds the same in a
// packed tarball. The binaries here are ELF headers only: what is checked is
// the set and the headers, not the build.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkTarball, expectedPrebuilds } from '../scripts/prebuild-set.js';
import { tempDir } from './helpers/fs-tree.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const ELF_MACHINE = { x64: 62, arm64: 183 };

/** The first 64 bytes of a 64-bit little-endian ELF shared object for `arch`. */
function elfHeader(arch) {
  const header = Buffer.alloc(64);
  header.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1]);
  header.writeUInt16LE(3, 16); // ET_DYN
  header.writeUInt16LE(ELF_MACHINE[arch], 18);
  return header;
}

/** A copy of what packing needs (package.json, scripts/, the C++ sources), node_modules linked. */
function packageCopy(t) {
  const dir = tempDir(t, 'prebuild-check');
  const pkg = path.join(dir, 'arenacache');
  mkdirSync(pkg);
  for (const entry of ['scripts', 'src', 'binding.gyp', 'package.json', 'README.md', 'LICENSE']) cpSync(path.join(root, entry), path.join(pkg, entry), { recursive: true });
  symlinkSync(path.join(root, 'node_modules'), path.join(pkg, 'node_modules'));
  const out = path.join(dir, 'out');
  mkdirSync(out);
  return { pkg, out };
}

function writePrebuild(pkg, target, arch = target.arch) {
  mkdirSync(path.dirname(path.join(pkg, target.path)), { recursive: true });
  writeFileSync(path.join(pkg, target.path), elfHeader(arch));
}

function pack(pkg, out, extraEnv = {}) {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, ...extraEnv };
  const result = spawnSync('npm', ['pack', '--pack-destination', out, '--ignore-scripts=false'], { cwd: pkg, env, encoding: 'utf8' });
  const tarballs = readdirSync(out).filter((name) => name.endsWith('.tgz'));
  return { code: result.status, output: `${result.stdout}${result.stderr}`, tarball: tarballs.length === 1 ? path.join(out, tarballs[0]) : null };
}

const targets = expectedPrebuilds();

test('the expected set is every major and arch of scripts/node-targets.json, named as prebuildify names them', () => {
  assert.deepEqual(
    targets.map((target) => target.path),
    [
      'prebuilds/linux-x64/arenacache.abi115.glibc.node',
      'prebuilds/linux-x64/arenacache.abi127.glibc.node',
      'prebuilds/linux-x64/arenacache.abi137.glibc.node',
      'prebuilds/linux-arm64/arenacache.abi115.glibc.node',
      'prebuilds/linux-arm64/arenacache.abi127.glibc.node',
      'prebuilds/linux-arm64/arenacache.abi137.glibc.node',
    ],
  );
});

test('npm pack without prebuilds is refused, naming every missing binary and the command that builds them', (t) => {
  const { pkg, out } = packageCopy(t);
  const result = pack(pkg, out);
  assert.notEqual(result.code, 0, result.output);
  assert.equal(result.tarball, null);
  for (const target of targets) assert.ok(result.output.includes(`${target.path}: missing (Node ${target.major}, linux-${target.arch})`), result.output);
  assert.match(result.output, /npm run release/);
  assert.match(result.output, /npm run prebuilds -- --all/);
  assert.match(result.output, /ARENACACHE_PACK_WITHOUT_PREBUILDS=1/);
});

test('npm pack with a partial set, or a binary for the wrong CPU, names exactly those', (t) => {
  const { pkg, out } = packageCopy(t);
  for (const target of targets) if (target.arch === 'x64') writePrebuild(pkg, target);
  const [wrong] = targets.filter((target) => target.arch === 'arm64');
  writePrebuild(pkg, wrong, 'x64');
  const result = pack(pkg, out);
  assert.notEqual(result.code, 0, result.output);
  const named = targets.filter((target) => result.output.includes(target.path));
  assert.deepEqual(named.map((target) => target.path), targets.filter((target) => target.arch === 'arm64').map((target) => target.path));
  assert.ok(result.output.includes(`${wrong.path}: an ELF binary for x86-64, not arm64`), result.output);
});

test('npm pack refuses prebuilds older than the C++ sources they were built from', (t) => {
  const { pkg, out } = packageCopy(t);
  for (const target of targets) writePrebuild(pkg, target);
  const source = path.join(pkg, 'src', 'native', readdirSync(path.join(pkg, 'src', 'native')).find((name) => name.endsWith('.cc')));
  const later = new Date(Date.now() + 60_000);
  utimesSync(source, later, later);
  const result = pack(pkg, out);
  assert.notEqual(result.code, 0, result.output);
  assert.match(result.output, /older than src\/native\/\S+\.cc/);
});

test('the full set packs, and checkTarball finds every binary in the tarball', (t) => {
  const { pkg, out } = packageCopy(t);
  for (const target of targets) writePrebuild(pkg, target);
  const result = pack(pkg, out);
  assert.equal(result.code, 0, result.output);
  assert.deepEqual(checkTarball(result.tarball), []);
});

test('ARENACACHE_PACK_WITHOUT_PREBUILDS=1 packs for development, saying so; checkTarball lists what it lacks', (t) => {
  const { pkg, out } = packageCopy(t);
  const result = pack(pkg, out, { ARENACACHE_PACK_WITHOUT_PREBUILDS: '1' });
  assert.equal(result.code, 0, result.output);
  assert.match(result.output, /ARENACACHE_PACK_WITHOUT_PREBUILDS=1: packing without 6 of 6 prebuilt binaries \(not a release\)/);
  const problems = checkTarball(result.tarball);
  assert.deepEqual(problems, targets.map((target) => `${target.path}: missing (Node ${target.major}, linux-${target.arch})`));
});

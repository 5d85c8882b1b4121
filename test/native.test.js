// The native addon: it builds and loads (or the package says why not), judges
// thread and process liveness, checks its arguments before C++, lets the
// cache work without it, and the loader prefers a loadable prebuilt binary
// to the local build.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { nativeAvailable, nativeBinary, nativeUnavailableReason, requireNative } from '../lib/native/addon.js';
import { currentThreadId, isProcessAlive, isThreadAlive } from '../lib/native/thread-identity.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** A copy of the package's JavaScript in `copy` (node_modules linked), without any binary. */
function copyPackage(copy) {
  cpSync(path.join(root, 'lib'), path.join(copy, 'lib'), { recursive: true });
  cpSync(path.join(root, 'package.json'), path.join(copy, 'package.json'));
  symlinkSync(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
}

/** What the loader (lib/native/addon.js) concludes when loaded from the package at `copy`. */
function loadIn(copy) {
  const child = fileURLToPath(new URL('./fixtures/loader-child.js', import.meta.url));
  const env = { ...process.env };
  delete env.ARENACACHE_NATIVE;
  return JSON.parse(execFileSync(process.execPath, [child, copy], { env, encoding: 'utf8' }));
}

test('the native addon is built and loads (set ARENACACHE_NATIVE=off to run without it)', () => {
  if (process.env.ARENACACHE_NATIVE === 'off') return;
  assert.equal(nativeAvailable, true, `the addon did not load: ${nativeUnavailableReason}`);
  assert.equal(nativeUnavailableReason, null);
  assert.equal(typeof requireNative('test'), 'object');
});

test('thread identity: our own thread is alive, an exited worker is not', { skip: !nativeAvailable && 'native addon unavailable' }, async () => {
  const tid = currentThreadId();
  assert.ok(Number.isInteger(tid) && tid > 0);
  assert.equal(isThreadAlive(process.pid, tid), true);
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
     setInterval(() => {}, 1000); // stay alive until terminated
     import(${JSON.stringify(new URL('../lib/native/thread-identity.js', import.meta.url).href)}).then((native) => parentPort.postMessage(native.currentThreadId()));`,
    { eval: true },
  );
  const [workerTid] = await once(worker, 'message');
  assert.notEqual(workerTid, tid);
  assert.equal(isThreadAlive(process.pid, workerTid), true);
  await worker.terminate();
  // The OS thread goes away shortly after terminate() resolves.
  let alive = true;
  for (let i = 0; i < 200 && alive; i++) {
    alive = isThreadAlive(process.pid, workerTid);
    if (alive) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.equal(alive, false);
});

test('process liveness', () => {
  assert.equal(isProcessAlive(process.pid), true);
  assert.equal(isProcessAlive(1), true);
  assert.equal(isProcessAlive(2 ** 31 - 1), false);
});

test('liveness arguments are checked before reaching C++', () => {
  assert.throws(() => isThreadAlive('1', 1), { name: 'TypeError', message: 'pid must be a number (got "1")' });
  assert.throws(() => isThreadAlive(1, -2), { name: 'RangeError', message: 'tid must be a positive 32-bit integer (got -2)' });
  assert.throws(() => isProcessAlive(1.5), { name: 'RangeError', message: 'pid must be a positive 32-bit integer (got 1.5)' });
  assert.throws(() => isProcessAlive(2 ** 31), { name: 'RangeError', message: 'pid must be a positive 32-bit integer (got 2147483648)' });
});

test('without the addon the cache works and native features say why they are unavailable', () => {
  const child = fileURLToPath(new URL('./fixtures/native-off-child.js', import.meta.url));
  const output = execFileSync(process.execPath, [child], { env: { ...process.env, ARENACACHE_NATIVE: 'off' }, encoding: 'utf8' });
  const result = JSON.parse(output);
  assert.equal(result.nativeAvailable, false);
  assert.equal(result.nativeUnavailableReason, 'disabled by the environment variable ARENACACHE_NATIVE=off');
  assert.deepEqual(result.value, { works: true });
  assert.equal(result.tid, 0);
  assert.equal(result.alive, null);
  assert.deepEqual(result.error, {
    name: 'ArenaCacheError',
    code: 'ERR_NATIVE_UNAVAILABLE',
    message:
      'SharedCache.open() needs the arenacache native addon, which is unavailable: disabled by the environment variable ARENACACHE_NATIVE=off',
  });
  assert.equal(result.fileCreated, false, 'open() without the addon leaves no file behind');
  assert.deepEqual(result.fsError, {
    name: 'ArenaCacheError',
    code: 'ERR_NATIVE_UNAVAILABLE',
    message:
      'CacheFS over a directory (it resolves every path beneath the root on descriptors) needs the arenacache native addon, which is unavailable: disabled by the environment variable ARENACACHE_NATIVE=off',
  });
});

// A local build in the copy, made of the binary this process loaded (a
// prebuild after `npm run prebuilds`, otherwise build/Release).
function localBuildFrom(binary, copy) {
  mkdirSync(path.join(copy, 'build', 'Release'), { recursive: true });
  cpSync(binary, path.join(copy, 'build', 'Release', 'arenacache.node'));
}

test('a package without a prebuilt binary or a local build explains why the addon is missing', () => {
  const copy = mkdtempSync(path.join(os.tmpdir(), 'arenacache-loader-'));
  try {
    copyPackage(copy);
    const result = loadIn(copy);
    assert.equal(result.available, false);
    assert.match(
      result.reason,
      new RegExp(
        `^no prebuilt binary for ${process.platform}-${process.arch} \\(Node ABI ${process.versions.modules}\\) in prebuilds/ ` +
          'and no local build in build/Release; the install script has not run here \\(npm 11 runs it only when approved: ' +
          'npm install-scripts approve arenacache\\); run "npm rebuild arenacache", which needs python3, make and a C\\+\\+ compiler$',
      ),
    );
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});

test('the loader prefers a prebuilt binary for this Node ABI to the local build', { skip: !nativeAvailable && 'native addon unavailable' }, () => {
  const copy = mkdtempSync(path.join(os.tmpdir(), 'arenacache-prebuild-'));
  try {
    copyPackage(copy);
    // What `npm run prebuilds` writes (here a copy of the binary this process loaded, to keep the test fast).
    const folder = path.join(copy, 'prebuilds', `${process.platform}-${process.arch}`);
    const prebuilt = path.join(folder, `arenacache.abi${process.versions.modules}.node`);
    cpSync(nativeBinary, prebuilt);
    // A prebuild for another Node ABI is passed over.
    cpSync(nativeBinary, path.join(folder, 'arenacache.abi1.node'));
    localBuildFrom(nativeBinary, copy);
    const result = loadIn(copy);
    assert.equal(result.available, true, result.reason);
    assert.equal(result.binary, prebuilt);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});

test('a prebuild that does not load is reported, and the local build is used instead', { skip: !nativeAvailable && 'native addon unavailable' }, () => {
  const copy = mkdtempSync(path.join(os.tmpdir(), 'arenacache-bad-prebuild-'));
  try {
    copyPackage(copy);
    const folder = path.join(copy, 'prebuilds', `${process.platform}-${process.arch}`);
    mkdirSync(folder, { recursive: true });
    const broken = path.join(folder, `arenacache.abi${process.versions.modules}.node`);
    writeFileSync(broken, 'not a shared object');
    const withoutBuild = loadIn(copy);
    assert.equal(withoutBuild.available, false);
    assert.ok(withoutBuild.reason.startsWith(`${broken} did not load (`), withoutBuild.reason);
    localBuildFrom(nativeBinary, copy);
    const withBuild = loadIn(copy);
    assert.equal(withBuild.available, true);
    assert.equal(withBuild.binary, path.join(copy, 'build', 'Release', 'arenacache.node'));
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
});

// lib/native.js loadFile(): a whole file and its stats before and after, in
// one trip to the thread pool, with the data, stats and errors node:fs gives.
// CacheFS falls back to node:fs/promises without the addon.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'node:test';
import { loadFile, nativeAvailable } from '../lib/native.js';
import { tempDir } from './helpers/fs-tree.js';

const skip = nativeAvailable ? false : 'the native addon is not loaded (ARENACACHE_NATIVE=off or not built)';
const FIELDS = ['dev', 'ino', 'mode', 'nlink', 'uid', 'gid', 'rdev', 'size', 'blksize', 'blocks', 'atimeMs', 'mtimeMs', 'ctimeMs', 'birthtimeMs'];

/** The error node:fs/promises rejects with, as a plain object. */
async function fsError(promise) {
  try {
    await promise;
  } catch (error) {
    return { message: error.message, code: error.code, errno: error.errno, syscall: error.syscall, path: error.path };
  }
  throw new Error('expected a rejection');
}

test('loadFile returns the bytes and the stats node:fs gives', { skip }, async (t) => {
  const root = tempDir(t);
  const sizes = { empty: 0, small: 100, large: 300 * 1024 };
  for (const [name, size] of Object.entries(sizes)) {
    const file = path.join(root, name);
    fs.writeFileSync(file, Buffer.alloc(size, name.charCodeAt(0)));
    const { before, data, after } = await loadFile(file);
    assert.deepEqual(data, fs.readFileSync(file), name);
    assert.ok(Buffer.isBuffer(data));
    const stats = fs.statSync(file);
    for (const field of FIELDS) assert.equal(after[field], stats[field], `${name} after.${field}`);
    for (const field of FIELDS.filter((f) => f !== 'atimeMs')) assert.equal(before[field], stats[field], `${name} before.${field}`);
  }
});

test('loadFile reads files whose size stat does not know (procfs)', { skip }, async () => {
  const { data } = await loadFile('/proc/self/status');
  assert.match(data.toString(), /^Name:/);
});

test('loadFile fails as node:fs does: missing file, directory, permission', { skip }, async (t) => {
  const root = tempDir(t);
  const missing = path.join(root, 'missing');
  assert.deepEqual(await fsError(loadFile(missing)), await fsError(fsp.readFile(missing)));
  assert.deepEqual(await fsError(loadFile(root)), await fsError(fsp.readFile(root)));
  assert.deepEqual(await fsError(loadFile(path.join(root, 'missing', 'x'))), await fsError(fsp.readFile(path.join(root, 'missing', 'x'))));
  const file = path.join(root, 'file');
  fs.writeFileSync(file, 'x');
  assert.deepEqual(await fsError(loadFile(path.join(file, 'below'))), await fsError(fsp.readFile(path.join(file, 'below'))));
  const error = await fsError(loadFile(missing));
  assert.equal(error.message, `ENOENT: no such file or directory, open '${missing}'`);
  assert.equal(error.errno, -2);
});

test('loadFile checks its argument', { skip }, () => {
  assert.throws(() => loadFile(42), { name: 'TypeError', message: 'path must be a string (got 42)' });
  assert.throws(() => loadFile('/tmp/a\0b'), { name: 'RangeError', message: 'path must not contain NUL characters (got "/tmp/a\\u0000b")' });
});

test('without the addon CacheFS reads through node:fs/promises', async () => {
  const child = fileURLToPath(new URL('./helpers/fs-native-off-child.js', import.meta.url));
  const output = execFileSync(process.execPath, [child], { env: { ...process.env, ARENACACHE_NATIVE: 'off' }, encoding: 'utf8' });
  assert.deepEqual(JSON.parse(output), { nativeAvailable: false, text: 'from disk', again: 'from disk', missing: 'ENOENT', readMisses: 2, readHits: 1 });
});

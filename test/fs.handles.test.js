// CacheFS#open: handles shaped like node:fs FileHandle, reads served from the
// cache when it holds the descriptor's very file version, and their errors.
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { untilCacheable } from './helpers/racy.js';

function setup(t, options) {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'f.txt'), 'abcdefghij');
  return { root, cfs: new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * 2 ** 20 }), ...options }) };
}

test('reads at positions come from the cache once the file is cached; writes and truncation reach disk and cache', async (t) => {
  const { root, cfs } = setup(t);
  await untilCacheable(root);
  await cfs.readFile('f.txt');
  const handle = await cfs.open('f.txt', 'r+');
  assert.ok(Number.isInteger(handle.fd));
  const buffer = Buffer.alloc(4);
  const read = await handle.read(buffer, 0, 4, 3);
  assert.equal(read.bytesRead, 4);
  assert.equal(read.buffer, buffer);
  assert.equal(Object.getPrototypeOf(read), null, 'shaped like node:fs FileHandle#read results');
  assert.equal(buffer.toString(), 'defg');
  assert.equal((await handle.read(buffer, 0, 4, 8)).bytesRead, 2, 'a read past the end is short');
  assert.equal((await handle.read(buffer, 0, 4, 50)).bytesRead, 0);
  assert.equal((await handle.write(Buffer.from('XY'), 0, 2, 1)).bytesWritten, 2);
  assert.equal(await cfs.readFile('f.txt', 'utf8'), 'aXYdefghij');
  await handle.truncate(4);
  assert.equal(await cfs.readFile('f.txt', 'utf8'), 'aXYd');
  assert.equal((await handle.stat()).size, 4);
  await handle.close();
  await handle.close();
  assert.equal(cfs.stats().handleReadHits, 3, 'the three reads before the write came from the cache');
});

test('a handle keeps its file when the path is renamed and replaced, as node:fs does', async (t) => {
  const { root, cfs } = setup(t, { validateMs: 60_000 });
  const handle = await cfs.open('f.txt', 'r+');
  renameSync(path.join(root, 'f.txt'), path.join(root, 'moved.txt'));
  writeFileSync(path.join(root, 'f.txt'), 'another file');
  await handle.write(Buffer.from('ZZ'), 0, 2, 0);
  const buffer = Buffer.alloc(10);
  await handle.read(buffer, 0, 10, 0);
  assert.equal(buffer.toString(), 'ZZcdefghij');
  assert.equal(await cfs.readFile('f.txt', 'utf8'), 'another file');
  assert.equal(await cfs.readFile('moved.txt', 'utf8'), 'ZZcdefghij');
  await handle.close();
});

test('write-only handles fail reads and read-only handles fail writes as node:fs does', async (t) => {
  const { cfs } = setup(t);
  await cfs.readFile('f.txt');
  const writeOnly = await cfs.open('f.txt', 'a');
  await assert.rejects(writeOnly.read(Buffer.alloc(2), 0, 2, 0), { code: 'EBADF' });
  await writeOnly.close();
  const readOnly = await cfs.open('f.txt');
  await assert.rejects(readOnly.write(Buffer.from('x'), 0, 1, 0), { code: 'EBADF' });
  await readOnly.close();
  await assert.rejects(cfs.open('missing.txt'), { code: 'ENOENT' });
  await assert.rejects(cfs.open('f.txt', 'wx'), { code: 'EEXIST' });
});

test('handle argument errors and closed handles are specific errors', async (t) => {
  const { cfs } = setup(t);
  await assert.rejects(cfs.open('f.txt', 1), { name: 'TypeError', message: "flags must be a string such as 'r' or 'w+' (got 1)" });
  await assert.rejects(cfs.open('f.txt', 'r', -1), { name: 'RangeError', message: 'mode must be a file mode from 0 to 0o7777 (got -1)' });
  await assert.rejects(cfs.open('../f.txt'), { code: 'ERR_PATH_OUTSIDE_ROOT' });
  const handle = await cfs.open('f.txt', 'r+');
  await assert.rejects(handle.read('nope', 0, 1, 0), { name: 'TypeError', message: 'buffer must be a Buffer or Uint8Array (got "nope")' });
  await assert.rejects(handle.read(Buffer.alloc(4), -1, 1, 0), { name: 'RangeError', message: 'offset must be an integer from 0 to 4 (got -1)' });
  await assert.rejects(handle.read(Buffer.alloc(4), 2, 3, 0), { name: 'RangeError', message: 'length must be an integer from 0 to 2 (got 3)' });
  await assert.rejects(handle.write(Buffer.alloc(4), 0, 4, -5), { name: 'RangeError', message: /^position must be an integer from 0 to 9007199254740991 \(got -5\)$/ });
  await assert.rejects(handle.truncate(-1), { name: 'RangeError', message: /^length must be an integer from 0 to/ });
  await handle.close();
  // As on node:fs's FileHandle: -1 once closed (reading it used to throw a TypeError).
  assert.equal(handle.fd, -1);
  for (const call of [() => handle.read(Buffer.alloc(1), 0, 1, 0), () => handle.write(Buffer.alloc(1)), () => handle.truncate(), () => handle.stat()]) {
    await assert.rejects(call(), { name: 'ArenaCacheError', code: 'ERR_HANDLE_CLOSED', message: 'the file handle of "f.txt" is closed' });
  }
});

// InodeFS file handles: reads and writes at offsets (across chunk
// boundaries of large files), truncate, the open flags, and their errors.
import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';
import { seededRandom, testSeed } from './helpers/seeded-random.js';

/** Small inline and chunk limits: a few KiB of contents already spans several chunks. */
const SMALL = { inlineBytes: 64, chunkBytes: 4096 };

test('writes at offsets, reads at offsets and at the position, truncate: the same bytes as a Buffer model', async (t) => {
  const ifs = await openFs(t, SMALL);
  const seed = testSeed();
  const random = seededRandom(seed);
  const handle = await ifs.open('/data', 'w+');
  let model = Buffer.alloc(0);
  for (let step = 0; step < 150; step++) {
    if (random() < 0.15) {
      const length = random.int(30_000);
      await handle.truncate(length);
      const next = Buffer.alloc(length);
      model.copy(next, 0, 0, Math.min(length, model.length));
      model = next;
    } else {
      const bytes = Buffer.alloc(1 + random.int(9000), random.int(256));
      const at = random.int(model.length + 3000);
      const { bytesWritten } = await handle.write(bytes, 0, bytes.length, at);
      assert.equal(bytesWritten, bytes.length);
      const next = Buffer.alloc(Math.max(model.length, at + bytes.length));
      model.copy(next);
      bytes.copy(next, at);
      model = next;
    }
    const at = random.int(model.length + 10);
    const into = Buffer.alloc(random.int(10_000));
    const { bytesRead } = await handle.read(into, 0, into.length, at);
    assert.equal(bytesRead, Math.max(0, Math.min(into.length, model.length - at)), `SEED=${seed}`);
    assert.deepEqual(into.subarray(0, bytesRead), model.subarray(at, at + bytesRead), `SEED=${seed}`);
  }
  assert.deepEqual(await ifs.readFile('/data'), model);
  assert.equal((await handle.stat()).size, model.length);
  await handle.close();
  assert.equal(ifs.fsck().ok, true);
});

test('the position advances with reads and writes; append always appends; readFile reads it all', async (t) => {
  const ifs = await openFs(t, SMALL);
  const handle = await ifs.open('/log', 'a+');
  await handle.write(Buffer.from('one '));
  await handle.write(Buffer.from('two '), 0, 4, 0); // appends anyway, as O_APPEND does
  assert.equal(await ifs.readFile('/log', 'utf8'), 'one two ');
  const reader = await ifs.open('/log');
  const buffer = Buffer.alloc(4);
  assert.equal((await reader.read(buffer, 0, 4, null)).bytesRead, 4);
  assert.equal(buffer.toString(), 'one ');
  assert.equal((await reader.read(buffer, 0, 4)).bytesRead, 4);
  assert.equal(buffer.toString(), 'two ');
  assert.equal((await reader.read(buffer, 0, 4)).bytesRead, 0);
  assert.equal((await reader.readFile()).toString(), 'one two ');
  const writer = await ifs.open('/log', 'r+');
  await writer.write(Buffer.from('ONE'));
  await writer.write(Buffer.from('!'));
  assert.equal(await ifs.readFile('/log', 'utf8'), 'ONE!two ');
});

test('open flags: create, exclusive, truncate, missing files, directories, and bad flags', async (t) => {
  const ifs = await openFs(t, SMALL);
  await ifs.writeFile('/f', 'content');
  await ifs.mkdir('/dir');
  await assert.rejects(ifs.open('/missing'), { code: 'ENOENT', message: "ENOENT: no such file or directory, open '/missing'" });
  await assert.rejects(ifs.open('/missing', 'r+'), { code: 'ENOENT' });
  await assert.rejects(ifs.open('/f', 'wx'), { code: 'EEXIST', message: "EEXIST: file already exists, open '/f'" });
  await assert.rejects(ifs.open('/dir', 'r+'), { code: 'EISDIR', message: "EISDIR: illegal operation on a directory, open '/dir'" });
  await assert.rejects(ifs.open('/dir', 'w'), { code: 'EISDIR' });
  const dir = await ifs.open('/dir');
  await assert.rejects(dir.read(Buffer.alloc(1), 0, 1, 0), { code: 'EISDIR', message: "EISDIR: illegal operation on a directory, read '/dir'" });
  await (await ifs.open('/created', 'wx', 0o600)).close();
  assert.equal((await ifs.stat('/created')).mode & 0o777, 0o600);
  await (await ifs.open('/f', 'w')).close();
  assert.equal((await ifs.stat('/f')).size, 0);
  await assert.rejects(ifs.open('/f', 'rw'), { name: 'RangeError', message: 'flags must be one of r, r+, rs+, w, wx, w+, wx+, a, ax, a+, ax+ (got "rw")' });
  await assert.rejects(ifs.open('/f', 'rx'), { name: 'RangeError' });
  await assert.rejects(ifs.open('/f', 4), { name: 'TypeError', message: "flags must be a string such as 'r' or 'w+' (got 4)" });
  await assert.rejects(ifs.open('/f', 'w', 0o10000), { name: 'RangeError', message: 'mode must be a file mode from 0 to 0o7777 (got 4096)' });
});

test('a handle follows its file across renames, keeps a removed file until closed, and checks its arguments', async (t) => {
  const ifs = await openFs(t, SMALL);
  await ifs.writeFile('/a', 'abc');
  const handle = await ifs.open('/a', 'r+');
  await ifs.rename('/a', '/b');
  await handle.write(Buffer.from('X'), 0, 1, 0);
  assert.equal(await ifs.readFile('/b', 'utf8'), 'Xbc');
  const readOnly = await ifs.open('/b');
  await assert.rejects(readOnly.write(Buffer.from('x')), { code: 'EBADF', message: "EBADF: bad file descriptor, write '/b'" });
  await assert.rejects(readOnly.truncate(0), { code: 'EINVAL', message: "EINVAL: invalid argument, ftruncate '/b'" });
  const writeOnly = await ifs.open('/b', 'a');
  await assert.rejects(writeOnly.read(Buffer.alloc(1), 0, 1, 0), { code: 'EBADF', message: "EBADF: bad file descriptor, read '/b'" });
  await assert.rejects(handle.read('no', 0, 1, 0), { name: 'TypeError', message: 'buffer must be a Buffer or Uint8Array (got "no")' });
  await assert.rejects(handle.read(Buffer.alloc(2), 0, 3, 0), { name: 'RangeError' });
  await assert.rejects(handle.truncate(-1), { name: 'RangeError', message: 'length must be an integer from 0 to 9007199254740991 (got -1)' });
  await readOnly.close();
  await writeOnly.close();
  await ifs.unlink('/b');
  await assert.rejects(ifs.stat('/b'), { code: 'ENOENT' });
  // Removed, but open: it lives on, nameless, as on POSIX.
  await handle.write(Buffer.from('Y'), 0, 1, 1);
  const buffer = Buffer.alloc(3);
  await handle.read(buffer, 0, 3, 0);
  assert.equal(buffer.toString(), 'XYc');
  assert.equal((await handle.stat()).nlink, 0);
  assert.equal(ifs.fsck().ok, true);
  const { ino } = await handle.stat();
  await handle.close();
  await handle.close();
  // The last handle closed: the file is gone.
  assert.equal(ifs.fsck().checked.inodes, 1);
  assert.ok(ino > 1);
  await assert.rejects(handle.stat(), { code: 'ERR_HANDLE_CLOSED', message: 'the file handle of "/a" is closed' });
});

test('a handle of a directory removed while open (with its parent) keeps it: fstat works, reads fail with EISDIR, as node:fs', async (t) => {
  // SEED=1160420292 of fs.differential: open('d1/a', 'r') of a directory,
  // rm('d1', { recursive: true }), then a read on the handle: node:fs says
  // EISDIR; the InodeFS had dropped the directory (ENOENT).
  const ifs = await openFs(t, SMALL);
  const cache = new SharedCache({ memoryBytes: 2 ** 21 });
  t.after(() => cache.close());
  const cached = new CacheFS({ root: ifs, cache, validateMs: 0 });
  t.after(() => cached.close());
  for (const [name, fs, at] of [['InodeFS', ifs, '/'], ['CacheFS over the InodeFS', cached, '']]) {
    await ifs.mkdir('/d1/a', { recursive: true });
    const handle = await fs.open(`${at}d1/a`, 'r');
    await fs.rm(`${at}d1`, { recursive: true });
    await assert.rejects(ifs.stat('/d1/a'), { code: 'ENOENT' });
    const stats = await handle.stat();
    assert.equal(stats.isDirectory(), true, name);
    assert.equal(stats.nlink, 0, name);
    await assert.rejects(handle.read(Buffer.alloc(10), 0, 10, 0), { code: 'EISDIR' }, name);
    await assert.rejects(handle.read(Buffer.alloc(10), 0, 10, null), { code: 'EISDIR' }, name);
    // A read of nothing is no read(2) in node:fs: no error, on a directory or a write-only handle.
    assert.equal((await handle.read(Buffer.alloc(0), 0, 0, 0)).bytesRead, 0, name);
    await assert.rejects(handle.write(Buffer.from('x'), 0, 1, 0), { code: 'EBADF' }, name);
    await assert.rejects(handle.truncate(1), { code: 'EINVAL' }, name);
    assert.equal(ifs.fsck().ok, true, JSON.stringify(ifs.fsck().problems));
    await handle.close();
    // The last handle closed: the directory is gone, only the root is left.
    assert.equal(ifs.fsck().ok, true);
    assert.equal(ifs.fsck().checked.inodes, 1, name);
  }
  const writeOnly = await ifs.open('/w', 'w');
  assert.equal((await writeOnly.read(Buffer.alloc(4), 0, 0, null)).bytesRead, 0);
  await writeOnly.close();
});

test('a snapshot opens files read-only, and its handles see the snapshot', async (t) => {
  const ifs = await openFs(t, SMALL);
  await ifs.writeFile('/f', Buffer.alloc(10_000, 1));
  for (const persist of [false, true]) {
    const snap = ifs.createSnapshot(`s-${persist}`, { persist });
    await ifs.writeFile('/f', 'changed');
    const handle = await snap.open('/f');
    const buffer = Buffer.alloc(5000);
    assert.equal((await handle.read(buffer, 0, 5000, 6000)).bytesRead, 4000);
    assert.equal(buffer[0], 1);
    assert.equal((await handle.stat()).size, 10_000);
    // As a read-only descriptor on a read-only file system: EROFS came at open.
    await assert.rejects(handle.write(Buffer.from('x'), 0, 1, 0), { code: 'EBADF', message: "EBADF: bad file descriptor, write '/f'" });
    await assert.rejects(handle.truncate(0), { code: 'EINVAL', message: "EINVAL: invalid argument, ftruncate '/f'" });
    await assert.rejects(snap.open('/f', 'r+'), { code: 'EROFS', message: "EROFS: read-only file system, open '/f'" });
    await assert.rejects(snap.truncate('/f'), { code: 'EROFS' });
    snap.release();
    await assert.rejects(handle.read(buffer, 0, 1, 0), { code: 'ERR_INODEFS_CLOSED' });
    await ifs.writeFile('/f', Buffer.alloc(10_000, 1));
  }
});

test('a write of nothing changes nothing, even past the end; a file over 16 GiB is EFBIG', async (t) => {
  const ifs = await openFs(t, SMALL);
  await ifs.writeFile('/f', 'abc');
  const before = await ifs.stat('/f');
  const handle = await ifs.open('/f', 'r+');
  assert.equal((await handle.write(Buffer.alloc(0), 0, 0, 1000)).bytesWritten, 0);
  const after = await ifs.stat('/f');
  assert.equal(after.size, 3);
  assert.equal(after.mtimeMs, before.mtimeMs);
  await assert.rejects(handle.truncate(2 ** 34 + 1), { code: 'EFBIG' });
  await assert.rejects(handle.write(Buffer.from('x'), 0, 1, 2 ** 34), { code: 'EFBIG' });
  assert.equal((await ifs.stat('/f')).size, 3);
  await handle.close();
});

test('truncate, chmod and utimes by path', async (t) => {
  const ifs = await openFs(t, SMALL);
  await ifs.writeFile('/f', Buffer.alloc(9000, 3));
  await ifs.truncate('/f', 5000);
  assert.deepEqual(await ifs.readFile('/f'), Buffer.alloc(5000, 3));
  await ifs.truncate('/f', 6000);
  assert.deepEqual(await ifs.readFile('/f'), Buffer.concat([Buffer.alloc(5000, 3), Buffer.alloc(1000)]));
  await ifs.truncate('/f');
  assert.equal((await ifs.stat('/f')).size, 0);
  await ifs.chmod('/f', 0o640);
  assert.equal((await ifs.stat('/f')).mode, 0o100640);
  await ifs.utimes('/f', new Date(1000), 2);
  const stats = await ifs.stat('/f');
  assert.equal(stats.atimeMs, 1000);
  assert.equal(stats.mtimeMs, 2000);
  await assert.rejects(ifs.truncate('/missing'), { code: 'ENOENT' });
  await assert.rejects(ifs.truncate('/', 0), { code: 'EISDIR' });
  await assert.rejects(ifs.chmod('/f', -1), { name: 'RangeError', message: 'mode must be a file mode from 0 to 0o7777 (got -1)' });
  await assert.rejects(ifs.utimes('/f', 'now', 1), { name: 'TypeError', message: 'atime must be a Date or a number of seconds since the epoch (got "now")' });
  await assert.rejects(ifs.utimes('/f', 1, new Date(NaN)), { name: 'RangeError', message: 'mtime must be a valid Date (got Invalid Date)' });
  assert.equal(ifs.fsck().ok, true);
});

test('closing one of several InodeFS of a store leaves the others their files held open', async (t) => {
  const cache = new SharedCache({ memoryBytes: 2 ** 21 });
  t.after(() => cache.close());
  const file = path.join(tempDir(t), 'fs.lmdb');
  const a = await InodeFS.open(file, { cache });
  const b = await InodeFS.open(file, { cache });
  await a.writeFile('/held', 'still readable');
  const handle = await a.open('/held');
  await a.unlink('/held');
  b.close();
  // A third opener in this process is not a new owner: files held by handles stay.
  const c = await InodeFS.open(file, { cache });
  assert.equal((await handle.readFile()).toString(), 'still readable');
  await handle.close();
  assert.equal(c.fsck().ok, true);
  c.close();
  a.close();
});

// InodeFS: the fs-like API over lmdb, its node:fs-shaped errors, and a store
// that survives reopening.
import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';

test('files, directories and links: write, read, list, stat, rename, remove', async (t) => {
  const ifs = await openFs(t);
  assert.equal(await ifs.mkdir('/a/b/c', { recursive: true }), '/a');
  await ifs.writeFile('/a/b/one.txt', 'one');
  await ifs.appendFile('/a/b/one.txt', ' more');
  await ifs.writeFile('/a/two.bin', Buffer.from([1, 2, 3]));
  assert.equal(await ifs.readFile('/a/b/one.txt', 'utf8'), 'one more');
  assert.deepEqual(await ifs.readFile('/a/two.bin'), Buffer.from([1, 2, 3]));
  assert.deepEqual(await ifs.readdir('/a'), ['b', 'two.bin']);
  assert.deepEqual(await ifs.readdir('/a/b'), ['c', 'one.txt']);
  const stats = await ifs.stat('/a/b/one.txt');
  assert.ok(stats.isFile() && !stats.isDirectory());
  assert.equal(stats.size, 8);
  assert.equal((await ifs.stat('/a')).nlink, 3); // ".", its entry, b's ".."
  await ifs.symlink('b/one.txt', '/a/link');
  assert.equal(await ifs.readlink('/a/link'), 'b/one.txt');
  assert.equal(await ifs.readFile('/a/link', 'utf8'), 'one more');
  assert.ok((await ifs.lstat('/a/link')).isSymbolicLink());
  assert.ok((await ifs.stat('/a/link')).isFile());
  await ifs.rename('/a/b', '/moved');
  assert.deepEqual(await ifs.readdir('/'), ['a', 'moved']);
  assert.equal((await ifs.stat('/a')).nlink, 2);
  assert.equal(await ifs.readFile('/moved/one.txt', 'utf8'), 'one more');
  await ifs.unlink('/moved/one.txt');
  await ifs.rm('/moved', { recursive: true });
  await ifs.rm('/nothing', { force: true });
  assert.deepEqual(await ifs.readdir('/'), ['a']);
});

test('large files are chunked, deduplicated, and read back whole', async (t) => {
  const ifs = await openFs(t, { chunkBytes: 4096, inlineBytes: 100 });
  const data = Buffer.alloc(50_000);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) & 0xff;
  await ifs.writeFile('/x', data);
  await ifs.writeFile('/y', data);
  assert.deepEqual(await ifs.readFile('/x'), data);
  await ifs.unlink('/x');
  assert.deepEqual(await ifs.readFile('/y'), data);
  await ifs.writeFile('/y', 'small now');
  assert.equal(await ifs.readFile('/y', 'utf8'), 'small now');
});

test('errors are node:fs-shaped: ENOENT, EEXIST, ENOTDIR, EISDIR, ENOTEMPTY, EINVAL, ELOOP', async (t) => {
  const ifs = await openFs(t);
  await ifs.mkdir('/d');
  await ifs.writeFile('/d/f', 'x');
  await assert.rejects(ifs.readFile('/missing'), { code: 'ENOENT', errno: -2, syscall: 'open', path: '/missing', message: "ENOENT: no such file or directory, open '/missing'" });
  await assert.rejects(ifs.mkdir('/d'), { code: 'EEXIST', message: "EEXIST: file already exists, mkdir '/d'" });
  await assert.rejects(ifs.readFile('/d/f/g'), { code: 'ENOTDIR', message: "ENOTDIR: not a directory, open '/d/f/g'" });
  await assert.rejects(ifs.readdir('/d/f'), { code: 'ENOTDIR', message: "ENOTDIR: not a directory, scandir '/d/f'" });
  await assert.rejects(ifs.readFile('/d'), { code: 'EISDIR', message: "EISDIR: illegal operation on a directory, read '/d'" });
  await assert.rejects(ifs.writeFile('/d', 'x'), { code: 'EISDIR' });
  await assert.rejects(ifs.unlink('/d'), { code: 'EISDIR', syscall: 'unlink' });
  await assert.rejects(ifs.rm('/d'), { code: 'ERR_FS_EISDIR' });
  await ifs.mkdir('/e');
  await ifs.writeFile('/e/x', '');
  await assert.rejects(ifs.rename('/d', '/e'), { code: 'ENOTEMPTY', message: "ENOTEMPTY: directory not empty, rename '/d' -> '/e'" });
  await assert.rejects(ifs.rename('/d', '/d/inner'), { code: 'EINVAL' });
  await assert.rejects(ifs.readlink('/d/f'), { code: 'EINVAL', syscall: 'readlink' });
  await ifs.symlink('/loop2', '/loop1');
  await ifs.symlink('/loop1', '/loop2');
  await assert.rejects(ifs.readFile('/loop1'), { code: 'ELOOP' });
  await assert.rejects(ifs.writeFile('/no/such/dir', 'x'), { code: 'ENOENT' });
});

test('bad arguments are TypeErrors and RangeErrors that name them', async (t) => {
  const ifs = await openFs(t);
  await assert.rejects(ifs.readFile('relative'), { name: 'RangeError', message: 'path must be an absolute path starting with "/" (got "relative")' });
  await assert.rejects(ifs.readFile(7), { name: 'TypeError', message: 'path must be a string (got 7)' });
  await assert.rejects(ifs.writeFile('/f', 42), { name: 'TypeError', message: 'data must be a string, Buffer, TypedArray or DataView (got 42)' });
  await assert.rejects(ifs.readFile('/a\0b'), { name: 'RangeError', message: 'path must not contain NUL characters (got "/a\\u0000b")' });
  await assert.rejects(InodeFS.open(''), { name: 'TypeError', message: 'path must be the path of an lmdb file (got "")' });
  await assert.rejects(InodeFS.open('/tmp/x.lmdb', { cacheSize: -1 }), { name: 'RangeError', message: 'options.cacheSize must be an integer from 0 (no cache) to 16777216 (got -1)' });
  await assert.rejects(InodeFS.open('/tmp/x.lmdb', { colour: 1 }), { name: 'TypeError' });
  await assert.rejects(InodeFS.open('/tmp/x.lmdb', { durable: 'yes' }), { name: 'TypeError', message: 'options.durable must be a boolean (got "yes")' });
  await assert.rejects(InodeFS.open('/tmp/x.lmdb', { maxReaders: 0 }), { name: 'RangeError', message: 'options.maxReaders must be an integer from 1 to 65536 (got 0)' });
  await assert.rejects(InodeFS.open('/tmp/x.lmdb', { chunkBytes: 100 }), { name: 'RangeError', message: 'options.chunkBytes must be an integer from 4096 to 67108864 (got 100)' });
  await assert.rejects(InodeFS.open('/tmp/x.lmdb', { cache: {} }), { name: 'TypeError', message: 'options.cache must be a SharedCache (got an instance of Object)' });
});

test('the store survives reopening; a closed InodeFS refuses calls', async (t) => {
  const file = path.join(tempDir(t), 'fs.lmdb');
  const first = await InodeFS.open(file);
  await first.mkdir('/kept');
  await first.writeFile('/kept/file', 'still here');
  await first.close();
  await assert.rejects(first.readFile('/kept/file'), { code: 'ERR_INODEFS_CLOSED', message: 'the InodeFS is closed: close() was called on this instance' });
  const second = await InodeFS.open(file);
  t.after(() => second.close());
  assert.equal(await second.readFile('/kept/file', 'utf8'), 'still here');
});

// Copying out of an InodeFS snapshot: into another InodeFS (or the same
// one) and into a directory on disk, with modes, times and links kept.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';

/** Small inline and chunk limits: a few KiB of contents already spans several chunks. */
const SMALL = { inlineBytes: 64, chunkBytes: 4096 };

async function fillTree(ifs) {
  await ifs.mkdir('/config/sub', { recursive: true });
  await ifs.mkdir('/empty');
  await ifs.writeFile('/config/app.json', '{"v":1}', { mode: 0o600 });
  await ifs.writeFile('/config/sub/big.bin', Buffer.alloc(20_000, 9));
  await ifs.symlink('../app.json', '/config/sub/link');
  await ifs.utimes('/config/app.json', 1_000_000, 1_000_000);
  await ifs.chmod('/config/sub', 0o750);
}

test('copyTo restores a snapshot into the same InodeFS, and into another one', async (t) => {
  const ifs = await openFs(t, SMALL);
  await fillTree(ifs);
  const snap = ifs.createSnapshot('before-update');
  await ifs.writeFile('/config/app.json', 'changed');
  await ifs.rm('/config/sub', { recursive: true });
  const counts = await snap.copyTo(ifs, '/config-restore', { from: '/config' });
  assert.deepEqual(counts, { files: 2, directories: 1, symlinks: 1, bytes: 20_007 });
  assert.equal(await ifs.readFile('/config-restore/app.json', 'utf8'), '{"v":1}');
  assert.deepEqual(await ifs.readFile('/config-restore/sub/big.bin'), Buffer.alloc(20_000, 9));
  assert.equal(await ifs.readlink('/config-restore/sub/link'), '../app.json');
  const stats = await ifs.stat('/config-restore/app.json');
  assert.equal(stats.mode & 0o777, 0o600);
  assert.equal(stats.mtimeMs, 1_000_000_000);
  assert.equal((await ifs.stat('/config-restore/sub')).mode & 0o777, 0o750);

  const other = await openFs(t, SMALL);
  assert.deepEqual(await snap.copyTo(other, '/'), { files: 2, directories: 3, symlinks: 1, bytes: 20_007 });
  assert.deepEqual(await other.readdir('/'), ['config', 'empty']);
  snap.release();
  assert.equal(ifs.fsck().ok, true);
  assert.equal(other.fsck().ok, true);
});

test('copyToDir writes the tree to disk with modes, times and links', async (t) => {
  const ifs = await openFs(t, SMALL);
  await fillTree(ifs);
  const snap = ifs.createSnapshot('to-disk', { persist: true });
  const dir = path.join(tempDir(t, 'out'), 'restored');
  await snap.copyToDir(dir);
  assert.equal(fs.readFileSync(path.join(dir, 'config/app.json'), 'utf8'), '{"v":1}');
  assert.deepEqual(fs.readFileSync(path.join(dir, 'config/sub/big.bin')), Buffer.alloc(20_000, 9));
  assert.equal(fs.readlinkSync(path.join(dir, 'config/sub/link')), '../app.json');
  assert.equal(fs.readFileSync(path.join(dir, 'config/sub/link'), 'utf8'), '{"v":1}');
  assert.equal(fs.statSync(path.join(dir, 'config/app.json')).mode & 0o777, 0o600);
  assert.equal(fs.statSync(path.join(dir, 'config/app.json')).mtimeMs, 1_000_000_000);
  assert.equal(fs.statSync(path.join(dir, 'config/sub')).mode & 0o777, 0o750);
  assert.ok(fs.statSync(path.join(dir, 'empty')).isDirectory());
  snap.release();
});

test('a copy never merges into existing data, and its arguments are checked', async (t) => {
  const ifs = await openFs(t, SMALL);
  await fillTree(ifs);
  const snap = ifs.createSnapshot('s');
  t.after(() => snap.release());
  await assert.rejects(snap.copyTo(ifs, '/config'), { code: 'ENOTEMPTY', message: "ENOTEMPTY: directory not empty, copy '/config'" });
  const dir = tempDir(t, 'busy');
  fs.writeFileSync(path.join(dir, 'there'), '');
  await assert.rejects(snap.copyToDir(dir), { code: 'ENOTEMPTY' });
  await assert.rejects(snap.copyTo({}, '/x'), { name: 'TypeError', message: 'target must be a filesystem with mkdir, writeFile, symlink, readdir methods, such as an InodeFS (got an instance of Object)' });
  await assert.rejects(snap.copyTo(ifs, 'relative'), { name: 'TypeError', message: 'path must be an absolute path in the target (got "relative")' });
  await assert.rejects(snap.copyTo(ifs, '/x', { from: 3 }), { name: 'TypeError', message: 'options.from must be a path string (got 3)' });
  await assert.rejects(snap.copyTo(ifs, '/x', { from: '/config/app.json' }), { code: 'ENOTDIR', message: "ENOTDIR: not a directory, copy '/config/app.json'" });
  await assert.rejects(snap.copyToDir(''), { name: 'TypeError', message: 'dir must be a directory path (got "")' });
  // The live tree into itself would never end (a snapshot into its own InodeFS is fine).
  await assert.rejects(ifs.copyTo(ifs, '/config/copy', { from: '/config' }), { code: 'EINVAL', message: "EINVAL: invalid argument, copy '/config' -> '/config/copy'" });
  await assert.rejects(ifs.copyTo(ifs, '/anywhere'), { code: 'EINVAL' });
  assert.deepEqual(await snap.copyTo(ifs, '/config/copy', { from: '/config' }), { files: 2, directories: 1, symlinks: 1, bytes: 20_007 });
});

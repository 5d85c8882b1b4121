// On a real reflink filesystem (XFS, reflink=1, loop-mounted): the engine
// used is reflink and the stored copy shares extents with the original.
import assert from 'node:assert/strict';
import { mkdirSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { cloneTree, codes, Workspace } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { readTree, writeTree } from './helpers/workspace-tree.js';
import { reflinkMount, sharesExtents } from './helpers/xfs.js';

const freeBytes = (dir) => {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
};

test('on XFS with reflink, snapshot clones large files and the clone shares extents', async (t) => {
  const mount = reflinkMount(t);
  if (mount === null) return;
  const dir = path.join(mount, 'ws');
  mkdirSync(dir);
  writeTree(dir, { 'large.bin': Buffer.alloc(32 * 2 ** 20, 9), 'small.txt': 'small' });
  const workspace = await Workspace.init(dir);
  const free = freeBytes(mount);
  const descriptor = await workspace.snapshot();
  assert.equal(descriptor.engine.reflinkSupported, true);
  assert.equal(descriptor.engine.used, 'reflink');
  assert.equal(descriptor.engine.counts.reflink, 1);
  assert.equal(descriptor.engine.counts.pack, 1);
  assert.equal(descriptor.engine.degraded, false);
  const manifest = JSON.parse((await import('node:fs')).readFileSync(path.join(workspace.repositoryPath, 'manifests', `${descriptor.id}.json`), 'utf8'));
  const large = manifest.entries.find((entry) => entry[0] === 'large.bin');
  assert.equal(large[8], 'reflink');
  const object = path.join(workspace.repositoryPath, 'objects', large[6].slice(0, 2), large[6]);
  assert.equal(sharesExtents(object), true, 'filefrag -v shows the object shared');
  assert.equal(sharesExtents(path.join(dir, 'large.bin')), true);
  assert.ok(free - freeBytes(mount) < 8 * 2 ** 20, `32 MiB snapshotted with ${free - freeBytes(mount)} bytes of new space`);

  // engine 'reflink' is satisfied here (every file cloned, none packed).
  const strict = await workspace.snapshot({ engine: 'reflink' });
  assert.equal(strict.engine.used, 'none', 'nothing changed: nothing stored');
  writeFileSync(path.join(dir, 'small.txt'), 'changed');
  const strictChanged = await workspace.snapshot({ engine: 'reflink' });
  assert.deepEqual(
    { used: strictChanged.engine.used, reflink: strictChanged.engine.counts.reflink, pack: strictChanged.engine.counts.pack },
    { used: 'reflink', reflink: 1, pack: 0 },
  );

  // Restore clones back out of the repository.
  const before = readTree(dir);
  writeFileSync(path.join(dir, 'large.bin'), 'overwritten');
  await workspace.restore(strictChanged.id, { force: true });
  assert.deepEqual(readTree(dir), before);
  assert.equal(sharesExtents(path.join(dir, 'large.bin')), true);
});

test('cloneTree on XFS reflinks every file; across filesystems it copies and says so', async (t) => {
  const mount = reflinkMount(t);
  if (mount === null) return;
  const source = path.join(mount, 'src');
  writeTree(source, { 'a.bin': Buffer.alloc(1 << 20, 1), 'd/b.txt': 'b', 'link': { symlink: 'a.bin' }, 'empty/': {} });
  const result = await cloneTree(source, path.join(mount, 'dst'));
  assert.equal(result.engine.used, 'reflink');
  assert.deepEqual(result.perFile, { 'a.bin': 'reflink', 'd/b.txt': 'reflink' });
  assert.deepEqual(readTree(path.join(mount, 'dst'), { withTimes: true }), readTree(source, { withTimes: true }));
  const ext4 = path.join(tempDir(t, 'ext4'), 'dst');
  const across = await cloneTree(source, ext4);
  assert.equal(across.engine.reflinkSupported, false);
  assert.notEqual(across.engine.used, 'reflink');
  assert.deepEqual(readTree(ext4), readTree(source));
  await assert.rejects(cloneTree(source, path.join(tempDir(t, 'ext4b'), 'dst'), { engine: 'reflink' }), { code: codes.ERR_REFLINK_UNSUPPORTED });
});

test('restore of a workspace that is itself a mount point is refused before any work', async (t) => {
  const mount = reflinkMount(t);
  if (mount === null) return;
  writeTree(mount, { 'a.txt': 'a' });
  const workspace = await Workspace.init(mount);
  const { id } = await workspace.snapshot();
  await assert.rejects(workspace.restore(id), {
    code: codes.ERR_RESTORE_UNSUPPORTED,
    message: `cannot restore ${mount} atomically: it is a mount point (the new tree is built next to it, on its parent's filesystem); make the workspace a directory inside the mount`,
  });
});

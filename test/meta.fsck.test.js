// InodeFS fsck(): a clean store is clean; each kind of damage, made by
// editing the lmdb file directly, is reported precisely.
import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { open } from 'lmdb';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';

const OPTIONS = { inlineBytes: 64, chunkBytes: 4096 };

test('fsck reports dangling entries, link counts, orphans, blob references and missing blobs', async (t) => {
  const file = path.join(tempDir(t), 'fs.lmdb');
  const ifs = await InodeFS.open(file, OPTIONS);
  await ifs.mkdir('/a/b', { recursive: true });
  await ifs.writeFile('/a/one', 'one');
  // Distinct chunks (equal ones would be stored once).
  await ifs.writeFile('/a/big', Buffer.from(Array.from({ length: 10_000 }, (_, i) => i % 251)));
  await ifs.writeFile('/two', Buffer.alloc(5000, 6));
  const clean = ifs.fsck();
  assert.deepEqual(clean.problems, []);
  assert.equal(clean.ok, true);
  assert.deepEqual(clean.checked, { inodes: 6, dirents: 5, blobs: 5, snapshots: 0, history: 0 });
  const oneIno = (await ifs.stat('/a/one')).ino;
  const aIno = (await ifs.stat('/a')).ino;
  const bigIno = (await ifs.stat('/a/big')).ino;
  ifs.close();

  // Damage it as a bug (or a disk) might.
  const env = open({ path: file, noSubdir: true, maxDbs: 12 });
  const inodes = env.openDB('inodes');
  const refs = env.openDB('refs');
  const blobs = env.openDB('blobs', { encoding: 'binary' });
  const big = inodes.get(bigIno);
  env.transactionSync(() => {
    inodes.removeSync(oneIno);
    inodes.putSync(aIno, { ...inodes.get(aIno), nlink: 7 });
    inodes.putSync(999, { ...big, ino: 999, chunks: [] , size: 0 });
    refs.putSync(big.chunks[0], 5);
    blobs.removeSync(big.chunks[1]);
  });
  await env.close();

  const damaged = await InodeFS.open(file, OPTIONS);
  t.after(() => damaged.close());
  const report = damaged.fsck();
  assert.equal(report.ok, false);
  const byKind = (kind) => report.problems.filter((p) => p.kind === kind).map((p) => p.message);
  assert.deepEqual(byKind('dangling-dirent'), [`directory entry /a/one points to inode ${oneIno}, which does not exist`]);
  assert.deepEqual(byKind('nlink'), [`inode ${aIno} (/a) has nlink 7; its directory entries make it 3`]);
  assert.deepEqual(byKind('orphan'), ['inode 999 is named by no directory entry']);
  assert.deepEqual(byKind('next-ino'), [`the next inode number is ${bigIno + 2}, but inode 999 exists`]);
  assert.deepEqual(byKind('blob-refs'), [`blob ${big.chunks[0]} is referenced once, but its reference count is 5`]);
  assert.deepEqual(byKind('missing-blob'), [`blob ${big.chunks[1]} is referenced but not stored`]);
  assert.equal(report.problems.length, 6, JSON.stringify(report.problems, null, 1));
  const dangling = report.problems.find((p) => p.kind === 'dangling-dirent');
  assert.equal(dangling.path, '/a/one');
  assert.equal(dangling.ino, oneIno);
  await assert.rejects(damaged.readFile('/a/big'), { code: 'ERR_INODEFS_STORE', message: 'the content of /a/big is missing from the store; run fsck()' });
});

// gc() keeps the head's ancestry (and each fork's), pins, keepWithin and
// keepLast, and snapshots named by an unfinished intent; it deletes the rest
// with their stored files, and forgets worktrees whose directory is gone.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Workspace } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { writeTree } from './helpers/workspace-tree.js';

// Five snapshots, then a restore to the second and a new snapshot on it:
// s3, s4 and s5 are no longer ancestors of the head.
async function branched(t) {
  const dir = tempDir(t, 'ws');
  writeTree(dir, { 'base.txt': 'base', 'big.bin': Buffer.alloc(80 * 1024, 1) });
  const workspace = await Workspace.init(dir);
  const ids = [];
  for (let i = 1; i <= 5; i++) {
    writeFileSync(path.join(dir, 'version.txt'), `v${i}`);
    writeFileSync(path.join(dir, `big-${i}.bin`), Buffer.alloc(70 * 1024, i));
    ids.push((await workspace.snapshot({ message: `s${i}` })).id);
  }
  await workspace.restore(ids[1]);
  writeFileSync(path.join(dir, 'version.txt'), 'v6');
  ids.push((await workspace.snapshot({ message: 's6' })).id);
  return { dir, workspace, ids };
}

const objectFiles = (workspace) =>
  readdirSync(path.join(workspace.repositoryPath, 'objects')).flatMap((prefix) => readdirSync(path.join(workspace.repositoryPath, 'objects', prefix)));

test('gc keeps the head and its ancestry, pins and retention; deletes the rest and their stored files', async (t) => {
  const { workspace, ids } = await branched(t);
  const [s1, s2, s3, s4, s5, s6] = ids;
  await workspace.pin(s4);
  await workspace.pin(s3, { until: new Date(Date.now() - 1000) }); // expired
  const plan = await workspace.gc({ dryRun: true, keepLast: 1, keepWithin: 0 });
  assert.equal(plan.dryRun, true);
  assert.deepEqual(plan.delete, [s3, s5]);
  const reasons = Object.fromEntries(plan.keep.map(({ id, reasons }) => [id, reasons]));
  assert.deepEqual(reasons[s6], ['head of worktree main', 'one of the newest 1']);
  assert.deepEqual(reasons[s2], ["ancestor of worktree main's head"]);
  assert.deepEqual(reasons[s1], ["ancestor of worktree main's head"]);
  assert.deepEqual(reasons[s4], ['pinned']);
  // big-5.bin is only in s5 (big-3.bin is in the pinned s4 too), and each
  // of s3 and s5 has a pack of its own (version.txt).
  assert.deepEqual(plan.files.map((file) => file.split('/')[0]), ['objects', 'packs', 'packs']);
  assert.equal(plan.bytes, 70 * 1024 + 2 + 2);
  assert.equal(workspace.history().length, 6, 'a dry run deletes nothing');

  const before = objectFiles(workspace).length;
  const done = await workspace.gc({ keepLast: 1, keepWithin: 0 });
  assert.deepEqual(done.delete, [s3, s5]);
  assert.deepEqual(workspace.history().map((row) => row.id).sort(), [s1, s2, s4, s6].sort());
  assert.equal(objectFiles(workspace).length, before - 1);
  const verified = await workspace.verify('all');
  assert.equal(verified.ok, true, 'what is kept is whole');
  for (const id of [s1, s2, s4, s6]) assert.equal((await workspace.verify(id)).ok, true);
});

test('gc keeps everything younger than keepWithin and the newest keepLast', async (t) => {
  const { workspace, ids } = await branched(t);
  const young = await workspace.gc({ dryRun: true, keepLast: 0, keepWithin: 3_600_000 });
  assert.deepEqual(young.delete, []);
  const last = await workspace.gc({ dryRun: true, keepLast: 4, keepWithin: 0 });
  assert.deepEqual(last.delete, []);
  const none = await workspace.gc({ dryRun: true, keepLast: 0, keepWithin: 0 });
  assert.deepEqual(none.delete, [ids[2], ids[3], ids[4]]);
});

test("gc keeps a fork's head ancestry, and forgets worktrees whose directory is gone", async (t) => {
  const { workspace, ids } = await branched(t);
  const forkDir = path.join(tempDir(t, 'forks'), 'f');
  await workspace.fork(ids[4], forkDir);
  const plan = await workspace.gc({ dryRun: true, keepLast: 0, keepWithin: 0 });
  assert.deepEqual(plan.delete, [], 's3..s5 are the ancestry of the fork');
  const { rmSync } = await import('node:fs');
  rmSync(forkDir, { recursive: true });
  const after = await workspace.gc({ keepLast: 0, keepWithin: 0 });
  assert.deepEqual(after.staleWorktrees, ['f']);
  assert.deepEqual(after.delete, [ids[2], ids[3], ids[4]]);
});

test('gc never deletes a snapshot named by an unfinished intent', async (t) => {
  const { workspace, ids } = await branched(t);
  // As a restore killed by another process would leave it (that process holds no lock now).
  const intent = path.join(workspace.repositoryPath, 'intents', 'restore-elsewhere.json');
  writeFileSync(intent, JSON.stringify({ op: 'restore', id: ids[2], worktree: 'elsewhere', path: '/nonexistent/elsewhere', phase: 'stage' }));
  const plan = await workspace.gc({ dryRun: true, keepLast: 0, keepWithin: 0 });
  assert.deepEqual(plan.delete, [ids[3], ids[4]]);
  assert.equal(existsSync(intent), true);
});

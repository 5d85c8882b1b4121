// Recovery of a restore cut short at each point of the swap, including the
// fallback swap (two renames, for filesystems without RENAME_EXCHANGE),
// built by hand, and opened first through another worktree.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { codes, Workspace } from '../lib/snapshot/index.js';
import { stagingPaths } from '../lib/snapshot/repository-layout.js';
import { tempDir } from './helpers/fs-tree.js';
import { readTree, writeTree } from './helpers/workspace-tree.js';

/** main at tree B (head B), snapshot A older, a fork elsewhere, and the staging tree of a restore to A made by hand. */
async function midRestore(t) {
  const base = tempDir(t, 'recover');
  const dir = path.join(base, 'main');
  writeTree(dir, { 'a.txt': 'tree A', 'big.bin': Buffer.alloc(90 * 1024, 1) });
  const workspace = await Workspace.init(dir);
  const a = await workspace.snapshot({ durable: false });
  const treeA = readTree(dir);
  writeFileSync(path.join(dir, 'a.txt'), 'tree B!');
  writeFileSync(path.join(dir, 'b.txt'), 'only in B');
  const b = await workspace.snapshot({ durable: false });
  const treeB = readTree(dir);
  const other = await workspace.fork(b.id, path.join(base, 'other'));
  const { staging, old } = stagingPaths(dir);
  await workspace.fork(a.id, staging, { name: 'scratch' });
  rmSync(path.join(staging, '.arenacache'));
  rmSync(path.join(workspace.repositoryPath, 'worktrees', 'scratch.json'));
  writeFileSync(
    path.join(workspace.repositoryPath, 'intents', 'restore-main.json'),
    JSON.stringify({ op: 'restore', id: a.id, previousHead: b.id, worktree: 'main', path: dir, staging, phase: 'swap', stagingIno: String(statSync(staging, { bigint: true }).ino) }),
  );
  return { base, dir, staging, old, a, b, treeA, treeB, other };
}

function assertClean(base) {
  assert.deepEqual(readdirSync(base).filter((name) => name.includes('arenacache-')), []);
}

test('cut after the metadata moved into staging: undone by the next open', async (t) => {
  const { base, dir, staging, b, treeB, other } = await midRestore(t);
  renameSync(path.join(dir, '.arenacache'), path.join(staging, '.arenacache'));
  // Another worktree opening first puts the repository back, and the intent waits for main's own open.
  await Workspace.open(other.path);
  assert.equal(existsSync(path.join(dir, '.arenacache')), true);
  assert.deepEqual(readTree(dir), treeB);
  const reopened = await Workspace.open(dir);
  assert.deepEqual(readTree(dir), treeB);
  assert.equal(reopened.head, b.id);
  assertClean(base);
});

test('cut between the two renames of the fallback swap (worktree path missing): undone', async (t) => {
  const { base, dir, staging, old, b, treeB, other } = await midRestore(t);
  renameSync(path.join(dir, '.arenacache'), path.join(staging, '.arenacache'));
  renameSync(dir, old);
  await Workspace.open(other.path);
  assert.equal(existsSync(path.join(dir, '.arenacache')), true, 'the fork put the old tree and the repository back');
  const reopened = await Workspace.open(dir);
  assert.deepEqual(readTree(dir), treeB);
  assert.equal(reopened.head, b.id);
  assertClean(base);
});

test('cut after the fallback swap, before cleanup: finished', async (t) => {
  const { base, dir, staging, old, a, treeA } = await midRestore(t);
  renameSync(path.join(dir, '.arenacache'), path.join(staging, '.arenacache'));
  renameSync(dir, old);
  renameSync(staging, dir);
  const reopened = await Workspace.open(dir);
  assert.deepEqual(readTree(dir), treeA);
  assert.equal(reopened.head, a.id);
  assertClean(base);
});

test('a head written before a crash undid the swap is put back', async (t) => {
  const { base, dir, a, b, treeB } = await midRestore(t);
  const record = path.join(dir, '.arenacache', 'worktrees', 'main.json');
  const worktree = JSON.parse(readFileSync(record, 'utf8'));
  writeFileSync(record, JSON.stringify({ ...worktree, head: a.id }));
  const reopened = await Workspace.open(dir);
  assert.deepEqual(readTree(dir), treeB);
  assert.equal(reopened.head, b.id);
  assertClean(base);
});

test('a pointer naming a worktree outside the repository is refused', async (t) => {
  const { other } = await midRestore(t);
  const pointer = path.join(other.path, '.arenacache');
  const value = JSON.parse(readFileSync(pointer, 'utf8'));
  writeFileSync(pointer, JSON.stringify({ ...value, worktree: '../../escape' }));
  await assert.rejects(Workspace.open(other.path), {
    code: codes.ERR_WORKSPACE_FORMAT,
    message: `${pointer} is not an arenacache-worktree/1 pointer (an absolute repository path and a worktree name)`,
  });
});

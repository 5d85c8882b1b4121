// restore() brings back the exact tree (contents, modes, times, links, empty
// directories) and the workspace still works after the swap; it refuses to
// discard unsnapshotted changes unless forced; fork() makes a second
// worktree sharing the repository.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { codes, Workspace } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { readTree, writeTree } from './helpers/workspace-tree.js';

const past = new Date('2020-02-03T04:05:06Z');

function firstTree(dir) {
  writeTree(dir, {
    'a.txt': { content: 'alpha', mode: 0o640, mtime: past },
    'bin/run.sh': { content: '#!/bin/sh\necho hi\n', mode: 0o755, mtime: past },
    'data/large.bin': Buffer.alloc(300 * 1024, 7),
    'empty/': {},
    'deep/1/2/3/4/5/leaf.txt': 'leaf',
    'link-in': { symlink: 'a.txt' },
    'link-out': { symlink: '/etc/hostname' },
  });
}

test('restore brings back the exact tree: contents, modes, times, links, empty directories', async (t) => {
  const dir = tempDir(t, 'ws');
  firstTree(dir);
  const { chmodSync, statSync } = await import('node:fs');
  chmodSync(dir, 0o750);
  const workspace = await Workspace.init(dir);
  const expected = readTree(dir, { withTimes: true });
  const first = await workspace.snapshot({ message: 'first' });
  rmSync(path.join(dir, 'deep'), { recursive: true });
  writeFileSync(path.join(dir, 'a.txt'), 'changed');
  writeFileSync(path.join(dir, 'new.txt'), 'new');
  unlinkSync(path.join(dir, 'link-in'));
  await workspace.snapshot({ message: 'second' });
  assert.notDeepEqual(readTree(dir, { withTimes: true }), expected);

  const restored = await workspace.restore(first.id);
  assert.equal(restored.id, first.id);
  assert.deepEqual(readTree(dir, { withTimes: true }), expected);
  assert.equal(statSync(dir).mode & 0o7777, 0o750, 'the root keeps its mode');
  assert.equal(workspace.head, first.id);
  assert.deepEqual(readdirSync(path.dirname(dir)).filter((name) => name.startsWith(`.${path.basename(dir)}.arenacache`)), [], 'no staging left beside the worktree');
  // The workspace still works after the swap: its repository moved with it.
  const again = await Workspace.open(dir);
  assert.equal(again.head, first.id);
  const third = await again.snapshot();
  assert.equal(third.parent, first.id);
  assert.equal(third.payloadChecksum, first.payloadChecksum);
});

test('restore refuses to discard unsnapshotted changes unless forced', async (t) => {
  const dir = tempDir(t, 'ws');
  firstTree(dir);
  const workspace = await Workspace.init(dir);
  const first = await workspace.snapshot();
  writeFileSync(path.join(dir, 'a.txt'), 'unsaved work');
  writeFileSync(path.join(dir, 'extra.txt'), 'more');
  await assert.rejects(workspace.restore(first.id), (error) => {
    assert.equal(error.code, codes.ERR_WORKTREE_DIRTY);
    assert.equal(error.message, `the worktree has 2 change(s) not in its head snapshot ${first.id} (first: a.txt); snapshot them or pass { force: true }`);
    assert.deepEqual(error.changes.extra, ['extra.txt']);
    return true;
  });
  assert.equal(existsSync(path.join(dir, 'extra.txt')), true, 'nothing was touched');
  const status = await workspace.status();
  assert.equal(status.ok, false);
  await workspace.restore(first.id, { force: true });
  assert.equal(existsSync(path.join(dir, 'extra.txt')), false);
  assert.equal((await workspace.status()).ok, true);
});

test('fork makes a second worktree sharing the repository', async (t) => {
  const dir = tempDir(t, 'ws');
  firstTree(dir);
  const workspace = await Workspace.init(dir);
  const first = await workspace.snapshot();
  const forkDir = path.join(tempDir(t, 'forks'), 'feature');
  const fork = await workspace.fork(first.id, forkDir);
  assert.equal(fork.name, 'feature');
  assert.equal(fork.head, first.id);
  assert.equal(fork.repositoryPath, workspace.repositoryPath);
  assert.deepEqual(readTree(forkDir), readTree(dir));
  writeFileSync(path.join(forkDir, 'feature.txt'), 'work in the fork');
  const forkSnapshot = await fork.snapshot({ message: 'in fork' });
  assert.equal(forkSnapshot.parent, first.id);
  assert.equal(forkSnapshot.worktree, 'feature');
  assert.equal(workspace.head, first.id, "the main worktree's head is its own");
  const heads = Object.fromEntries(workspace.history().map((row) => [row.id, row.heads]));
  assert.deepEqual(heads[forkSnapshot.id], ['feature']);
  await assert.rejects(workspace.fork(first.id, forkDir), { code: codes.ERR_WORKSPACE_EXISTS, message: `cannot fork into ${forkDir}: it is not empty` });
  await assert.rejects(workspace.fork(first.id, path.join(forkDir, 'feature.txt'), { name: 'x' }), {
    code: codes.ERR_WORKSPACE_EXISTS,
    message: `cannot fork into ${path.join(forkDir, 'feature.txt')}: it is not a directory`,
  });
  await assert.rejects(workspace.fork(first.id, path.join(dir, 'inside'), { name: 'y' }), {
    name: 'RangeError',
    message: `dir must be outside the worktree and its repository, or it would be snapshotted or swapped away (got ${JSON.stringify(path.join(dir, 'inside'))})`,
  });
  await assert.rejects(workspace.fork(first.id, path.join(path.dirname(forkDir), 'other'), { name: 'feature' }), {
    code: codes.ERR_WORKSPACE_EXISTS,
    message: 'a worktree named feature already exists; pass options.name',
  });
});

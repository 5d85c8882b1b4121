// Finishing or undoing what a process killed mid-operation left behind,
// run by Workspace.open under the workspace lock (skipped when another live
// process holds it: its operation is not unfinished, only in progress).
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { codes } from '../errors.js';
import { META_NAME, stagingPaths } from './repository-layout.js';
import { WorkspaceLock } from './lock.js';
import { leftovers } from './take.js';

/**
 * Puts the worktree's metadata entry back where a restore cut short between
 * its moves may have left it: in the staging directory (moved there before
 * the exchange), or with the worktree path itself missing (between the two
 * renames of the fallback swap). Needs no repository yet: it looks only at
 * the sibling paths a restore of `worktreePath` uses.
 */
export function recoverWorktreePath(worktreePath, lockedBy) {
  const { staging, old } = stagingPaths(worktreePath);
  const stagedMeta = path.join(staging, META_NAME);
  // Between the metadata's move into staging and the swap. A live restore
  // holds the lock (through the metadata it moved), so this waits for none.
  if (!existsSync(stagedMeta)) return;
  const lock = lockedBy(stagedMeta);
  try {
    // The fallback swap was cut between its renames: the old tree is in `old`.
    if (!existsSync(worktreePath) && existsSync(old)) renameSync(old, worktreePath);
    if (existsSync(worktreePath) && !existsSync(path.join(worktreePath, META_NAME))) renameSync(stagedMeta, path.join(worktreePath, META_NAME));
  } finally {
    lock.release();
  }
}

/** Completes or removes every unfinished operation recorded in the repository. */
export function recoverIntents(workspace) {
  const { repository } = workspace;
  const { layout } = repository;
  let lock;
  try {
    lock = WorkspaceLock.acquire(layout, 'recover');
  } catch (error) {
    if (error.code === codes.ERR_WORKSPACE_BUSY) return [];
    throw error;
  }
  const handled = [];
  try {
    for (const { name, record } of repository.intents()) {
      const outcome = recoverOne(workspace, record);
      if (outcome === null) continue;
      handled.push(outcome);
      rmSync(layout.intent(name), { force: true });
    }
    // With the lock held nothing is being made, so whatever is in tmp/
    // (clones, packs, reflink probes of a killed process) is garbage.
    for (const name of readdirSync(layout.dir('tmp'))) rmSync(layout.tmp(name), { recursive: true, force: true });
    // Records cut short while being written (writeJson's temporary names).
    for (const dir of ['snapshots', 'manifests', 'pins', 'worktrees', 'intents']) {
      for (const name of readdirSync(layout.dir(dir))) if (name.endsWith('.tmp')) rmSync(path.join(layout.dir(dir), name), { force: true });
    }
  } finally {
    lock.release();
  }
  return handled;
}

function recoverOne(workspace, record) {
  const { repository } = workspace;
  const { layout } = repository;
  switch (record.op) {
    case 'snapshot': {
      if (existsSync(layout.descriptor(record.id))) {
        // Committed; only the head update and the cleanup were left.
        const worktree = repository.worktreeRecord(record.worktree);
        if (worktree !== undefined && worktree.head === repository.descriptor(record.id).parent) {
          repository.writeWorktree({ ...worktree, head: record.id }, true);
        }
        for (const file of leftovers(layout, record.id)) rmSync(file, { force: true });
        return { op: 'snapshot', id: record.id, outcome: 'completed' };
      }
      rmSync(layout.manifest(record.id), { force: true });
      rmSync(layout.pack(record.id), { force: true });
      for (const file of leftovers(layout, record.id)) rmSync(file, { force: true });
      return { op: 'snapshot', id: record.id, outcome: 'removed' };
    }
    case 'restore': {
      // Another worktree caught mid-swap (its path missing, or its metadata
      // still in staging): its own open puts things back first, then this
      // intent is settled. Nothing of it is touched before that.
      const { staging, old } = stagingPaths(record.path);
      if (!existsSync(record.path) || !existsSync(path.join(record.path, META_NAME)) || existsSync(path.join(staging, META_NAME))) return null;
      const swapped = record.phase === 'swap' && String(statSync(record.path, { bigint: true }).ino) === record.stagingIno;
      const worktree = repository.worktreeRecord(record.worktree);
      if (worktree !== undefined) {
        // Forward: the new head. Back: the head before the restore (the
        // head may have been written before a crash undid the swap).
        const head = swapped ? record.id : (record.previousHead ?? worktree.head);
        if (worktree.head !== head) repository.writeWorktree({ ...worktree, head }, true);
      }
      // Not swapped: the staging tree is the new one, never shown. Swapped: it is the old one.
      if (!existsSync(path.join(staging, META_NAME))) rmSync(staging, { recursive: true, force: true });
      if (!existsSync(path.join(old, META_NAME))) rmSync(old, { recursive: true, force: true });
      return { op: 'restore', id: record.id, outcome: swapped ? 'completed' : 'undone' };
    }
    case 'fork': {
      const pointer = path.join(record.path, META_NAME);
      if (existsSync(pointer)) return { op: 'fork', id: record.id, outcome: 'completed' };
      rmSync(record.staging, { recursive: true, force: true });
      rmSync(layout.worktree(record.worktree), { force: true });
      return { op: 'fork', id: record.id, outcome: 'removed' };
    }
    default:
      // gc: what it deleted is gone, what it did not is swept by the next gc.
      return { op: record.op, outcome: 'dropped' };
  }
}

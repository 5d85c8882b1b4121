// Restore and fork: building a snapshot's tree from the repository, and
// putting it in place at once.
//
// restore builds the tree in a sibling of the worktree (same filesystem),
// moves the metadata entry into it, and exchanges the two directories with
// renameat2(RENAME_EXCHANGE): the worktree path shows the whole old tree or
// the whole new one, never a mixture. Where the filesystem lacks
// RENAME_EXCHANGE it falls back to two renames; the moment between them
// (the worktree path missing) is repaired by the next open. The intent
// record says which phase a restore reached; recover.js finishes or undoes it.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { ArenaCacheError, codes } from '../errors.js';
import { exchangePaths } from '../native/dir-exchange.js';
import { FLAG_MISMATCH, JOB_CLONE, JOB_EXTRACT } from '../native/file-jobs.js';
import { syncFilesystem } from '../native/fs-sync.js';
import { buildTree, chooseEngine, failureOf, ioError } from './engine.js';
import { isWithin, META_NAME, stagingPaths, syncDirectory, writeJson } from './repository-layout.js';
import { locate } from './manifest.js';

export const POINTER_FORMAT = 'arenacache-worktree/1';

/**
 * Writes snapshot `id`'s tree into `target` (an empty directory): objects are
 * cloned (reflink where the filesystem can), packed files copied out with
 * their SHA-256 checked, sizes checked for all. Throws ERR_SNAPSHOT_CORRUPT
 * for stored bytes that are missing or wrong, ERR_SNAPSHOT_IO otherwise.
 */
export async function materialize(repository, id, manifest, target, { threads, onProgress, phase }) {
  const { layout } = repository;
  const choice = chooseEngine('auto', layout.dir('objects'), target);
  const entries = manifest.entries.map((entry) => {
    const [where, type] = entry;
    if (type === 'd') return { path: where, type, mode: entry[2], time: [entry[3], entry[4]] };
    if (type === 'l') return { path: where, type, target: entry[2], time: [entry[3], entry[4]] };
    const stored = locate(layout, entry);
    const shape = { mode: entry[2], time: [entry[4], entry[5]] };
    return {
      path: where,
      type,
      entry,
      job: (jobs, destination) =>
        stored.length === -1
          ? jobs.push(JOB_CLONE, stored.file, destination, shape)
          : jobs.push(JOB_EXTRACT, stored.file, destination, { ...shape, offset: stored.offset, length: stored.length, expected: entry[6] }),
    };
  });
  const [rootMode, rootSec, rootNsec] = manifest.root;
  const { results, jobOf } = await buildTree(target, entries, {
    top: { mode: rootMode, time: [rootSec, rootNsec] },
    runOptions: { ...choice.runOptions, threads, hash: false, checkExpected: true, retries: 0 },
    onProgress,
    phase,
  });
  const damaged = [];
  const failures = [];
  for (const [item, i] of jobOf) {
    const failure = failureOf(results, i);
    const size = item.entry[3];
    if (failure !== null) {
      // The object or pack is gone (not the destination: that is ours).
      if (failure.code === 'ENOENT' && results.errorOnDst[i] === 0) damaged.push({ path: item.path, problem: 'missing' });
      else failures.push({ path: item.path, ...failure });
    } else if ((results.flags[i] & FLAG_MISMATCH) !== 0 || results.sizes[i] !== size) {
      damaged.push({ path: item.path, problem: 'differs' });
    }
  }
  if (damaged.length > 0) {
    /** @type {ArenaCacheError & { problems?: { path: string, problem: string }[] }} */
    const error = new ArenaCacheError(
      codes.ERR_SNAPSHOT_CORRUPT,
      `snapshot ${id}: the stored bytes of ${damaged.length} file(s) are missing or damaged, first ${damaged[0].path} (${damaged[0].problem}); run verify`,
    );
    error.problems = damaged;
    throw error;
  }
  if (failures.length > 0) throw ioError(`cannot write snapshot ${id}'s tree`, failures);
  return choice;
}

/** Restores the worktree of `workspace` to snapshot `id` (the lock is held by the caller). */
export async function restoreTree(workspace, id, { threads, onProgress, durable }) {
  const { repository, worktree } = workspace;
  const { layout } = repository;
  const worktreePath = workspace.path;
  const manifest = repository.manifest(id);
  const { staging, old } = stagingPaths(worktreePath);
  if (statSync(path.dirname(worktreePath)).dev !== statSync(worktreePath).dev) {
    throw new ArenaCacheError(
      codes.ERR_RESTORE_UNSUPPORTED,
      `cannot restore ${worktreePath} atomically: it is a mount point (the new tree is built next to it, on its parent's filesystem); make the workspace a directory inside the mount`,
    );
  }
  rmSync(staging, { recursive: true, force: true });
  rmSync(old, { recursive: true, force: true });
  const intent = layout.intent(`restore-${worktree.name}`);
  const record = { op: 'restore', id, previousHead: worktree.head, worktree: worktree.name, path: worktreePath, staging, phase: 'stage', pid: process.pid };
  writeJson(intent, record, durable);
  try {
    mkdirSync(staging, { mode: 0o700 });
    await materialize(repository, id, manifest, staging, { threads, onProgress, phase: 'restore' });
    if (durable) await syncFilesystem(staging);
    writeJson(intent, { ...record, phase: 'swap', stagingIno: String(statSync(staging, { bigint: true }).ino) }, durable);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    rmSync(intent, { force: true });
    throw error;
  }
  // From here the intent decides: the next open finishes or undoes the swap.
  renameSync(path.join(worktreePath, META_NAME), path.join(staging, META_NAME));
  swapDirectories(worktreePath, staging, old);
  if (durable) syncDirectory(path.dirname(worktreePath));
  workspace.setHead(id, durable);
  // The old tree goes before the intent does, so that a kill while it is
  // being removed leaves the intent to finish the job.
  rmSync(staging, { recursive: true, force: true });
  rmSync(old, { recursive: true, force: true });
  rmSync(intent, { force: true });
}

/** Exchanges two directories in one step, or (without RENAME_EXCHANGE) in two renames through `old`. */
function swapDirectories(worktreePath, staging, old) {
  try {
    exchangePaths(worktreePath, staging);
    return;
  } catch (error) {
    if (!['EINVAL', 'ENOSYS', 'ENOTSUP', 'EOPNOTSUPP'].includes(error.code)) throw error;
  }
  renameSync(worktreePath, old);
  renameSync(staging, worktreePath);
}

/** Makes a new worktree at `dir` from snapshot `id`; returns its name. */
export async function forkTree(workspace, id, dir, { name, threads, onProgress, durable }) {
  const { repository } = workspace;
  const { layout } = repository;
  const target = path.resolve(dir);
  if (isWithin(workspace.path, target) || isWithin(layout.repository, target)) {
    throw new RangeError(`dir must be outside the worktree and its repository, or it would be snapshotted or swapped away (got ${JSON.stringify(dir)})`);
  }
  if (existsSync(target) && !statSync(target).isDirectory()) {
    throw new ArenaCacheError(codes.ERR_WORKSPACE_EXISTS, `cannot fork into ${target}: it is not a directory`);
  }
  if (existsSync(target) && readdirSync(target).length > 0) {
    throw new ArenaCacheError(codes.ERR_WORKSPACE_EXISTS, `cannot fork into ${target}: it is not empty`);
  }
  if (repository.worktreeRecord(name) !== undefined) {
    throw new ArenaCacheError(codes.ERR_WORKSPACE_EXISTS, `a worktree named ${name} already exists; pass options.name`);
  }
  const manifest = repository.manifest(id);
  const staging = path.join(path.dirname(target), `.${path.basename(target)}.arenacache-fork`);
  rmSync(staging, { recursive: true, force: true });
  const intent = layout.intent(`fork-${name}`);
  writeJson(intent, { op: 'fork', id, worktree: name, path: target, staging, pid: process.pid }, durable);
  let done = false;
  try {
    mkdirSync(path.dirname(target), { recursive: true });
    mkdirSync(staging, { mode: 0o700 });
    await materialize(repository, id, manifest, staging, { threads, onProgress, phase: 'fork' });
    writeJson(path.join(staging, META_NAME), { format: POINTER_FORMAT, repository: layout.repository, worktree: name }, durable);
    repository.writeWorktree({ name, path: target, head: id, created: new Date().toISOString() }, durable);
    if (durable) await syncFilesystem(staging);
    renameSync(staging, target);
    done = true;
  } finally {
    if (!done) {
      rmSync(staging, { recursive: true, force: true });
      rmSync(layout.worktree(name), { force: true });
    }
    rmSync(intent, { force: true });
  }
  return target;
}

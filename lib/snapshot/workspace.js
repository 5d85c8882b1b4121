// Workspace: snapshots of a directory tree, kept in a repository next to it
// (see repository-layout.js), with restore, fork, verify, history, pins and gc.
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { checkBoolean, checkFunction, checkInteger, checkPath, withDefaults } from '../validate.js';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { requireNative } from '../native/addon.js';
import { planGc, runGc } from './gc.js';
import { isWithin, Layout, META_NAME, writeJson } from './repository-layout.js';
import { withLock, WorkspaceLock } from './lock.js';
import { checkName, checkReference, isName, shortId } from './names.js';
import { recoverIntents, recoverWorktreePath } from './recover.js';
import { DEFAULT_RETENTION, Repository } from './repository.js';
import { checkEngine } from './engine.js';
import { forkTree, POINTER_FORMAT, restoreTree } from './restore.js';
import { historyTable } from './history-table.js';
import { takeSnapshot } from './take.js';
import { diffWorktree, verifyStore } from './verify-snapshot.js';

/** Defaults of the options every operation takes. */
export const defaults = Object.freeze({
  /** 'auto' (reflink, else copy_file_range, else read/write, per file), 'reflink' (required) or 'copy' (never share extents). */
  engine: 'auto',
  /** Native threads cloning, packing and hashing files (the work waits on I/O, so more than the cores help). */
  threads: 4,
  /** Files smaller than this go into the snapshot's pack instead of one object file each. */
  packBelow: 64 * 1024,
  /** fsync records and syncfs the data before a snapshot, restore or fork counts as done. */
  durable: true,
});

const MAX_MESSAGE = 4096;

/** `options` over the method's `known` defaults, with the checks every method's options share. */
function resolveOptions(options, known, where) {
  const resolved = withDefaults(options, known, where);
  checkEngine(resolved.engine ?? 'auto', `${where}.engine`);
  if ('threads' in known) checkInteger(resolved.threads, `${where}.threads`, 1, 64);
  if ('packBelow' in known) checkInteger(resolved.packBelow, `${where}.packBelow`, 0, 16 * 2 ** 20, { to: '16 MiB' });
  for (const flag of ['durable', 'force', 'dryRun', 'worktree']) {
    if (flag in known) checkBoolean(resolved[flag], `${where}.${flag}`);
  }
  if ('onProgress' in known && resolved.onProgress !== null) checkFunction(resolved.onProgress, `${where}.onProgress`);
  return resolved;
}

const common = { threads: defaults.threads, durable: defaults.durable, onProgress: null };

function checkRetention(value, where) {
  if (value.keepLast !== undefined) checkInteger(value.keepLast, `${where}.keepLast`, 0, 1e9, { to: null });
  if (value.keepWithin !== undefined) checkInteger(value.keepWithin, `${where}.keepWithin`, 0, Number.MAX_SAFE_INTEGER, { to: null, unit: 'milliseconds' });
}

function readPointer(file) {
  let pointer;
  try {
    pointer = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ArenaCacheError(codes.ERR_WORKSPACE_FORMAT, `${file} is not a worktree pointer (${error.message})`, { cause: error });
  }
  if (
    pointer?.format !== POINTER_FORMAT ||
    typeof pointer.repository !== 'string' ||
    !path.isAbsolute(pointer.repository) ||
    typeof pointer.worktree !== 'string' ||
    !isName(pointer.worktree)
  ) {
    throw new ArenaCacheError(codes.ERR_WORKSPACE_FORMAT, `${file} is not an ${POINTER_FORMAT} pointer (an absolute repository path and a worktree name)`);
  }
  return pointer;
}

/** Where the metadata entry `meta` says the repository is, and which worktree this is. */
function repositoryOf(meta) {
  if (lstatSync(meta).isDirectory()) return { repository: meta, worktree: 'main' };
  const pointer = readPointer(meta);
  return { repository: pointer.repository, worktree: pointer.worktree };
}

export class Workspace {
  #path;
  #repository;
  #worktree;

  constructor(worktreePath, repository, worktree) {
    this.#path = worktreePath;
    this.#repository = repository;
    this.#worktree = worktree;
    /**
     * What open() found left by interrupted operations and settled:
     * [{ op, id, outcome }], outcome 'completed', 'removed', 'undone' or
     * (a gc, which has no id) 'dropped' (see recover.js).
     * @type {{ op: string, id?: string, outcome: string }[]}
     */
    this.recovered = [];
  }

  /**
   * Makes `dir` (created if missing) a workspace: a repository in
   * `dir/.arenacache`, or at options.repository (outside the tree) with a
   * pointer to it in `dir/.arenacache`.
   */
  static async init(dir, options = {}) {
    checkPath(dir, 'dir');
    const resolved = resolveOptions(options, { repository: undefined, keepLast: undefined, keepWithin: undefined, durable: defaults.durable }, 'options');
    checkRetention(resolved, 'options');
    requireNative('workspace snapshots');
    const root = path.resolve(dir);
    const meta = path.join(root, META_NAME);
    let repository = meta;
    if (resolved.repository !== undefined) {
      checkPath(resolved.repository, 'options.repository');
      repository = path.resolve(resolved.repository);
      if (isWithin(root, repository)) {
        throw new RangeError(`options.repository must be outside the workspace, or it would be snapshotted (got ${describe(resolved.repository)})`);
      }
      if (existsSync(path.join(repository, 'config.json'))) {
        throw new ArenaCacheError(codes.ERR_WORKSPACE_EXISTS, `${repository} already holds a repository`);
      }
    }
    mkdirSync(root, { recursive: true });
    if (existsSync(meta)) throw new ArenaCacheError(codes.ERR_WORKSPACE_EXISTS, `${root} is already a workspace (${META_NAME} exists)`);
    const retention = {};
    if (resolved.keepLast !== undefined) retention.keepLast = resolved.keepLast;
    if (resolved.keepWithin !== undefined) retention.keepWithin = resolved.keepWithin;
    const created = Repository.create(repository, retention, resolved.durable);
    if (repository !== meta) writeJson(meta, { format: POINTER_FORMAT, repository, worktree: 'main' }, resolved.durable);
    created.writeWorktree({ name: 'main', path: root, head: null, created: new Date().toISOString() }, resolved.durable);
    return Workspace.open(root);
  }

  /** Opens the workspace (or a worktree forked from one) at `dir`, finishing or undoing what an interrupted operation left. */
  static async open(dir) {
    checkPath(dir, 'dir');
    requireNative('workspace snapshots');
    const root = path.resolve(dir);
    recoverWorktreePath(root, (stagedMeta) => WorkspaceLock.acquire(new Layout(repositoryOf(stagedMeta).repository), 'recover'));
    const meta = path.join(root, META_NAME);
    if (!existsSync(meta)) {
      throw new ArenaCacheError(codes.ERR_WORKSPACE_NOT_FOUND, `${root} is not a workspace (no ${META_NAME}); create one with init`);
    }
    const where = repositoryOf(meta);
    const lockedBy = (stagedMeta) => WorkspaceLock.acquire(new Layout(repositoryOf(stagedMeta).repository), 'recover');
    if (!existsSync(where.repository) && path.basename(where.repository) === META_NAME) {
      // A fork of a workspace whose repository was moved aside by a restore
      // cut short: put it back from here.
      recoverWorktreePath(path.dirname(where.repository), lockedBy);
    }
    if (!existsSync(where.repository)) {
      throw new ArenaCacheError(codes.ERR_WORKSPACE_NOT_FOUND, `the repository of ${root} (${where.repository}) is gone`);
    }
    const repository = new Repository(where.repository);
    let worktree = repository.worktreeRecord(where.worktree);
    if (worktree === undefined || worktree.path !== root) {
      // Moved (or its record pruned while it was away): the tree is the truth.
      worktree = { name: where.worktree, head: null, created: new Date().toISOString(), ...worktree, path: root };
      await withLock(repository.layout, 'register the worktree', () => repository.writeWorktree(worktree, true)).catch((error) => {
        if (error.code !== codes.ERR_WORKSPACE_BUSY) throw error;
      });
    }
    const workspace = new Workspace(root, repository, worktree);
    workspace.recovered = recoverIntents(workspace);
    workspace.#refresh();
    return workspace;
  }

  /** The worktree directory. */
  get path() {
    return this.#path;
  }

  /** The repository directory. */
  get repositoryPath() {
    return this.#repository.layout.repository;
  }

  /** This worktree's name ('main' for the one made by init). */
  get name() {
    return this.#worktree.name;
  }

  /** The snapshot this worktree was last snapshotted as, restored to or forked from; null before any. */
  get head() {
    return this.#worktree.head;
  }

  /** @internal */
  get repository() {
    return this.#repository;
  }

  /** @internal */
  get worktree() {
    return this.#worktree;
  }

  /** @internal */
  setHead(id, durable) {
    this.#worktree = { ...this.#worktree, head: id };
    this.#repository.writeWorktree(this.#worktree, durable);
  }

  #refresh() {
    const record = this.#repository.worktreeRecord(this.#worktree.name);
    if (record !== undefined) this.#worktree = record;
  }

  #locked(operation, work, options) {
    return withLock(
      this.#repository.layout,
      operation,
      () => {
        this.#refresh();
        return work();
      },
      options,
    );
  }

  /** Takes a snapshot of the worktree; resolves to its descriptor. */
  async snapshot(options = {}) {
    const resolved = resolveOptions(options, { message: '', tags: [], engine: defaults.engine, packBelow: defaults.packBelow, ...common }, 'options');
    if (typeof resolved.message !== 'string') throw new TypeError(`options.message must be a string (got ${describe(resolved.message)})`);
    if (resolved.message.length > MAX_MESSAGE) throw new RangeError(`options.message must be at most ${MAX_MESSAGE} characters (got ${resolved.message.length})`);
    if (!Array.isArray(resolved.tags)) throw new TypeError(`options.tags must be an array of strings (got ${describe(resolved.tags)})`);
    resolved.tags.forEach((tag, i) => checkName(tag, `options.tags[${i}]`));
    resolved.tags = [...new Set(resolved.tags)];
    return this.#locked('snapshot', () => takeSnapshot(this, resolved));
  }

  /**
   * Replaces the worktree with snapshot `reference`'s tree in one atomic
   * swap. Refuses (ERR_WORKTREE_DIRTY) when the worktree has changes its
   * head snapshot does not hold, unless options.force.
   */
  async restore(reference, options = {}) {
    checkReference(reference, 'id');
    const resolved = resolveOptions(options, { force: false, ...common }, 'options');
    return this.#locked('restore', async () => {
      const id = this.#repository.resolve(reference, this.head);
      if (!resolved.force) await this.#refuseDirty(resolved);
      await restoreTree(this, id, resolved);
      return this.#repository.descriptor(id);
    });
  }

  async #refuseDirty(options) {
    const head = this.head;
    const report = await this.#changes(options.threads);
    if (report.ok) return;
    const changes = report.differ.length + report.missing.length + report.extra.length;
    const first = report.differ[0]?.path ?? report.missing[0] ?? report.extra[0];
    /** @type {ArenaCacheError & { changes?: typeof report }} */
    const error = new ArenaCacheError(
      codes.ERR_WORKTREE_DIRTY,
      `the worktree has ${changes} change(s) not in ${head === null ? 'any snapshot' : `its head snapshot ${head}`} (first: ${first}); snapshot them or pass { force: true }`,
    );
    error.changes = report;
    throw error;
  }

  /** Makes a new worktree at `dir` from snapshot `reference`; resolves to its Workspace. */
  async fork(reference, dir, options = {}) {
    checkReference(reference, 'id');
    checkPath(dir, 'dir');
    const resolved = resolveOptions(options, { name: path.basename(path.resolve(dir)), ...common }, 'options');
    checkName(resolved.name, 'options.name');
    const target = await this.#locked('fork', () => forkTree(this, this.#repository.resolve(reference, this.head), dir, resolved));
    return Workspace.open(target);
  }

  /**
   * Recomputes content hashes and reports what differs. `reference` is a
   * snapshot or 'all' (the store: stored bytes against their manifests);
   * with options.worktree, this worktree is compared with the snapshot.
   */
  async verify(reference = 'all', options = {}) {
    if (reference !== 'all') checkReference(reference, 'id');
    const resolved = resolveOptions(options, { worktree: false, threads: defaults.threads, onProgress: null }, 'options');
    return this.#locked(
      'verify',
      async () => {
        if (resolved.worktree) {
          if (reference === 'all') throw new RangeError("id must name one snapshot when options.worktree is true (got 'all')");
          const id = this.#repository.resolve(reference, this.head);
          return diffWorktree(this.#path, id, this.#repository.manifest(id), { ...resolved, rehash: true });
        }
        if (reference === 'all') return verifyStore(this.#repository, this.#repository.ids(), { ...resolved, all: true });
        const [report] = await verifyStore(this.#repository, [this.#repository.resolve(reference, this.head)], { ...resolved, all: false });
        return report;
      },
      { shared: true },
    );
  }

  /** What changed in the worktree since its head snapshot (by file identity, hashing only files that look changed). */
  async status(options = {}) {
    const resolved = resolveOptions(options, { threads: defaults.threads }, 'options');
    return this.#changes(resolved.threads);
  }

  /** The worktree against its head (an empty tree before any), hashing only files whose identity changed. */
  #changes(threads) {
    const head = this.head;
    const manifest = head === null ? { entries: [] } : this.#repository.manifest(head);
    return diffWorktree(this.#path, head, manifest, { rehash: false, threads });
  }

  /** The snapshots, newest first: an array of plain objects, or with format 'table' a table for people. */
  history(options = {}) {
    const resolved = resolveOptions(options, { format: 'json', tag: undefined, limit: undefined }, 'options');
    if (resolved.format !== 'json' && resolved.format !== 'table') throw new RangeError(`options.format must be 'json' or 'table' (got ${describe(resolved.format)})`);
    if (resolved.tag !== undefined) checkName(resolved.tag, 'options.tag');
    if (resolved.limit !== undefined) checkInteger(resolved.limit, 'options.limit', 1, 1e9, { to: null });
    this.#refresh();
    const pins = this.#repository.pins();
    const heads = new Map();
    for (const record of this.#repository.worktreeRecords()) {
      if (record.head) heads.set(record.head, [...(heads.get(record.head) ?? []), record.name]);
    }
    let rows = this.#repository
      .ids()
      .reverse()
      .map((id) => this.#historyRow(id, pins, heads));
    if (resolved.tag !== undefined) rows = rows.filter((row) => row.tags?.includes(resolved.tag));
    if (resolved.limit !== undefined) rows = rows.slice(0, resolved.limit);
    return resolved.format === 'table' ? historyTable(rows) : rows;
  }

  #historyRow(id, pins, heads) {
    let descriptor;
    try {
      descriptor = this.#repository.descriptor(id);
    } catch (error) {
      return { id, corrupt: true, error: error.message };
    }
    return {
      id,
      shortId: shortId(id),
      parent: descriptor.parent,
      time: descriptor.time,
      message: descriptor.message,
      tags: descriptor.tags,
      worktree: descriptor.worktree,
      engine: descriptor.engine.used,
      degraded: descriptor.engine.degraded,
      files: descriptor.files,
      bytes: descriptor.bytes,
      storedBytes: descriptor.storedBytes,
      pin: pins.get(id) ?? null,
      heads: heads.get(id) ?? [],
    };
  }

  /** The descriptor of snapshot `reference`. */
  describe(reference) {
    checkReference(reference, 'id');
    this.#refresh();
    return this.#repository.descriptor(this.#repository.resolve(reference, this.head));
  }

  /** Keeps snapshot `reference` from gc, for good or until options.until (a Date, ISO string or ms since the epoch). */
  async pin(reference, options = {}) {
    checkReference(reference, 'id');
    const resolved = resolveOptions(options, { until: null, durable: defaults.durable }, 'options');
    let until = null;
    if (resolved.until !== null) {
      const time = resolved.until instanceof Date ? resolved.until.getTime() : typeof resolved.until === 'string' ? Date.parse(resolved.until) : resolved.until;
      if (typeof time !== 'number') throw new TypeError(`options.until must be a Date, an ISO date string or ms since the epoch (got ${describe(resolved.until)})`);
      if (!Number.isFinite(time)) throw new RangeError(`options.until must be a valid date (got ${describe(resolved.until)})`);
      until = new Date(time).toISOString();
    }
    return this.#locked('pin', () => {
      const id = this.#repository.resolve(reference, this.head);
      const pin = { until, pinned: new Date().toISOString() };
      writeJson(this.#repository.layout.pin(id), pin, resolved.durable);
      return { id, ...pin };
    });
  }

  /** Removes the pin of snapshot `reference`; resolves to whether there was one. */
  async unpin(reference) {
    checkReference(reference, 'id');
    return this.#locked('unpin', () => {
      const id = this.#repository.resolve(reference, this.head);
      const file = this.#repository.layout.pin(id);
      const existed = existsSync(file);
      rmSync(file, { force: true });
      return existed;
    });
  }

  /**
   * Deletes the snapshots nothing keeps (see gc.js for what keeps one) and
   * the stored files only they used. Resolves to the plan; with
   * options.dryRun nothing is deleted.
   */
  async gc(options = {}) {
    const resolved = resolveOptions(options, { dryRun: false, keepLast: undefined, keepWithin: undefined, durable: defaults.durable }, 'options');
    checkRetention(resolved, 'options');
    return this.#locked('gc', () => {
      const retention = { ...DEFAULT_RETENTION, ...this.#repository.retention };
      if (resolved.keepLast !== undefined) retention.keepLast = resolved.keepLast;
      if (resolved.keepWithin !== undefined) retention.keepWithin = resolved.keepWithin;
      const plan = planGc(this.#repository, retention);
      if (!resolved.dryRun) runGc(this.#repository, plan, resolved.durable);
      return { dryRun: resolved.dryRun, retention, ...plan };
    });
  }
}

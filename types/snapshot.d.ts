// Type declarations for `arenacache/snapshot` (lib/snapshot/index.js):
// workspace snapshots on the native clone engine, and cloneTree.

import type { ArenaCacheError } from './index.js';

export { ArenaCacheError, codes } from './index.js';

/** How new files are stored or copied: 'auto' (reflink, else copy_file_range, else read/write, per file), 'reflink' (required) or 'copy'. */
export type CloneEngine = 'auto' | 'reflink' | 'copy';

/** The engine that stored one file: a clone (reflink, copy_file_range, read/write) or the snapshot's pack. */
export type FileEngine = 'reflink' | 'copy_file_range' | 'copy' | 'pack';

/** What a progress callback is told at most every 50 ms and once at the end. */
export interface Progress<Phase extends ProgressPhase = ProgressPhase> {
  /** Which operation is reporting. */
  phase: Phase;
  /** Files done so far. */
  done: number;
  /** Files to do. */
  total: number;
  /** Bytes done so far. */
  bytes: number;
}

/** The operations that report progress. */
export type ProgressPhase = 'snapshot' | 'restore' | 'fork' | 'verify' | 'clone';

/** A progress callback (null: none). */
export type ProgressCallback<Phase extends ProgressPhase = ProgressPhase> = ((progress: Progress<Phase>) => void) | null;

/** The defaults of the options the workspace methods share (a frozen object). */
export declare const defaults: {
  /** How new files are stored. Default `'auto'`. */
  readonly engine: CloneEngine;
  /** Native threads cloning, packing and hashing files. Default `4`. */
  readonly threads: number;
  /** Files smaller than this go into the snapshot's pack. Default `65536`. */
  readonly packBelow: number;
  /** fsync records and syncfs the data before an operation counts as done. Default `true`. */
  readonly durable: boolean;
};

/** `Workspace.init()` options. */
export interface InitOptions {
  /** Where the repository goes (outside the tree); the tree then gets a pointer to it. Default `<dir>/.arenacache`. */
  repository?: string | undefined;
  /** Retention: gc keeps the newest `keepLast` snapshots. Default `5`. */
  keepLast?: number | undefined;
  /** Retention: gc keeps snapshots younger than this many ms. Default 7 days (`604800000`). */
  keepWithin?: number | undefined;
  /** fsync the new repository's records. Default `true`. */
  durable?: boolean | undefined;
}

/** `workspace.snapshot()` options. */
export interface SnapshotOptions {
  /** A message, up to 4096 characters. Default `''`. */
  message?: string | undefined;
  /** Tags: letters, digits, '.', '_' and '-', at most 64 characters, starting with a letter or digit. Default `[]`. */
  tags?: readonly string[] | undefined;
  /** How new files are stored. Default `'auto'`. */
  engine?: CloneEngine | undefined;
  /** Files smaller than this go into the snapshot's pack (0 to 16 MiB; 0: none). Default `65536`. */
  packBelow?: number | undefined;
  /** Native threads (1 to 64). Default `4`. */
  threads?: number | undefined;
  /** fsync records and syncfs the data before the call resolves. Default `true`. */
  durable?: boolean | undefined;
  /** Called with the progress of the files read. Default `null`. */
  onProgress?: ProgressCallback<'snapshot'> | undefined;
}

/** `workspace.restore()` options. */
export interface RestoreOptions {
  /** Restore over changes the head snapshot does not hold (else ERR_WORKTREE_DIRTY). Default `false`. */
  force?: boolean | undefined;
  /** Native threads (1 to 64). Default `4`. */
  threads?: number | undefined;
  /** fsync records and syncfs the data before the call resolves. Default `true`. */
  durable?: boolean | undefined;
  /** Called with the progress of the files written. Default `null`. */
  onProgress?: ProgressCallback<'restore'> | undefined;
}

/** `workspace.fork()` options. */
export interface ForkOptions {
  /** The new worktree's name, unique in the repository. Default: the directory's name. */
  name?: string | undefined;
  /** Native threads (1 to 64). Default `4`. */
  threads?: number | undefined;
  /** fsync records and syncfs the data before the call resolves. Default `true`. */
  durable?: boolean | undefined;
  /** Called with the progress of the files written. Default `null`. */
  onProgress?: ProgressCallback<'fork'> | undefined;
}

/** `workspace.verify()` options. */
export interface VerifyOptions {
  /** Compare this worktree with the snapshot instead of checking the stored bytes. Default `false`. */
  worktree?: boolean | undefined;
  /** Native threads (1 to 64). Default `4`. */
  threads?: number | undefined;
  /** Called with the progress of the files hashed. Default `null`. */
  onProgress?: ProgressCallback<'verify'> | undefined;
}

/** `workspace.status()` options. */
export interface StatusOptions {
  /** Native threads (1 to 64). Default `4`. */
  threads?: number | undefined;
}

/** `workspace.history()` options. */
export interface HistoryOptions {
  /** 'json': an array of rows; 'table': a table for people. Default `'json'`. */
  format?: 'json' | 'table' | undefined;
  /** Only the snapshots with this tag. Default: all. */
  tag?: string | undefined;
  /** At most this many rows (newest first). Default: all. */
  limit?: number | undefined;
}

/** `workspace.pin()` options. */
export interface PinOptions {
  /** Until when the pin holds: a Date, an ISO date string or ms since the epoch; null: for good. Default `null`. */
  until?: Date | string | number | null | undefined;
  /** fsync the pin record. Default `true`. */
  durable?: boolean | undefined;
}

/** `workspace.gc()` options. */
export interface GcOptions {
  /** Plan only: delete nothing. Default `false`. */
  dryRun?: boolean | undefined;
  /** Keep the newest this many snapshots. Default: the repository's retention (5 unless init said otherwise). */
  keepLast?: number | undefined;
  /** Keep snapshots younger than this many ms. Default: the repository's retention (7 days unless init said otherwise). */
  keepWithin?: number | undefined;
  /** fsync the records. Default `true`. */
  durable?: boolean | undefined;
}

/** `cloneTree()` options. */
export interface CloneTreeOptions {
  /** How files are copied. Default `'auto'`. */
  engine?: CloneEngine | undefined;
  /** Native threads (1 to 64). Default `4`. */
  threads?: number | undefined;
  /** Called with the progress of the files copied. Default `null`. */
  onProgress?: ProgressCallback<'clone'> | undefined;
}

/** One file that fell back from reflink (where the probe said reflink works). */
export interface EngineFallback {
  path: string;
  /** The engine it got instead. */
  engine: 'copy_file_range' | 'copy';
  /** Why reflink failed for it (such as 'ENOTSUP'), or null. */
  code: ErrnoName | null;
}

/** Which engines a snapshot (or cloneTree) used. */
export interface EngineSummary {
  /** The engine asked for. */
  requested: CloneEngine;
  /** The weakest clone engine any file needed ('pack' when every new file was packed; 'none' when no file was stored). */
  used: FileEngine | 'none';
  /** Whether the strict FICLONE probe succeeded (source and target on one filesystem that clones). */
  reflinkSupported: boolean;
  /** Whether reflink worked in the probe but some file still fell back. */
  degraded: boolean;
  /** Files per engine; `reused`: taken unchanged from the parent snapshot. */
  counts: { reflink: number; copy_file_range: number; copy: number; pack: number; reused: number };
  /** The first 20 files that fell back from reflink, and why. */
  fallbacks: EngineFallback[];
}

/** Why an entry was left out of a snapshot. */
export type SkipReason =
  | 'fifo'
  | 'socket'
  | 'character device'
  | 'block device'
  | 'special file'
  | 'removed during the snapshot'
  | 'directory removed or moved during the snapshot';

/** An entry left out of a snapshot (or of a cloneTree copy). */
export interface SkippedEntry<Reason extends string = SkipReason> {
  path: string;
  reason: Reason;
}

/** A snapshot's descriptor (its record in the repository, checksummed). */
export interface SnapshotDescriptor {
  format: 'arenacache-snapshot/1';
  /** `20261122T101530123Z-3f9a1c`: creation time, then six random hex digits. */
  id: string;
  /** The worktree's head when it was taken (its lineage), or null. */
  parent: string | null;
  /** The worktree it was taken of. */
  worktree: string;
  /** When it was taken (ISO 8601). */
  time: string;
  message: string;
  tags: string[];
  engine: EngineSummary;
  files: number;
  directories: number;
  symlinks: number;
  /** The files' sizes, summed. */
  bytes: number;
  /** Bytes newly stored by this snapshot. */
  storedBytes: number;
  /** Special files and entries removed during the snapshot, left out. */
  skipped: SkippedEntry[];
  /** Files written while they were read, stored as read. */
  unstable: string[];
  /** SHA-256 over every entry's type, path, mode, size and content hash. */
  payloadChecksum: string;
  /** SHA-256 of the manifest file. */
  manifestChecksum: string;
  /** SHA-256 over every entry's identity (for the next snapshot). */
  treeDigest: string;
  /** Whether every file's identity was trusted (for the next snapshot). */
  keysTrusted: boolean;
  /** SHA-256 over the rest of the descriptor (canonical JSON). */
  descriptorChecksum: string;
}

/** A pin, as `pin()` resolves to it and `history()` shows it. */
export interface PinRecord {
  /** When the pin expires (ISO 8601), or null: never. */
  until: string | null;
  /** When it was pinned (ISO 8601). */
  pinned: string;
}

/** One row of `history()`. */
export interface HistoryEntry {
  id: string;
  /** The last six hex digits of the id. */
  shortId: string;
  parent: string | null;
  time: string;
  message: string;
  tags: string[];
  worktree: string;
  /** descriptor.engine.used */
  engine: FileEngine | 'none';
  /** descriptor.engine.degraded */
  degraded: boolean;
  files: number;
  bytes: number;
  storedBytes: number;
  /** Its pin, or null. */
  pin: PinRecord | null;
  /** The worktrees whose head it is. */
  heads: string[];
  corrupt?: undefined;
}

/** A `history()` row for a snapshot whose descriptor cannot be read. */
export interface CorruptHistoryEntry {
  id: string;
  corrupt: true;
  /** Why it cannot be read. */
  error: string;
}

/** An OS error code as the native engine names it: 'EACCES', 'EIO', ... ('E' and the number when it has no name). */
export type ErrnoName = `E${string}`;

/** A stored file whose bytes differ from its manifest entry. */
export type StoredDifference =
  | { path: string; reason: 'size'; expected: number; actual: number }
  | { path: string; reason: 'content' }
  /** The stored file could not be read. */
  | { path: string; reason: ErrnoName };

/** What `verify(id)` reports of one snapshot's stored bytes. */
export interface SnapshotVerifyReport {
  id: string;
  ok: boolean;
  /** Files checked. */
  files: number;
  /** Their sizes, summed. */
  bytes: number;
  /** 'ok', or why the descriptor cannot be read. */
  descriptor: string;
  /** 'ok', or why the manifest cannot be read (its files are then not checked). */
  manifest: string;
  differ: StoredDifference[];
  /** Files whose stored bytes are gone. */
  missing: string[];
  /** Always empty (see StoreVerifyReport.extra). */
  extra: string[];
}

/** What `verify('all')` reports. */
export interface StoreVerifyReport {
  /** Whether every snapshot is intact and no stored file is unused. */
  ok: boolean;
  snapshots: SnapshotVerifyReport[];
  /** Stored files (relative to the repository) no snapshot uses; gc removes them. */
  extra: string[];
}

/** A worktree entry that differs from the snapshot. */
export type WorktreeDifference =
  | { path: string; reason: 'type'; expected: EntryKind; actual: EntryKind | '' }
  | { path: string; reason: 'target'; expected: string; actual: string }
  | { path: string; reason: 'mode' | 'size'; expected: number; actual: number }
  | { path: string; reason: 'content' }
  /** The file could not be read. */
  | { path: string; reason: ErrnoName };

/** The kinds of worktree entries. */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'special file';

/**
 * A worktree compared with a snapshot: `status()`, `verify(id, { worktree: true })`,
 * and `error.changes` of ERR_WORKTREE_DIRTY. (A type alias, so that it
 * fits the index signature of ArenaCacheError#changes.)
 */
export type WorktreeReport = {
  /** The snapshot compared with (null for status() before any snapshot). */
  id: string | null;
  /** The worktree directory. */
  worktree: string;
  ok: boolean;
  /** Files compared. */
  files: number;
  /** Their sizes in the snapshot, summed. */
  bytes: number;
  differ: WorktreeDifference[];
  /** Paths in the snapshot, not in the worktree. */
  missing: string[];
  /** Paths in the worktree, not in the snapshot (special files aside). */
  extra: string[];
};

/** What `gc()` resolves to: the plan, carried out unless `dryRun`. */
export interface GcResult {
  dryRun: boolean;
  /** The retention applied. */
  retention: { keepLast: number; keepWithin: number };
  /** Snapshots deleted (or to be). */
  delete: string[];
  /** Snapshots kept, and why. */
  keep: Array<{ id: string; reasons: string[] }>;
  /** Stored files (relative to the repository) deleted (or to be). */
  files: string[];
  /** Their bytes. */
  bytes: number;
  /** Worktrees whose directory is gone, forgotten. */
  staleWorktrees: string[];
  /** Whether stored files were swept (false when a kept snapshot's manifest cannot be read). */
  sweep: boolean;
  /** Why nothing was swept, or null. */
  sweepBlockedBy: string | null;
}

/** An interrupted operation that `Workspace.open()` finished or undid. */
export type RecoveredOperation =
  | { op: 'snapshot'; id: string; outcome: 'completed' | 'removed' }
  | { op: 'restore'; id: string; outcome: 'completed' | 'undone' }
  | { op: 'fork'; id: string; outcome: 'completed' | 'removed' }
  /** gc, or an operation this version does not know: its record is dropped. */
  | { op: string; id?: undefined; outcome: 'dropped' };

/** What `cloneTree()` resolves to. */
export interface CloneResult {
  files: number;
  directories: number;
  symlinks: number;
  /** The files' sizes, summed. */
  bytes: number;
  /** Special files, not copied. */
  skipped: SkippedEntry<'special file'>[];
  engine: EngineSummary;
  /** Each file's path (relative) and the engine that copied it. */
  perFile: Record<string, 'reflink' | 'copy_file_range' | 'copy'>;
}

/** One file that could not be read or written (ERR_SNAPSHOT_IO). */
export interface SnapshotIoFailure {
  path: string;
  /** The OS error code, such as 'EACCES'. */
  code: ErrnoName;
  /** The OS error number (positive). */
  errno: number;
  syscall: string;
}

/** ERR_SNAPSHOT_IO: files could not be read or written (the first one's OS error is the `cause`). */
export interface SnapshotIoError extends ArenaCacheError {
  code: 'ERR_SNAPSHOT_IO';
  failures: SnapshotIoFailure[];
}

/** ERR_WORKTREE_DIRTY: restore() over changes the head snapshot does not hold. */
export interface WorktreeDirtyError extends ArenaCacheError {
  code: 'ERR_WORKTREE_DIRTY';
  /** The status report of the worktree. */
  changes: WorktreeReport;
}

/** ERR_SNAPSHOT_CORRUPT; from restore and fork, with the stored files found missing or damaged. */
export interface SnapshotCorruptError extends ArenaCacheError {
  code: 'ERR_SNAPSHOT_CORRUPT';
  problems?: Array<{ path: string; problem: 'missing' | 'differs' }>;
}

/**
 * A worktree and the repository of its snapshots. Made by
 * `Workspace.init()` and `Workspace.open()` (and `fork()`).
 * Snapshots are referred to by id, the id's last six hex digits, a tag (its
 * newest snapshot) or `'head'`.
 */
export declare class Workspace {
  #private;
  private constructor();

  /** Makes `dir` (created if missing) a workspace and resolves to it; ERR_WORKSPACE_EXISTS if it is one. */
  static init(dir: string, options?: InitOptions): Promise<Workspace>;
  /** Opens the workspace (or fork) at `dir`, finishing or undoing what an interrupted operation left. */
  static open(dir: string): Promise<Workspace>;

  /** The worktree directory. */
  readonly path: string;
  /** The repository directory. */
  readonly repositoryPath: string;
  /** This worktree's name ('main' for the one made by init). */
  readonly name: string;
  /** The snapshot this worktree was last snapshotted as, restored to or forked from; null before any. */
  readonly head: string | null;
  /** What open() recovered (empty when another process held the workspace lock). */
  readonly recovered: RecoveredOperation[];

  /** Takes a snapshot of the worktree, makes it the head, and resolves to its descriptor. */
  snapshot(options?: SnapshotOptions): Promise<SnapshotDescriptor>;
  /**
   * Replaces the worktree with snapshot `reference`'s tree in one atomic
   * swap and resolves to its descriptor; ERR_WORKTREE_DIRTY
   * ({@link WorktreeDirtyError}) over unsnapshotted changes unless `force`.
   */
  restore(reference: string, options?: RestoreOptions): Promise<SnapshotDescriptor>;
  /** Makes a new worktree at `dir` (missing or empty) from snapshot `reference`; resolves to its Workspace. */
  fork(reference: string, dir: string, options?: ForkOptions): Promise<Workspace>;

  /** Checks the stored bytes of every snapshot against their manifests (the default reference, 'all'). */
  verify(reference?: 'all', options?: VerifyOptions & { worktree?: false | undefined }): Promise<StoreVerifyReport>;
  /** Compares this worktree with snapshot `reference`, hashing every file. */
  verify(reference: string, options: VerifyOptions & { worktree: true }): Promise<WorktreeReport>;
  /** Checks the stored bytes of snapshot `reference` (a reference typed as a plain string is taken to name one snapshot, not 'all'). */
  verify(reference: string, options?: VerifyOptions & { worktree?: false | undefined }): Promise<SnapshotVerifyReport>;
  verify(reference?: string, options?: VerifyOptions): Promise<StoreVerifyReport | SnapshotVerifyReport | WorktreeReport>;

  /** What changed in the worktree since its head snapshot (hashing only files whose identity changed). */
  status(options?: StatusOptions): Promise<WorktreeReport>;

  /** The snapshots, newest first. */
  history(options?: HistoryOptions & { format?: 'json' | undefined }): Array<HistoryEntry | CorruptHistoryEntry>;
  /** The snapshots, newest first, as a table for people. */
  history(options: HistoryOptions & { format: 'table' }): string;
  history(options?: HistoryOptions): Array<HistoryEntry | CorruptHistoryEntry> | string;

  /** The descriptor of snapshot `reference`, its checksum checked. */
  describe(reference: string): SnapshotDescriptor;

  /** Keeps snapshot `reference` from gc, for good or until `options.until`. */
  pin(reference: string, options?: PinOptions): Promise<PinRecord & { id: string }>;
  /** Removes the pin of snapshot `reference`; resolves to whether there was one. */
  unpin(reference: string): Promise<boolean>;

  /** Deletes the snapshots nothing keeps and the stored files only they used (with `dryRun`, only plans). */
  gc(options?: GcOptions): Promise<GcResult>;
}

/**
 * The clone engine on its own, `cp -a` for a tree: copies `source` to
 * `target` (which must not exist), keeping modes, times, symbolic links and
 * empty directories; special files are skipped.
 */
export declare function cloneTree(source: string, target: string, options?: CloneTreeOptions): Promise<CloneResult>;

export {};

// Type declarations for `arenacache/meta` (lib/inode-fs/index.js): InodeFS, a
// filesystem whose inodes live in lmdb, and its Snapshots.

import type { SharedCache } from './index.js';
import type {
  CachedStats,
  MkdirOptions,
  OpenFlags,
  ReadFileOptions,
  RmOptions,
  WriteData,
  WriteFileOptions,
  WriteResult,
} from './fs.js';
import type { FileReadResult } from 'node:fs/promises';

/** The options of `InodeFS.open(path, options)`. */
export interface InodeFSOptions {
  /** Entries (inode records and directory entries) of the private inode cache, 0 (none) to 16777216. Default `1000`. */
  cacheSize?: number | undefined;
  /** A SharedCache to use as the inode cache instead of a private one (give the same to every thread). Default: none. */
  cache?: SharedCache<any, any> | undefined;
  /** lmdb reader slots: how many ephemeral snapshots can be open at once (1 to 65536). Default `126`. */
  maxReaders?: number | undefined;
  /** Files up to this size are stored in their inode record (0 to 1048576). Default `4096`. */
  inlineBytes?: number | undefined;
  /** The chunk size of larger files in the blob store (4096 to 67108864). Default `262144`. */
  chunkBytes?: number | undefined;
  /** Each write is on disk (fsync) before it resolves. Default `true`. */
  durable?: boolean | undefined;
  /** File mode of the store's files when they are created, set exactly (group and others may not write). Default `0o600`. */
  mode?: number | undefined;
}

/** InodeFS `mkdir()` options (an object: a bare mode number is not taken). */
export interface InodeMkdirOptions extends MkdirOptions {}

/** One entry of `walk()`. */
export interface WalkEntry {
  /** The entry's absolute path ("/a/b"). */
  path: string;
  /** Its stats (links are reported, not followed). */
  stats: CachedStats;
}

/** What `copyTo()` and `copyToDir()` resolve to. */
export interface CopyCounts {
  files: number;
  directories: number;
  symlinks: number;
  /** The files' sizes, summed. */
  bytes: number;
}

/** The options of `copyTo()` and `copyToDir()`. */
export interface CopyOptions {
  /** The directory of the view to copy. Default `'/'`. */
  from?: string | undefined;
}

/** A file handle of a copy target, as `copyTo()` uses it for sparse and large files. */
export interface CopyTargetHandle {
  write(buffer: Buffer, offset: number, length: number, position: number): unknown;
  truncate(length: number): unknown;
  close(): unknown;
}

/**
 * What `copyTo()` copies into besides an InodeFS: anything with
 * node:fs/promises' `mkdir`, `writeFile`, `symlink` and `readdir` (taking
 * the target's absolute paths). `open` lets sparse and large files be
 * copied a piece at a time; `chmod`, `utimes` and `lutimes`, where present,
 * keep modes and times.
 */
export interface CopyTarget {
  mkdir(path: string, options?: { recursive: true }): unknown;
  writeFile(path: string, data: Buffer, options: { mode: number }): unknown;
  symlink(target: string, path: string): unknown;
  readdir(path: string): PromiseLike<ArrayLike<unknown>> | ArrayLike<unknown>;
  open?(path: string, flags: 'w', mode: number): PromiseLike<CopyTargetHandle> | CopyTargetHandle;
  chmod?(path: string, mode: number): unknown;
  utimes?(path: string, atime: Date, mtime: Date): unknown;
  lutimes?(path: string, atime: Date, mtime: Date): unknown;
}

/**
 * What `open()` of an InodeFS or a Snapshot resolves to: shaped like
 * node:fs FileHandle (no `fd`). It follows its file across renames and
 * holds it (a removed file lives on until its last handle closes). Not constructible.
 */
export interface InodeFileHandle {
  /**
   * Reads `length` bytes (default: the rest of the buffer) into `buffer` at
   * `offset` (default 0), from `position` in the file (null or undefined:
   * the handle's position, which then advances).
   */
  read<T extends Uint8Array>(buffer: T, offset?: number | null, length?: number | null, position?: number | null): Promise<FileReadResult<T>>;
  /**
   * Writes `length` bytes (default: the rest of the buffer) of `buffer` from
   * `offset` (default 0) at `position` (null or undefined: the handle's
   * position, which then advances; `a` flags always append).
   */
  write<T extends Uint8Array>(buffer: T, offset?: number | null, length?: number | null, position?: number | null): Promise<WriteResult<T>>;
  /** Truncates (or extends with zeros) the file to `length` bytes. Default `0`. */
  truncate(length?: number): Promise<void>;
  /** The file's stats. */
  stat(): Promise<CachedStats>;
  /** The whole file, whatever the handle's position. */
  readFile(): Promise<Buffer>;
  /** Closes the handle (a removed file it held goes now); later calls fail with ERR_HANDLE_CLOSED. Closing twice is harmless. */
  close(): Promise<void>;
}

/**
 * The reads an InodeFS and its snapshots share. Paths are absolute ("/a/b");
 * every call has a promise form and a synchronous one.
 */
export interface FsReader {
  /** The stats of `path` (its last link followed). */
  stat(path: string): Promise<CachedStats>;
  statSync(path: string): CachedStats;
  /** The stats of `path` itself (a last link not followed). */
  lstat(path: string): Promise<CachedStats>;
  lstatSync(path: string): CachedStats;

  /** The contents of `path`: a Buffer, or a string with an encoding. */
  readFile(path: string, options?: { encoding?: null | undefined } | null): Promise<Buffer>;
  readFile(path: string, options: BufferEncoding | { encoding: BufferEncoding }): Promise<string>;
  readFile(path: string, options?: ReadFileOptions): Promise<string | Buffer>;
  readFileSync(path: string, options?: { encoding?: null | undefined } | null): Buffer;
  readFileSync(path: string, options: BufferEncoding | { encoding: BufferEncoding }): string;
  readFileSync(path: string, options?: ReadFileOptions): string | Buffer;

  /** The names in directory `path`, in byte order. */
  readdir(path: string): Promise<string[]>;
  readdirSync(path: string): string[];
  /** The target of symbolic link `path`. */
  readlink(path: string): Promise<string>;
  readlinkSync(path: string): string;

  /** Every entry under directory `path` (default `'/'`), depth first in name order. */
  walk(path?: string): AsyncGenerator<WalkEntry, void, unknown>;

  /**
   * Copies directory `options.from` (default `'/'`) to `path` (absolute) in
   * `target`; `path` is created if missing and must be empty.
   */
  copyTo(target: InodeFS | CopyTarget, path: string, options?: CopyOptions): Promise<CopyCounts>;
  /** Copies directory `options.from` (default `'/'`) to directory `dir` on disk (created if missing; must be empty). */
  copyToDir(dir: string, options?: CopyOptions): Promise<CopyCounts>;
}

/** A persistent snapshot, as `listSnapshots()` lists it. */
export interface PersistentSnapshotInfo {
  name: string;
  /** When it was taken, in ms since the epoch. */
  createdAt: number;
}

/** `createSnapshot()` options. */
export interface CreateSnapshotOptions {
  /** Keep the snapshot in the store, across restarts, until deleteSnapshot(). Default `false` (ephemeral). */
  persist?: boolean | undefined;
}

/** What `fsck()` can find. */
export type FsckProblemKind =
  | 'dangling-dirent'
  | 'dirent-type'
  | 'dirent-parent'
  | 'dir-parent'
  | 'orphan'
  | 'nlink'
  | 'dir-links'
  | 'inode-type'
  | 'root'
  | 'size'
  | 'blob-refs'
  | 'missing-blob'
  | 'unreferenced-blob'
  | 'snapshot-epoch'
  | 'unreclaimed-history'
  | 'next-ino';

/** One problem `fsck()` found. */
export interface FsckProblem {
  kind: FsckProblemKind;
  /** The inode concerned, where one is. */
  ino?: number | undefined;
  /** Its path, where known. */
  path?: string | undefined;
  message: string;
}

/** What `fsck()` returns. */
export interface FsckReport {
  /** Whether no problem was found. */
  ok: boolean;
  problems: FsckProblem[];
  /** What was checked. */
  checked: { inodes: number; dirents: number; blobs: number; snapshots: number; history: number };
}

/** What `cacheStats()` returns. */
export interface InodeCacheStats {
  /** Entries in the cache now. */
  size: number;
  /** Entries it holds at most. */
  maxSize: number;
  hits: number;
  misses: number;
  /** hits / (hits + misses), from 0 to 1 (0 before any lookup). */
  hitRate: number;
}

/**
 * A filesystem whose inodes and directory entries live in lmdb, with an
 * inode cache and snapshots. Made by `InodeFS.open()`. Errors have node:fs's
 * shape (`code`, `errno`, `syscall`, `path`).
 */
export declare class InodeFS {
  #private;
  private constructor();

  /** Opens (or creates) the store at `path` (an lmdb file). */
  static open(path: string, options?: InodeFSOptions): Promise<InodeFS>;

  /** The lmdb file. */
  readonly path: string;

  /** Writes `data` as the whole contents of `path`. */
  writeFile(path: string, data: WriteData, options?: WriteFileOptions): Promise<void>;
  writeFileSync(path: string, data: WriteData, options?: WriteFileOptions): void;
  /** Appends `data` to `path`, creating it if needed. */
  appendFile(path: string, data: WriteData, options?: WriteFileOptions): Promise<void>;
  appendFileSync(path: string, data: WriteData, options?: WriteFileOptions): void;

  /** Creates directory `path`; with `recursive`, resolves to the first directory created (absolute), or undefined. */
  mkdir(path: string, options: InodeMkdirOptions & { recursive: true }): Promise<string | undefined>;
  mkdir(path: string, options?: (InodeMkdirOptions & { recursive?: false | undefined }) | null): Promise<undefined>;
  mkdir(path: string, options?: InodeMkdirOptions | null): Promise<string | undefined>;
  mkdirSync(path: string, options: InodeMkdirOptions & { recursive: true }): string | undefined;
  mkdirSync(path: string, options?: (InodeMkdirOptions & { recursive?: false | undefined }) | null): undefined;
  mkdirSync(path: string, options?: InodeMkdirOptions | null): string | undefined;

  /** Creates symbolic link `path` pointing to `target`. */
  symlink(target: string, path: string): Promise<void>;
  symlinkSync(target: string, path: string): void;
  /** Removes file (or link) `path`. */
  unlink(path: string): Promise<void>;
  unlinkSync(path: string): void;
  /** Removes `path`. */
  rm(path: string, options?: RmOptions | null): Promise<void>;
  rmSync(path: string, options?: RmOptions | null): void;
  /** Renames `from` to `to` (POSIX rules). */
  rename(from: string, to: string): Promise<void>;
  renameSync(from: string, to: string): void;
  /** Cuts the file at `path` to `length` bytes (default 0), or extends it with zeros. */
  truncate(path: string, length?: number): Promise<void>;
  truncateSync(path: string, length?: number): void;
  /** Sets the permission bits of `path` (links are followed). */
  chmod(path: string, mode: number): Promise<void>;
  chmodSync(path: string, mode: number): void;
  /** Sets the access and modification times of `path`: Dates, or seconds since the epoch. */
  utimes(path: string, atime: Date | number, mtime: Date | number): Promise<void>;
  utimesSync(path: string, atime: Date | number, mtime: Date | number): void;

  /**
   * Opens `path` with node:fs flags (default `'r'`; a created file gets
   * `mode`, default `0o666`) and resolves to a handle.
   */
  open(path: string, flags?: OpenFlags, mode?: number): Promise<InodeFileHandle>;

  /**
   * A point-in-time, read-only view: ephemeral (an lmdb read transaction)
   * by default, persistent with `{ persist: true }` (names of at most 255 bytes).
   */
  createSnapshot(name: string, options?: CreateSnapshotOptions): Snapshot;
  /** The persistent snapshots, oldest first. */
  listSnapshots(): PersistentSnapshotInfo[];
  /** A handle to persistent snapshot `name` (ERR_SNAPSHOT_NOT_FOUND if none); release() it when done. */
  openSnapshot(name: string): Snapshot;
  /**
   * Deletes persistent snapshot `name` (its open handles end) and resolves
   * to how many history records were reclaimed.
   */
  deleteSnapshot(name: string): Promise<number>;

  /** Checks the store's invariants in one read transaction. */
  fsck(): FsckReport;

  /** The inode cache's counters. */
  cacheStats(): InodeCacheStats;
  /** Replaces the private inode cache by one of `size` entries (0: none); ERR_INODEFS_CLOSED with options.cache. */
  setCacheSize(size: number): void;
  /** Empties the inode cache. */
  flushCache(): void;

  /**
   * Releases open snapshots and closes the store; later calls fail with
   * ERR_INODEFS_CLOSED. Resolves when lmdb has closed; undefined when
   * it was closed already.
   */
  close(): Promise<void> | undefined;
}
export interface InodeFS extends FsReader {}

/**
 * A read-only view of an InodeFS: ephemeral (`createSnapshot(name)`) or
 * persistent (`createSnapshot(name, { persist: true })`, `openSnapshot(name)`).
 * Writes fail with EROFS. Not constructible.
 */
export declare class Snapshot {
  #private;
  private constructor();

  /** The name it was created or opened with. */
  readonly name: string;
  /** When it was taken, in ms since the epoch. */
  readonly createdAt: number;
  /** Whether it is kept in the store (else an ephemeral lmdb read transaction). */
  readonly persistent: boolean;
  /** Whether this handle has ended (released, or the snapshot deleted). */
  readonly released: boolean;

  /**
   * Ends this handle: an ephemeral snapshot's reader slot is freed; a
   * persistent snapshot stays in the store. Later calls fail with ERR_INODEFS_CLOSED.
   */
  release(): void;

  /** Opens `path` for reading (other flags fail with EROFS). */
  open(path: string, flags?: 'r' | 'rs'): Promise<InodeFileHandle>;

  /** Always rejects with EROFS. */
  writeFile(path: string, data: WriteData, options?: WriteFileOptions): Promise<never>;
  /** Always throws EROFS. */
  writeFileSync(path: string, data: WriteData, options?: WriteFileOptions): never;
  /** Always rejects with EROFS. */
  appendFile(path: string, data: WriteData, options?: WriteFileOptions): Promise<never>;
  /** Always throws EROFS. */
  appendFileSync(path: string, data: WriteData, options?: WriteFileOptions): never;
  /** Always rejects with EROFS. */
  mkdir(path: string, options?: InodeMkdirOptions | null): Promise<never>;
  /** Always throws EROFS. */
  mkdirSync(path: string, options?: InodeMkdirOptions | null): never;
  /** Always rejects with EROFS. */
  symlink(target: string, path: string): Promise<never>;
  /** Always throws EROFS. */
  symlinkSync(target: string, path: string): never;
  /** Always rejects with EROFS. */
  unlink(path: string): Promise<never>;
  /** Always throws EROFS. */
  unlinkSync(path: string): never;
  /** Always rejects with EROFS. */
  rm(path: string, options?: RmOptions | null): Promise<never>;
  /** Always throws EROFS. */
  rmSync(path: string, options?: RmOptions | null): never;
  /** Always rejects with EROFS. */
  rename(from: string, to: string): Promise<never>;
  /** Always throws EROFS. */
  renameSync(from: string, to: string): never;
  /** Always rejects with EROFS. */
  truncate(path: string, length?: number): Promise<never>;
  /** Always throws EROFS. */
  truncateSync(path: string, length?: number): never;
  /** Always rejects with EROFS. */
  chmod(path: string, mode: number): Promise<never>;
  /** Always throws EROFS. */
  chmodSync(path: string, mode: number): never;
  /** Always rejects with EROFS. */
  utimes(path: string, atime: Date | number, mtime: Date | number): Promise<never>;
  /** Always throws EROFS. */
  utimesSync(path: string, atime: Date | number, mtime: Date | number): never;
}
export interface Snapshot extends FsReader {}

export {};

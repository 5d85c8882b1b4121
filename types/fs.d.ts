// Type declarations for `arenacache/fs` (lib/fs/index.js): CacheFS, a
// directory (or an InodeFS) served through a SharedCache.

import { EventEmitter } from 'node:events';
import type { StatsBase } from 'node:fs';
import type { FileReadResult } from 'node:fs/promises';
import type { ArenaCacheError, BlockStore, MetricsRegistry, SharedCache } from './index.js';
import type { InodeFS } from './meta.js';

/**
 * What `stat()` resolves to: a plain object shaped like node:fs `Stats` (the
 * same number fields, `Date` fields and `is*()` methods), but not an
 * instance of `fs.Stats`. A CacheFS over a directory gives its file
 * handles' `stat()` real `fs.Stats`, which have this shape too.
 */
export interface CachedStats extends StatsBase<number> {}

/** How CacheFS writes reach the disk and the cache (see {@link CacheFSOptions.writeMode}). */
export type WriteMode = 'write-through' | 'write-back' | 'write-around';

/**
 * node:fs open flags, as CacheFS and InodeFS accept them (a string: numeric
 * flags are refused). The exclusive `x` may stand anywhere in a flag that
 * creates (`'wx'`, `'xw'`, `'a+x'`, ...).
 */
export type OpenFlags =
  | 'r' | 'rs' | 'r+' | 'rs+'
  | 'w' | 'w+' | 'wx' | 'xw' | 'wx+' | 'xw+' | 'w+x'
  | 'a' | 'a+' | 'ax' | 'xa' | 'ax+' | 'xa+' | 'a+x'
  | 'as' | 'as+' | 'asx' | 'axs' | 'xas' | 'as+x' | 'asx+' | 'axs+' | 'xas+';

/** The encoding argument of readFile-style calls: an encoding, or `{ encoding }` (null or absent: a Buffer). */
export type ReadFileOptions = BufferEncoding | { encoding?: BufferEncoding | null | undefined } | null;

/** The options of writeFile-style calls: an encoding, or `{ encoding, mode }`. */
export type WriteFileOptions =
  | BufferEncoding
  | {
      /** How a string `data` is encoded. Default `'utf8'`. */
      encoding?: BufferEncoding | undefined;
      /** Permission bits (0 to 0o7777) of a file the call creates. Default `0o666`. */
      mode?: number | undefined;
    }
  | null;

/** What writeFile-style calls write: a string (encoded), or the bytes of a Buffer, TypedArray or DataView. */
export type WriteData = string | NodeJS.ArrayBufferView;

/** mkdir's options: a mode, or `{ recursive, mode }`, as node:fs takes them. */
export interface MkdirOptions {
  /** Create missing parents too, and resolve to the first directory created. Default `false`. */
  recursive?: boolean | undefined;
  /** Permission bits (0 to 0o7777) of the directories created. Default `0o777`. */
  mode?: number | undefined;
}

/** rm's options (node:fs's `maxRetries` and `retryDelay` are refused: nothing is retried). */
export interface RmOptions {
  /** Remove a directory and everything under it (links are removed, never followed). Default `false`. */
  recursive?: boolean | undefined;
  /** A missing path is not an error. Default `false`. */
  force?: boolean | undefined;
}

/** What a file handle's `write()` resolves to, as node:fs FileHandle#write. */
export interface WriteResult<T extends Uint8Array = Buffer> {
  bytesWritten: number;
  buffer: T;
}

/** `cfs.registerMetrics()` options. */
export interface FsMetricsOptions {
  /** The value of the `fs` label, unique per registry and prefix. Default `'default'`. */
  name?: string | undefined;
  /** The metric name prefix. Default `'arenacache_fs_'`. */
  prefix?: string | undefined;
}

/** Options common to every CacheFS, whatever its write mode. */
interface CacheFSBaseOptions {
  /**
   * What is served (required): the path of a directory (every path is
   * confined to it; needs the native addon), or an InodeFS (its whole tree).
   */
  root: string | InodeFS;
  /** The SharedCache holding file data and metadata (required). */
  cache: SharedCache<any, any>;
  /** How often write-back flushes dirty files in the background (ms; 0: only on flush(), close() and process exit). Default `1000`. */
  flushIntervalMs?: number | undefined;
  /** How long cached metadata is trusted before it is checked against the disk again (ms; 0: every call). Default `1000`. */
  validateMs?: number | undefined;
  /**
   * The coarsest timestamp granularity to assume for the files served (ms, 0 to 86400000): a file changed
   * less than its granularity (plus a 30 ms margin) before a read is read from the disk and not cached (the
   * racily clean rule). CacheFS judges each file by its ctime: 2000 for whole-second stamps, 20 for finer
   * ones; raise it by the clock skew of a file system stamped by another machine (NFS, SMB, FUSE). Default `0`.
   */
  timestampGranularityMs?: number | undefined;
  /** File data is cached in blocks of this many bytes (4096 to 67108864, and within one cache entry). Default `262144`. */
  blockBytes?: number | undefined;
  /** Files larger than this are read from disk and not cached (and written through in write-back mode). Default `67108864`. */
  maxFileBytes?: number | undefined;
  /** Bytes of this instance's private copies of files it just read from the cache (the near cache); 0: off. Default `1048576`. */
  nearCacheBytes?: number | undefined;
  /** A file where per-path read counts are saved (close(), process exit, saveAccessStats()) for warmFromStats(). Default: none. */
  accessStatsPath?: string | undefined;
  /** Paths kept in the access statistics, most-read first (1 to 10000000). Default `10000`. */
  accessStatsLimit?: number | undefined;
}

/** The options of `new CacheFS(options)`: `blocks` is required for `'write-back'`. */
export type CacheFSOptions = CacheFSBaseOptions &
  (
    | {
        /**
         * 'write-through': the disk, then the cache, before the call resolves;
         * 'write-around': the disk, and the cache forgets the file. Default `'write-through'`.
         */
        writeMode?: 'write-through' | 'write-around' | undefined;
        /** The BlockStore of the root's dirty files: give every CacheFS of the root the same one, whatever its mode. Default: none. */
        blocks?: BlockStore | undefined;
      }
    | {
        /** 'write-back': the cache and `blocks` now, the disk on the next flush. */
        writeMode: 'write-back';
        /** The BlockStore holding dirty files until they are flushed (required for 'write-back'). */
        blocks: BlockStore;
      }
  );

/** This instance's counters (see `cfs.stats()`). */
export interface CacheFSStats {
  /** readFile() calls. */
  reads: number;
  /** readFile() calls served from the cache (near-cache hits included). */
  readHits: number;
  /** readFile() calls served from the near cache. */
  nearHits: number;
  /** readFile() calls that read the disk. */
  readMisses: number;
  /** Bytes returned by readFile(). */
  bytesRead: number;
  /** writeFile() and appendFile() calls. */
  writes: number;
  /** Bytes written by writeFile() and appendFile(). */
  bytesWritten: number;
  /** stat() calls. */
  stats: number;
  /** stat() calls served from the cache. */
  statHits: number;
  /** Cached metadata checked against the disk after validateMs. */
  validations: number;
  /** Files found changed behind the cache's back. */
  staleFiles: number;
  /** readFile() calls that read a file changed too recently for its stats to show the next change: served from the disk, not cached. */
  racyReads: number;
  /** File handle reads served from the cache. */
  handleReadHits: number;
  /** Writes kept dirty in the block store (write-back). */
  writeBacks: number;
  /** Write-back writes written to disk at once (the block store was full). */
  spilledWrites: number;
  /** Dirty files written to disk by this instance. */
  flushedFiles: number;
  /** Bytes of dirty files written to disk by this instance. */
  flushedBytes: number;
  /** Dirty files that failed to be written to disk (they stay dirty). */
  flushErrors: number;
  /** Dirty files dropped because a writer died in the middle of writing them. */
  lostWrites: number;
  /** Bytes of dirty blocks in the block store (every root's); 0 without one. */
  dirtyBytes: number;
}

/** A dirty file that a flush could not write to disk (it stays dirty). */
export interface FlushFailure {
  /** The file, relative to the root. */
  path: string;
  error: NodeJS.ErrnoException;
}

/** The payload of a CacheFS `'flushError'` event. */
export interface FlushErrorEvent extends FlushFailure {}

/** The rejection of `flush()` and `close()` when dirty files could not be written. */
export interface FlushFailedError extends ArenaCacheError {
  code: 'ERR_FLUSH_FAILED';
  /** Every file that failed, with its error (the first one is also the `cause`). */
  failures: FlushFailure[];
}

/** CacheFS events. */
export interface CacheFSEvents {
  /**
   * A dirty file could not be written to disk (it stays dirty and is
   * retried). Without a listener, one process warning per file.
   */
  flushError: [event: FlushErrorEvent];
  newListener: [eventName: string | symbol, listener: (...args: any[]) => void];
  removeListener: [eventName: string | symbol, listener: (...args: any[]) => void];
}

/** `{ path, stats }` or `{ path, error }`: one entry of `batchStats()`. */
export type BatchStatsEntry =
  | { path: string; stats: CachedStats; error?: undefined }
  | { path: string; error: Error; stats?: undefined };

/** What `cfs.invalidate()` drops: paths, or every cached path under a prefix or matching a glob. */
export type InvalidateTarget =
  | readonly string[]
  | { prefix: string; pattern?: undefined }
  | { pattern: string; prefix?: undefined };

/** Options of the warming calls. */
export interface WarmOptions {
  /** Files read at the same time (1 to 256). Default `4`. */
  concurrency?: number | undefined;
  /** Cancels the files not yet started. Default: none. */
  signal?: AbortSignal | undefined;
}

/** `warmDir()` options. */
export interface WarmDirOptions extends WarmOptions {
  /** Warm the files of subdirectories too. Default `false`. */
  recursive?: boolean | undefined;
  /** A glob (minimatch syntax, e.g. `'**\/*.css'`) the path relative to `dir` must match. Default: every file. */
  pattern?: string | undefined;
}

/** `warmFromStats()` options. */
export interface WarmFromStatsOptions extends WarmOptions {
  /** How many of the most-read paths are warmed (1 to 10000000). Default `1000`. */
  limit?: number | undefined;
}

/** The payload of a WarmJob `'progress'` event: one file warmed. */
export interface WarmProgressEvent {
  path: string;
  /** The file's size. */
  bytes: number;
  /** Files warmed or failed so far. */
  done: number;
  total: number;
}

/** The payload of a WarmJob `'failed'` event: one file could not be read (the job goes on). */
export interface WarmFailedEvent {
  path: string;
  error: Error;
  /** Files warmed or failed so far. */
  done: number;
  total: number;
}

/** WarmJob events. */
export interface WarmJobEvents {
  progress: [event: WarmProgressEvent];
  failed: [event: WarmFailedEvent];
  newListener: [eventName: string | symbol, listener: (...args: any[]) => void];
  removeListener: [eventName: string | symbol, listener: (...args: any[]) => void];
}

/** How a warming job went. */
export interface WarmSummary {
  /** Files in the job. */
  total: number;
  warmed: number;
  failed: number;
  /** Files not started because the signal aborted. */
  skipped: number;
  /** Bytes of the files warmed. */
  bytes: number;
  /** Whether the signal cancelled part of the job. */
  cancelled: boolean;
}

/** A background warming job, as the warm*() calls return it (not constructible). */
export interface WarmJob extends EventEmitter<WarmJobEvents> {
  /** The summary so far (updated as files are done). */
  readonly summary: WarmSummary;
  /**
   * Resolves to the summary when every file is warmed, failed or skipped;
   * rejects when the list of files cannot be made (the list file or the
   * access statistics cannot be read, the directory cannot be listed).
   */
  readonly finished: Promise<WarmSummary>;
}

/**
 * What `cfs.open()` resolves to: shaped like node:fs FileHandle (`read`,
 * `write`, `truncate`, `stat`, `close`, `fd`). Not constructible.
 */
export interface CacheFileHandle {
  /**
   * The descriptor number, as on node:fs FileHandle (-1 once closed);
   * undefined when the CacheFS serves an InodeFS (its handles have no descriptor).
   */
  readonly fd: number | undefined;
  /**
   * Reads `length` bytes (default: the rest of the buffer) into `buffer` at
   * `offset` (default 0), from `position` in the file (null or undefined:
   * the current position, which then advances).
   */
  read<T extends Uint8Array>(buffer: T, offset?: number | null, length?: number | null, position?: number | null): Promise<FileReadResult<T>>;
  /**
   * Writes `length` bytes (default: the rest of the buffer) of `buffer` from
   * `offset` (default 0) at `position` in the file (null or undefined: the
   * current position; files opened for appending always append).
   */
  write<T extends Uint8Array>(buffer: T, offset?: number | null, length?: number | null, position?: number | null): Promise<WriteResult<T>>;
  /** Truncates (or extends with zeros) the file to `length` bytes. Default `0`. */
  truncate(length?: number): Promise<void>;
  /** The file's current stats. */
  stat(): Promise<CachedStats>;
  /**
   * Closes the handle once its calls in flight are done; later calls fail
   * with ERR_HANDLE_CLOSED. Closing again gives the same promise.
   */
  close(): Promise<void>;
}

/**
 * A directory (or an InodeFS) served through a SharedCache, with
 * node:fs/promises signatures and node:fs's errors. Paths are relative to
 * the root (a leading `/` is the root itself).
 */
export declare class CacheFS extends EventEmitter<CacheFSEvents> {
  #private;
  constructor(options: CacheFSOptions);

  /** The real path of the root directory (`'/'` for an InodeFS). */
  readonly root: string;
  /** The write mode this instance was made with. */
  readonly writeMode: WriteMode;

  /** This instance's counters, and the block store's dirty bytes. */
  stats(): CacheFSStats;
  /**
   * Exposes this instance's counters in a prom-client registry
   * (`arenacache_fs_reads_total`, ...; label `fs`), read at scrape time.
   * Returns a function that removes them.
   */
  registerMetrics(registry: MetricsRegistry, options?: FsMetricsOptions): () => void;

  /** The contents of `path`: a Buffer, or a string with an encoding. */
  readFile(path: string, options?: { encoding?: null | undefined } | null): Promise<Buffer>;
  readFile(path: string, options: BufferEncoding | { encoding: BufferEncoding }): Promise<string>;
  readFile(path: string, options?: ReadFileOptions): Promise<string | Buffer>;
  /** readFile(), synchronously. */
  readFileSync(path: string, options?: { encoding?: null | undefined } | null): Buffer;
  readFileSync(path: string, options: BufferEncoding | { encoding: BufferEncoding }): string;
  readFileSync(path: string, options?: ReadFileOptions): string | Buffer;

  /** The stats of `path`, from the cache while they are fresh. */
  stat(path: string): Promise<CachedStats>;
  statSync(path: string): CachedStats;

  /** The names in directory `path`. */
  readdir(path: string): Promise<string[]>;
  readdirSync(path: string): string[];

  /** Writes `data` as the whole contents of `path` (see writeMode). */
  writeFile(path: string, data: WriteData, options?: WriteFileOptions): Promise<void>;
  /** Appends `data` to `path`, creating it if needed. */
  appendFile(path: string, data: WriteData, options?: WriteFileOptions): Promise<void>;

  /** Creates directory `path`; with `recursive`, resolves to the first directory created (relative to the root), or undefined. */
  mkdir(path: string, options: MkdirOptions & { recursive: true }): Promise<string | undefined>;
  mkdir(path: string, options?: number | (MkdirOptions & { recursive?: false | undefined }) | null): Promise<undefined>;
  mkdir(path: string, options?: number | MkdirOptions | null): Promise<string | undefined>;
  /** Removes file `path`. */
  unlink(path: string): Promise<void>;
  /** Removes `path` (the root itself is refused with ERR_PATH_OUTSIDE_ROOT). */
  rm(path: string, options?: RmOptions | null): Promise<void>;
  /** Renames `from` to `to`, both inside the root. */
  rename(from: string, to: string): Promise<void>;

  /**
   * Opens `path` with node:fs flags (default `'r'`; a created file gets
   * `mode`, default `0o666`) and resolves to a handle.
   */
  open(path: string, flags?: OpenFlags, mode?: number): Promise<CacheFileHandle>;

  /** Reads `paths` into the cache in the background. */
  warm(paths: readonly string[], options?: WarmOptions): WarmJob;
  /** Warms the files of directory `dir` (with `recursive`, of its subdirectories too) whose relative path matches `pattern`. */
  warmDir(dir: string, options?: WarmDirOptions): WarmJob;
  /** Warms the files named in the text file `listFile` (one root-relative path a line; empty lines and `#` lines skipped). */
  warmFromList(listFile: string, options?: WarmOptions): WarmJob;
  /**
   * Warms the files the previous run read most, from the access statistics
   * at options.accessStatsPath (throws ERR_ACCESS_STATS without one).
   */
  warmFromStats(options?: WarmFromStatsOptions): WarmJob;
  /** Saves the access statistics now (rejects with ERR_ACCESS_STATS without options.accessStatsPath). */
  saveAccessStats(): Promise<void>;

  /** Drops what the cache knows of some files, so the next access reads the disk; returns how many records were dropped. */
  invalidate(target: InvalidateTarget): number;
  /** The stats of many paths at once (a failure is an entry with its error, not a rejection). */
  batchStats(paths: readonly string[]): Promise<BatchStatsEntry[]>;

  /**
   * Writes dirty files to disk: those of `paths`, or every dirty file of
   * the root. Resolves to how many were written; rejects with
   * ERR_FLUSH_FAILED ({@link FlushFailedError}) if some could not be.
   */
  flush(paths?: readonly string[]): Promise<number>;
  /**
   * Stops background work, saves the access statistics and, in write-back
   * mode, flushes (rejecting as flush() does). Later calls fail with ERR_FS_CLOSED.
   */
  close(): Promise<void>;
}
export {};

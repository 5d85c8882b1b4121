// Type declarations for the main entry of arenacache (lib/index.js).
//
// Written by hand from the sources: lib/cache/shared-cache.js, options.js,
// call-options.js, fetcher.js, block-store.js, metrics.js, diagnostics.js,
// lib/invalidation/*.js and lib/errors.js. Internal members (private
// fields, symbol-keyed methods, the transports' side of InvalidationBus) are
// left out on purpose.
//
// Only 'node' types are needed: prom-client and ioredis are optional peer
// dependencies, so they are described structurally here, never imported.

/// <reference types="node" />

import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';

// ---------------------------------------------------------------------------
// Errors

/** Every `code` an {@link ArenaCacheError} can carry (the keys of {@link codes}). */
export type ErrorCode =
  | 'ERR_ARENA_NOT_ARENA'
  | 'ERR_ARENA_VERSION'
  | 'ERR_ARENA_TRUNCATED'
  | 'ERR_ARENA_CORRUPT'
  | 'ERR_ARENA_ALLOC'
  | 'ERR_CODEC_MISMATCH'
  | 'ERR_CODEC_DECODE'
  | 'ERR_REDIS_NAMESPACE'
  | 'ERR_REDIS_UNAVAILABLE'
  | 'ERR_REDIS_TIMEOUT'
  | 'ERR_REDIS_VALUE'
  | 'ERR_NOT_A_NUMBER'
  | 'ERR_UPDATE_CONFLICT'
  | 'ERR_CACHE_CLOSED'
  | 'ERR_FETCH_TIMEOUT'
  | 'ERR_PROM_CLIENT_MISSING'
  | 'ERR_METRICS_DUPLICATE'
  | 'ERR_ARENA_FILE'
  | 'ERR_ARENA_PERMISSIONS'
  | 'ERR_ARENA_BUSY'
  | 'ERR_ARENA_MISMATCH'
  | 'ERR_BLOCKS_FULL'
  | 'ERR_BLOCK_GAP'
  | 'ERR_HANDLE_CLOSED'
  | 'ERR_FS_CLOSED'
  | 'ERR_FLUSH_FAILED'
  | 'ERR_ACCESS_STATS'
  | 'ERR_FS_ROOT'
  | 'ERR_FS_SPECIAL_FILE'
  | 'ERR_PATH_OUTSIDE_ROOT'
  | 'ERR_INODEFS_STORE'
  | 'ERR_INODEFS_PERMISSIONS'
  | 'ERR_INODEFS_BUSY'
  | 'ERR_INODEFS_CLOSED'
  | 'ERR_TOO_MANY_SNAPSHOTS'
  | 'ERR_SNAPSHOT_EXISTS'
  | 'ERR_SNAPSHOT_NOT_FOUND'
  | 'ERR_WORKSPACE_NOT_FOUND'
  | 'ERR_WORKSPACE_EXISTS'
  | 'ERR_WORKSPACE_BUSY'
  | 'ERR_WORKSPACE_FORMAT'
  | 'ERR_WORKTREE_DIRTY'
  | 'ERR_SNAPSHOT_AMBIGUOUS'
  | 'ERR_SNAPSHOT_CORRUPT'
  | 'ERR_SNAPSHOT_IO'
  | 'ERR_REFLINK_UNSUPPORTED'
  | 'ERR_RESTORE_UNSUPPORTED'
  | 'ERR_INVALIDATION_RUNNING'
  | 'ERR_INVALIDATION_TRANSPORT'
  | 'ERR_INVALIDATION_CLOSED'
  | 'ERR_INVALIDATION_UNSUPPORTED'
  | 'ERR_IOREDIS_MISSING'
  | 'ERR_KEYV_MISSING'
  | 'ERR_STORE_NOT_INITIALIZED'
  | 'ERR_NATIVE_UNAVAILABLE';

/** The error codes by name, each mapped to itself (a frozen object). */
export declare const codes: { readonly [C in ErrorCode]: C };

/**
 * One file that failed: in `error.failures` of ERR_FLUSH_FAILED (CacheFS
 * write-back: `{ path, error }`) and of ERR_SNAPSHOT_IO (workspace snapshots:
 * `{ path, code, errno, syscall }`, errno positive).
 */
export interface ArenaCacheErrorFailure {
  path: string;
  /** ERR_FLUSH_FAILED: the error writing this file gave. */
  error?: unknown;
  /** ERR_SNAPSHOT_IO: the OS error code, such as 'EACCES'. */
  code?: string;
  /** ERR_SNAPSHOT_IO: the OS error number (positive). */
  errno?: number;
  /** ERR_SNAPSHOT_IO: the system call that failed. */
  syscall?: string;
}

/**
 * A state or I/O failure with a stable {@link ErrorCode} to branch on (bad
 * argument types are TypeError, bad values RangeError). The message is for
 * people and may change.
 */
export declare class ArenaCacheError extends Error {
  /** @param code one of {@link codes} */
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown });
  /** Always 'ArenaCacheError'. */
  name: string;
  /** Which failure this is. */
  code: ErrorCode;
  /** What caused it, where known (a system error, the codec's error, ...). */
  cause?: unknown;
  /** ERR_FLUSH_FAILED and ERR_SNAPSHOT_IO: every file that failed. */
  failures?: ArenaCacheErrorFailure[];
  /** ERR_SNAPSHOT_CORRUPT (restore, fork): the stored files found missing or damaged. */
  problems?: Array<{ path: string; problem: 'missing' | 'differs' }>;
  /**
   * ERR_WORKTREE_DIRTY: the changes found, as `workspace.status()` reports
   * them (see arenacache/snapshot).
   */
  changes?: {
    ok: boolean;
    differ: Array<{ path: string; [field: string]: unknown }>;
    missing: string[];
    extra: string[];
    [field: string]: unknown;
  };
}

// ---------------------------------------------------------------------------
// Keys, values, codecs

/** What a SharedCache accepts as a key: a string (stored as UTF-8) or bytes (a Buffer or Uint8Array). */
export type CacheKey = string | Uint8Array;

/**
 * A key as keys(), entries() and iteration give it back: a string key as a
 * string, a byte key as a Buffer (whatever kind of Uint8Array it was set with).
 */
export type IteratedKey<K extends CacheKey> = K extends string ? K : Buffer;

/**
 * `V` without `undefined`: what set(), setMany() and fetch() loaders may
 * store (undefined is a TypeError; use delete()). A generic helper over
 * `SharedCache<K, T>` that stores a `T` needs `T extends {} | null`.
 */
export type Defined<V> = V & ({} | null);

/**
 * How values other than strings and Uint8Arrays are stored. The default is
 * msgpackr with structured cloning, recorded in the arena as 'msgpackr-shared'.
 */
export interface Codec<T = unknown> {
  /** Recorded in the arena (at most 64 bytes): attaching or opening with another codec fails (ERR_CODEC_MISMATCH). */
  readonly name: string;
  /** The value as bytes; a throw is a TypeError whose `cause` is the codec's error. */
  encode(value: T): Uint8Array;
  /** `bytes` is a private Buffer the codec may keep; a throw is ERR_CODEC_DECODE. */
  decode(bytes: Buffer): T;
}

/** The eviction policies. */
export type EvictionPolicy = 'hybrid' | 'lru' | 'lfu' | 'ttl';

// ---------------------------------------------------------------------------
// SharedCache options

/** Options of `new SharedCache()` besides memoryBytes; also accepted by `SharedCache.open()`. */
export interface SharedCacheSettings {
  /** Most entries to hold, 0 to 2^32; 0 means bounded by memory only. Default: 0. */
  max?: number | undefined;
  /** Which entries leave first when the cache is full. Default: 'hybrid'. */
  policy?: EvictionPolicy | undefined;
  /** Time to live in ms for entries set without their own; 0 means forever. Default: 0. */
  ttl?: number | undefined;
  /** Ms after an entry's ttl during which fetch() serves it stale while one loader refreshes it. Default: 0 (none). */
  staleWhileRevalidate?: number | undefined;
  /** Expiry checks reuse the clock reading for this many ms, 0 to 60000 (0: read it every time). Default: 1. */
  ttlResolution?: number | undefined;
  /** How often one thread sweeps expired entries away, in ms (0: never). Default: 1000. */
  sweepIntervalMs?: number | undefined;
  /** Entries one sweep examines. Default: 1024. */
  sweepChecks?: number | undefined;
  /** How long a fetch() loader may run before ERR_FETCH_TIMEOUT, in ms. Default: 10000. */
  fetchTimeoutMs?: number | undefined;
  /** Longest key in bytes (UTF-8 for strings), 1 to 65535. Default: 4096. */
  maxKeyBytes?: number | undefined;
  /** Number of shards, a power of two up to 4096; 0 chooses from memoryBytes. Default: 0. */
  shards?: number | undefined;
  /** A shard lock whose holder cannot be named is presumed abandoned after this many ms. Default: 1000. */
  lockLeaseMs?: number | undefined;
  /**
   * Longest a call waits for a shard lock that a live thread holds, 1 ms to an hour: past it a get answers
   * as a miss and a write throws ERR_ARENA_BUSY. Stored in the arena. Default: 500.
   */
  lockWaitMs?: number | undefined;
  /** How values other than Buffers and strings are stored. Default: msgpackr ('msgpackr-shared'). */
  codec?: Codec<any> | undefined;
  /**
   * Most bytes (estimated: stored length, key length and 200 per entry) this instance keeps as ready values
   * for get() of string keys, 0 (off) to 2^40. Default: the smaller of memoryBytes and 1/8 of the thread's
   * V8 heap limit.
   */
  nearCacheBytes?: number | undefined;
  /** Most entries this instance keeps as ready values, 0 (off) to 2^24; nearCacheBytes applies too. Default: 2^24. */
  nearCache?: number | undefined;
}

/** Options of `new SharedCache(options)`. Unknown names are a TypeError. */
export interface SharedCacheOptions extends SharedCacheSettings {
  /** Bytes of shared memory for the whole cache, 1 MiB to 1 TiB. Default: 64 MiB, or with `max` room for `max` entries of 1 KiB (1 MiB to 1 GiB). */
  memoryBytes?: number | undefined;
}

/** Options of `SharedCache.attach(handle, options)`. */
export interface SharedCacheAttachOptions {
  /** Must be the codec the cache was created with. Default: msgpackr ('msgpackr-shared'). */
  codec?: Codec<any> | undefined;
  /** This instance's near cache, in estimated bytes (0: off). Default: the smaller of the cache's memoryBytes and 1/8 of the thread's V8 heap limit. */
  nearCacheBytes?: number | undefined;
  /** This instance's near cache, most entries (0: off). Default: 2^24. */
  nearCache?: number | undefined;
}

/** The file options that `SharedCache.open()` and `BlockStore.open()` share. */
export interface ArenaFileOptions {
  /** File mode of a new file (owner read and write, nobody else write). Default: 0o600. */
  mode?: number | undefined;
  /** Fault every page in (an existing file's in the background). Default: true. */
  populate?: boolean | undefined;
}

/** The options of `SharedCache.open(path, options)` besides `reset`. */
export interface SharedCacheOpenSettings extends SharedCacheSettings, ArenaFileOptions {
  /** Bytes of a new arena file; without it an existing file is opened as it is (ERR_ARENA_FILE if none). Default: none. */
  memoryBytes?: number | undefined;
  /** Every record of a new file carries a checksum (stored in the file). Default: true. */
  checksums?: boolean | undefined;
  /** The sole opener checks every shard, even after a clean close or a crash on this boot (see "Restarts"). Default: false. */
  verifyOnOpen?: boolean | undefined;
}

/** How the open that created or recovered a cache file went (`stats().lastOpen`; see "Restarts" in docs/shared-cache.md). */
export interface LastOpen {
  /** 'created': a new or reset file; 'clean': closed cleanly; 'crash': its processes died on this boot; 'checked': every shard checked. */
  how: 'created' | 'clean' | 'crash' | 'checked';
  /** Shards checked inside open(). */
  shardsChecked: number;
  /** Shards open() left to be checked at their first use (or by the sweeper) that still are. */
  shardsPending: number;
  /** Shards rebuilt or reset: left locked by a writer that died, or failing the check. */
  shardsRepaired: number;
  entriesLost: number;
  /** When (epoch ms). */
  at: number;
  /** How long the open took (ms), mapping and recovery. */
  ms: number;
}

/**
 * Options of `SharedCache.open(path, options)`: every option of the
 * constructor (memoryBytes needed only to create the file), and the file
 * options. `reset: true` needs memoryBytes.
 */
export type SharedCacheOpenOptions = SharedCacheOpenSettings &
  (
    | {
        /** Replace the arena the file holds (any version, options or damage) with a new, empty cache (needs memoryBytes); a file that is not an arena is refused (ERR_ARENA_NOT_ARENA), never replaced. Default: false. */
        reset?: false | undefined;
      }
    | {
        /** Replace the arena the file holds (any version, options or damage) with a new, empty cache (needs memoryBytes); a file that is not an arena is refused (ERR_ARENA_NOT_ARENA), never replaced. Default: false. */
        reset: true;
        memoryBytes: number;
      }
  );

/**
 * `cache.handle`: a frozen, structured-cloneable object for workerData or
 * postMessage, which `SharedCache.attach()` turns back into a cache.
 */
export interface SharedCacheHandle {
  readonly type: 'arenacache.SharedCache';
  readonly version: 1;
  /** The arena. */
  readonly buffer: SharedArrayBuffer;
  /** The arena file of a file-backed cache, else null. */
  readonly path: string | null;
  /** Where writes are recorded for the InvalidationBus (null: none). */
  readonly outbox: SharedArrayBuffer | null;
}

// ---------------------------------------------------------------------------
// SharedCache per-call options and results

/** Options of get(), peek() and getMany(). */
export interface GetOptions {
  /** Also return a value past its ttl but within its stale window. Default: false. */
  allowStale?: boolean | undefined;
}

/** Options of set() and setMany(). */
export interface SetOptions {
  /** Time to live in ms; 0 means no expiry. Default: the cache's `ttl` option. */
  ttl?: number | undefined;
  /** Ms after the ttl during which fetch() serves the entry stale while refreshing it. Default: the cache's option. */
  staleWhileRevalidate?: number | undefined;
}

/** What a fetch() loader is given besides the key. */
export interface FetchLoaderOptions<V, C = undefined> {
  /** Aborts when the load runs longer than fetchTimeoutMs or the cache is closed. */
  signal: AbortSignal;
  /** The stale value being refreshed, else undefined. */
  staleValue: V | undefined;
  /** options.context of the fetch() call that started the load. */
  context: C;
}

/**
 * Loads the value of a key for fetch(). It must return (or resolve to) a
 * value: undefined is a TypeError (null is a value); a throw or rejection
 * rejects every waiting caller and stores nothing.
 */
export type FetchLoader<K extends CacheKey, V, C = undefined> = (
  key: K,
  options: FetchLoaderOptions<V, C>,
) => Defined<V> | PromiseLike<Defined<V>>;

/** Options of fetch(). Unknown names are a TypeError. */
export interface FetchOptions<C = undefined> extends SetOptions {
  /** Return a value in its stale window at once and refresh it in the background. Default: true. */
  allowStale?: boolean | undefined;
  /** Load even over a fresh value. Default: false. */
  forceRefresh?: boolean | undefined;
  /** Aborting it rejects this caller with the signal's reason (the load goes on for others). Default: none. */
  signal?: AbortSignal | undefined;
  /** Passed to the loader as `context`. Default: undefined. */
  context?: C | undefined;
  /** When the load fails and a stale value was there, resolve with it and keep it. Default: false. */
  allowStaleOnFetchRejection?: boolean | undefined;
  /** When the load fails, keep the stale value (the caller still gets the error). Default: false. */
  noDeleteOnFetchRejection?: boolean | undefined;
}

/** What info() knows of a live entry. */
export interface EntryInfo<V> {
  /** The value, as get() returns it. */
  value: V;
  /** Whether it is past its ttl, within its stale window. */
  stale: boolean;
  /** Ms until it goes stale (or expires, without a window); negative while stale; Infinity without a ttl. */
  remainingTTL: number;
  /** When it goes stale, ms since the epoch (Infinity without a ttl). */
  staleAt: number;
  /** When it stops being served at all, ms since the epoch (Infinity without a ttl). */
  expiresAt: number;
  /** Changes on every write of the key and never comes back for it while the arena lives: what compareAndSet() compares. */
  version: number;
  /** Bytes of its record in the arena (header, key, value). */
  size: number;
  /** Bytes of its stored value. */
  valueBytes: number;
  /** Where the eviction policy has it. */
  policy: {
    name: EvictionPolicy;
    /** The ring the entry is in. */
    ring: 'small' | 'main';
    /** Its use count as the policy keeps it. */
    frequency: number;
  };
}

/** The InvalidationBus counters in `stats()` (per process). */
export interface InvalidationStats {
  udpBatchesSent: number;
  udpKeysSent: number;
  udpBatchesReceived: number;
  udpKeysReceived: number;
  redisBatchesSent: number;
  redisKeysSent: number;
  redisBatchesReceived: number;
  redisKeysReceived: number;
  redisReconnects: number;
  invalidationSendErrors: number;
  invalidationOverflows: number;
  invalidationDropsMac: number;
  invalidationDropsReplay: number;
  invalidationDropsStale: number;
  invalidationDropsShort: number;
  invalidationDropsOversize: number;
  invalidationDropsMagic: number;
  invalidationDropsVersion: number;
  invalidationDropsGarbled: number;
  invalidationDropsNotMarker: number;
  /** Every drop above, summed. */
  invalidationsDropped: number;
}

/** `cache.stats()`: the counters of every attached thread, summed, and the cache's sizes. */
export interface SharedCacheStats extends InvalidationStats {
  /** The eviction policy (the only string field). */
  policy: EvictionPolicy;
  gets: number;
  /** Hits, near-cache hits included. */
  hits: number;
  /** Of the hits, those the instances' near caches answered. */
  nearHits: number;
  misses: number;
  /** hits / gets (0 before any get). */
  hitRatio: number;
  sets: number;
  deletes: number;
  /** incr() calls. */
  increments: number;
  /** add, replace, compareAndSet, touch and update writes that happened (also counted in sets or deletes). */
  conditionalWrites: number;
  /** add, replace, compareAndSet and touch calls whose condition did not hold, and update() retries. */
  conditionalMisses: number;
  /** evictionsMemory + evictionsMax. */
  evictions: number;
  evictionsMemory: number;
  evictionsMax: number;
  expirations: number;
  sweeps: number;
  sweptEntries: number;
  /** Same as `size`. */
  entries: number;
  /** Entries in the hybrid policy's small ring. */
  smallEntries: number;
  /** hybrid: the share of the entries (0.01 to 0.98, mean over shards) its small ring keeps once full, adapted to the workload when the cache has `max` (else 0.1); 0 for the other policies. */
  smallShare: number;
  liveBytes: number;
  usedBytes: number;
  dataBytes: number;
  memoryBytes: number;
  maxEntries: number;
  /** The largest record a shard holds. */
  maxEntryBytes: number;
  shards: number;
  threads: number;
  relocations: number;
  promotions: number;
  fetches: number;
  fetchLoads: number;
  fetchWaits: number;
  fetchTimeouts: number;
  fetchErrors: number;
  fetchStale: number;
  fetchUncached: number;
  readRetries: number;
  lockWaits: number;
  /** Calls that gave up waiting for a lock a live thread held past lockWaitMs. */
  lockTimeouts: number;
  lockRecoveries: number;
  shardRepairs: number;
  lostEntries: number;
  checksumFailures: number;
  threadSlotRepairs: number;
  /** For a file-backed cache, how its last creating or recovering open went; null in memory. */
  lastOpen: LastOpen | null;
}

/** `verify()`'s answer. */
export interface VerifyResult {
  ok: boolean;
  problems: string[];
}

/** A shard an inspector could not read: its index and why (its lock held by a live thread, or writers changing it under every read). */
export interface InspectUnchecked {
  shard: number;
  reason: string;
}

/** `CacheInspector#verify()`'s answer: damage as found; busy shards are `unchecked`, not problems. */
export interface InspectVerifyResult extends VerifyResult {
  unchecked: InspectUnchecked[];
}

/** Options of `SharedCache.inspect()`. Unknown names are a TypeError. */
export interface SharedCacheInspectOptions {
  /** The codec the file was created with (its name must match), only to decode values of a codec other than the default. */
  codec?: Codec<any> | undefined;
}

/**
 * An entry as `CacheInspector#entries()` lists it: the value as stored,
 * decoded where it can be. 'encoded' is a value of `codec` that this
 * process cannot decode (its bytes; `error` says why when the codec threw).
 */
export type InspectedEntry =
  | { key: string | Buffer; valueKind: 'string'; value: string }
  | { key: string | Buffer; valueKind: 'number'; value: number }
  | { key: string | Buffer; valueKind: 'buffer'; value: Buffer }
  | { key: string | Buffer; valueKind: 'codec'; value: unknown }
  | { key: string | Buffer; valueKind: 'encoded'; value: Buffer; codec: string; error?: string };

/**
 * A cache file read without opening it as a cache (`SharedCache.inspect()`):
 * opened and mapped read-only, no lock, no recovery, no thread slot, not a
 * byte written. Needs the native addon.
 */
export interface CacheInspector extends Disposable {
  /** The file's path, as given. */
  readonly path: string;
  /** The name of the codec the file's values were encoded with. */
  readonly codecName: string;
  /** Whether values of that codec are decoded (the default codec, or options.codec). */
  readonly decodes: boolean;
  /** The file's counters and sizes; `threads` counts the threads alive in the processes using it (never the inspector). */
  stats(): SharedCacheStats;
  /** The arena's invariants as found (never repaired first). */
  verify(): InspectVerifyResult;
  /** The keys of the live entries, and the shards that could not be read. */
  keys(): { keys: Array<string | Buffer>; unchecked: InspectUnchecked[] };
  /** The live entries with their values, and the shards that could not be read. */
  entries(): { entries: InspectedEntry[]; unchecked: InspectUnchecked[] };
  /** Unmaps the file. Idempotent. */
  close(): void;
}

/** Latency of the sampled calls of one method, in microseconds. */
export interface LatencySummary {
  samples: number;
  avgUs: number;
  p50Us: number;
  p99Us: number;
  maxUs: number;
}

/** `latency()`'s report. */
export interface LatencyReport {
  /** One call in this many is timed. */
  every: number;
  get: LatencySummary;
  set: LatencySummary;
}

/** Options of startLatencySampling(). */
export interface LatencySamplingOptions {
  /** Time one get() and one set() in this many (a positive integer). Default: 64. */
  every?: number | undefined;
}

/**
 * A prom-client Registry, described by what registerMetrics() uses of it
 * (prom-client is an optional peer dependency, so its types are not imported).
 */
export interface MetricsRegistry {
  registerMetric(metric: any): void;
}

/** Options of registerMetrics(). Unknown names are a TypeError. */
export interface RegisterMetricsOptions {
  /** The `cache` label of this cache's metrics. Default: 'default'. */
  name?: string | undefined;
  /** The metric name prefix. Default: 'arenacache_'. */
  prefix?: string | undefined;
}

// ---------------------------------------------------------------------------
// SharedCache

/**
 * A key/value cache in shared memory: every thread that attaches (and, opened
 * from a file, every process) sees the same entries.
 *
 * `K` is the keys this code uses (strings, bytes or both) and `V` its
 * values; neither is checked at run time, and other threads may store others.
 */
export declare class SharedCache<K extends CacheKey = CacheKey, V = unknown> implements Iterable<[IteratedKey<K>, V]> {
  #private;

  /** Creates a cache in a new SharedArrayBuffer of `options.memoryBytes` bytes. */
  constructor(options?: SharedCacheOptions);

  /**
   * Attaches to a cache created in another thread, from its `handle` (or
   * its SharedArrayBuffer: then this instance's writes are not published
   * to an InvalidationBus).
   */
  static attach<K extends CacheKey = CacheKey, V = unknown>(
    handle: SharedCacheHandle | SharedArrayBuffer,
    options?: SharedCacheAttachOptions,
  ): SharedCache<K, V>;

  /**
   * Opens the cache in the file at `path`, creating it when it does not
   * exist and options.memoryBytes is given. Needs the native addon.
   */
  static open<K extends CacheKey = CacheKey, V = unknown>(path: string, options?: SharedCacheOpenOptions): SharedCache<K, V>;

  /**
   * Reads the cache in the existing file at `path` without opening it as a
   * cache: no recovery, no lock, no thread slot, not a byte written.
   * verify() reports damage as found. Needs the native addon.
   */
  static inspect(path: string, options?: SharedCacheInspectOptions): CacheInspector;

  /** A structured-cloneable value for postMessage/workerData that attach() turns back into a cache. */
  get handle(): SharedCacheHandle;

  /**
   * The value stored under `key`, or undefined (a miss, or an expired or
   * stale entry). Buffers come back as a private copy; with the near cache,
   * plain objects and arrays come back deep-frozen.
   */
  get(key: K, options?: GetOptions): V | undefined;

  /** The value like get(), without counting a get or marking a use. */
  peek(key: K, options?: GetOptions): V | undefined;

  /**
   * Ms until `key` goes stale (or expires): Infinity without a ttl, 0 for no
   * entry, negative while stale.
   */
  getRemainingTTL(key: K): number;

  /** What the cache knows of `key`, or undefined without a live entry (a stale one counts). Not a use. */
  info(key: K): EntryInfo<V> | undefined;

  /** The values of `keys` (an iterable object such as an array, not a string) in order, undefined for each miss. */
  getMany(keys: Iterable<K> & object, options?: GetOptions): Array<V | undefined>;

  /**
   * Stores every [key, value] pair with the same options; every pair is
   * checked before anything is stored.
   */
  setMany(entries: Iterable<readonly [K, Defined<V>]> & object, options?: SetOptions): this;

  /** Removes every key of `keys` (an iterable object, not a string); returns how many had a live entry. */
  deleteMany(keys: Iterable<K> & object): number;

  /**
   * Stores `value` under `key`, evicting other entries if memory is short. A
   * value larger than a shard can hold is a RangeError.
   */
  set(key: K, value: Defined<V>, options?: SetOptions): this;

  /** Whether `key` has a live, unexpired entry. Not a use. */
  has(key: K): boolean;

  /** Removes `key`; true if it had a live entry. */
  delete(key: K): boolean;

  /** Removes every entry, for every attached thread. Counters are kept. */
  clear(): void;

  // Atomic operations: each reads and writes the key in one step, with no
  // write of any thread or process in between (docs/shared-cache.md#atomic-operations).

  /** Stores `value` only if `key` has no entry (or an expired one); true if it stored. */
  add(key: K, value: Defined<V>, options?: SetOptions): boolean;

  /** Stores `value` only over an existing entry of `key` (a stale one counts); true if it stored. */
  replace(key: K, value: Defined<V>, options?: SetOptions): boolean;

  /** Stores `value` only if `key` still has `version` (info(key).version); true if it stored. */
  compareAndSet(key: K, version: number, value: Defined<V>, options?: SetOptions): boolean;

  /**
   * Adds `delta` (default 1) to the number under `key` and returns the
   * result; a missing or expired key starts at `initial` (0) with `ttl`. A key
   * holding anything else is ERR_NOT_A_NUMBER, left as it is.
   */
  incr(key: K, delta?: number, options?: { initial?: number; ttl?: number }): number;

  /**
   * Stores `fn(current)` only if no other write of `key` came in between,
   * calling `fn` again otherwise (up to 100 times, then
   * ERR_UPDATE_CONFLICT); `fn` returning undefined deletes. Returns what was stored.
   */
  update<R extends V | undefined>(key: K, fn: (current: V | undefined) => R, options?: SetOptions): R;

  /** Gives an existing `key` a ttl of `ttl` ms from now (0: none) without rewriting its value; true if it had an entry. */
  touch(key: K, ttl: number): boolean;

  /** Removes `key` and returns its value in one step (exactly one of any number of callers gets it), or undefined. */
  take(key: K, options?: GetOptions): V | undefined;

  /** The InvalidationBus started on this instance, or null. */
  get invalidation(): InvalidationBus | null;

  /** The longest key in bytes, as the arena was created with it. */
  get maxKeyBytes(): number;

  /** Number of entries (expired ones not reclaimed yet included). */
  get size(): number;

  /** Keys of live entries (weakly consistent). */
  keys(): Generator<IteratedKey<K>, void, unknown>;

  /** Values of live entries (weakly consistent). */
  values(): Generator<V, void, unknown>;

  /** [key, value] pairs of live entries (weakly consistent). */
  entries(): Generator<[IteratedKey<K>, V], void, unknown>;

  /** Same as entries(). */
  [Symbol.iterator](): Generator<[IteratedKey<K>, V], void, unknown>;

  /** Counters of every thread attached to this cache, summed, and its sizes. */
  stats(): SharedCacheStats;

  /** Checks the arena's internal invariants; a healthy cache returns { ok: true, problems: [] }. */
  verify(): VerifyResult;

  /**
   * The value of `key`; on a miss runs `loader` once for the whole arena
   * (every concurrent fetch of the key, in any thread, waits for it), stores
   * and returns what it returns.
   */
  fetch<C = undefined>(key: K, loader: FetchLoader<K, V, C>, options?: FetchOptions<C>): Promise<V>;

  /**
   * Exposes the cache's counters and sizes in a prom-client registry (read
   * at scrape time). Returns a function that removes them again.
   */
  registerMetrics(registry: MetricsRegistry, options?: RegisterMetricsOptions): () => void;

  /** Times one get() and one set() in `every` on this instance. */
  startLatencySampling(options?: LatencySamplingOptions): void;

  /** Stops latency sampling; returns the last report, or null when it was off. */
  stopLatencySampling(): LatencyReport | null;

  /** Latency of the sampled calls, or null when sampling is off. */
  latency(): LatencyReport | null;

  /**
   * Closes this instance (further calls throw ERR_CACHE_CLOSED); other
   * instances and the entries stay. Its pending fetch() calls reject at once
   * with ERR_CACHE_CLOSED and its loaders' signals abort; callers waiting
   * for those loads in other threads or processes load the key themselves.
   * Calling it again does nothing.
   */
  close(): void;

  /** Writes a file-backed cache back to its file and waits until it is durable; resolves at once in memory. */
  flush(): Promise<void>;

  /** The arena file of a file-backed cache, null for an in-memory one. */
  get path(): string | null;

  /** Whether close() was called on this instance. */
  get closed(): boolean;
}

// ---------------------------------------------------------------------------
// BlockStore

/** Options of `new BlockStore(options)`. Unknown names are a TypeError. */
export interface BlockStoreOptions {
  /** Bytes for the whole store, 1 MiB to 1 TiB. Required. */
  memoryBytes: number;
  /** Bytes per block, a power of two from 4096 to 16777216. Default: 65536. */
  blockBytes?: number | undefined;
  /** Lock stripes, a power of two up to 1024; 0 chooses from the block count. Default: 0. */
  stripes?: number | undefined;
}

/** The options of `BlockStore.open(path, options)` besides `reset`. */
export interface BlockStoreOpenSettings extends ArenaFileOptions {
  /** Bytes of a new store file; without it an existing file is opened as it is. Default: none. */
  memoryBytes?: number | undefined;
  /** Bytes per block of a new file (checked against an existing one). Default: 65536. */
  blockBytes?: number | undefined;
  /** Lock stripes of a new file; 0 chooses. Default: 0. */
  stripes?: number | undefined;
}

/** Options of `BlockStore.open(path, options)`. `reset: true` needs memoryBytes. */
export type BlockStoreOpenOptions = BlockStoreOpenSettings &
  (
    | {
        /** Replace the block store the file holds (any version, options or damage) with a new, empty store (needs memoryBytes); a file that is not a block store is refused (ERR_ARENA_NOT_ARENA), never replaced. Default: false. */
        reset?: false | undefined;
      }
    | {
        /** Replace the block store the file holds (any version, options or damage) with a new, empty store (needs memoryBytes); a file that is not a block store is refused (ERR_ARENA_NOT_ARENA), never replaced. Default: false. */
        reset: true;
        memoryBytes: number;
      }
  );

/** `store.handle`: a frozen, structured-cloneable object that `BlockStore.attach()` turns back into a store. */
export interface BlockStoreHandle {
  readonly type: 'arenacache.BlockStore';
  readonly version: 1;
  readonly buffer: SharedArrayBuffer;
  /** The store file of a file-backed store, else null. */
  readonly path: string | null;
}

/** One dirty block's range, as dirty() lists it. */
export interface DirtyRange {
  /** The file's id. */
  file: number;
  /** Byte position in the file. */
  position: number;
  /** Bytes of valid data. */
  length: number;
  /** Block index in the file. */
  block: number;
  /** The block's write generation: markClean() fails if it moved on. */
  generation: number;
}

/** `store.stats()`. */
export interface BlockStoreStats {
  blockBytes: number;
  blocks: number;
  usedBlocks: number;
  dirtyBlocks: number;
  /** Dirty blocks lost because a writer died in the middle of writing them. */
  lostDirtyBlocks: number;
  stripes: number;
  memoryBytes: number;
  blockWrites: number;
  blockReads: number;
  blockHits: number;
  blockMisses: number;
  evictions: number;
  droppedBlocks: number;
  readRetries: number;
  lockWaits: number;
  /** Calls that gave up waiting for a lock a live thread held past lockWaitMs. */
  lockTimeouts: number;
  lockRecoveries: number;
  threadSlotRepairs: number;
}

/**
 * Byte ranges of files in fixed-size blocks of a shared arena: writes stay
 * dirty (never evicted) until marked clean; clean blocks are evicted by CLOCK.
 * A file is an integer id from 0 to 2^32 - 1.
 */
export declare class BlockStore {
  #private;

  /** A block store in a new SharedArrayBuffer. */
  constructor(options: BlockStoreOptions);

  /** Attaches to a store created in another thread, from its `handle`. */
  static attach(handle: BlockStoreHandle): BlockStore;

  /**
   * Opens the store in the file at `path` (created when it does not exist
   * and options.memoryBytes is given). Needs the native addon.
   */
  static open(path: string, options?: BlockStoreOpenOptions): BlockStore;

  /** A structured-cloneable value that BlockStore.attach() turns back into a store. */
  get handle(): BlockStoreHandle;

  /** Bytes per block. */
  get blockBytes(): number;

  /** The file of a file-backed store, else null. */
  get path(): string | null;

  /** Writes `data` at byte `position` of file `file`; the blocks it touches become dirty. */
  write(file: number, position: number, data: Uint8Array): this;

  /** `length` bytes of `file` from `position` in a new Buffer, or undefined unless all of them are in the store. */
  read(file: number, position: number, length: number): Buffer | undefined;

  /** The dirty ranges (of one file with `{ file }`), one per block, in file and position order. */
  dirty(options?: { file?: number | undefined }): DirtyRange[];

  /** Marks a range from dirty() clean; false (still dirty) if the block was written again since. */
  markClean(range: Pick<DirtyRange, 'file' | 'block' | 'generation'>): boolean;

  /**
   * Runs `fn()` holding the lock of `file` (shared by every thread and
   * process) and returns its result. `fn` must be synchronous: a returned
   * promise is a TypeError.
   */
  exclusive<T>(file: number, fn: () => T extends PromiseLike<unknown> ? never : T): T;

  /** The sequence of `file`'s lock: changes on every take and release, odd while held. */
  fileVersion(file: number): number;

  /** Drops every block of `file`, dirty ones included; returns how many. */
  drop(file: number): number;

  /** How many blocks are dirty now. */
  dirtyBlockCount(): number;

  /** Counters of every attached thread and process, summed, and the block counts. */
  stats(): BlockStoreStats;

  /** Makes a file-backed store durable (msync and fdatasync, off the event loop). */
  flush(): Promise<void>;

  /** Closes this instance; the last one of a process to close unmaps a file-backed store. */
  close(): void;
}

// ---------------------------------------------------------------------------
// InvalidationBus

/** The transports an InvalidationBus can use. */
export type InvalidationTransport = 'udp' | 'redis';

/** A UDP peer: 'host:port', '[v6]:port' or { address, port }. */
export type InvalidationPeer = string | { address: string; port: number };

/** `options.udp` of an InvalidationBus. Unknown names are a TypeError. */
export interface InvalidationUdpOptions {
  /** The IP address to bind to. Default: '127.0.0.1'. */
  address?: string | undefined;
  /** The port to bind to; 0 picks a free one (see bus.address). Default: 0. */
  port?: number | undefined;
  /** Where to send. Default: []. */
  peers?: readonly InvalidationPeer[] | undefined;
  /** Largest datagram sent or accepted, in bytes (up to 65507). Default: 1200. */
  maxDatagramBytes?: number | undefined;
}

/** `options.redis` of an InvalidationBus (needs the ioredis package). Unknown names are a TypeError. */
export interface InvalidationRedisOptions {
  /** A redis:// URL, or ioredis options as an object. Default: 'redis://127.0.0.1:6379'. */
  connection?: string | object | undefined;
  /** The pub/sub channel. Default: 'arenacache:invalidation'. */
  channel?: string | undefined;
  /** After a lost connection comes back: drop the entries that may have missed invalidations, or keep them. Default: 'clear'. */
  onReconnect?: 'clear' | 'keep' | undefined;
  /** Invalidations kept while Redis is unreachable; beyond this, peers are told to clear. Default: 10000. */
  backlogKeys?: number | undefined;
  /** Largest message sent or accepted, in bytes. Default: 262144. */
  maxMessageBytes?: number | undefined;
}

/** The options of an InvalidationBus besides its transport. */
export interface InvalidationBusSettings {
  /** Shared by every host: a string or Buffer of at least 16 bytes. Required. */
  secret: string | Uint8Array;
  /** Publish only keys under these (strings match string keys, Buffers byte keys); null: every key. Default: null. */
  prefixes?: ReadonlyArray<string | Uint8Array> | null | undefined;
  /** Prefixes of version-marker keys, sent with their value. Default: []. */
  markers?: ReadonlyArray<string | Uint8Array> | undefined;
  /** Longest wait between a write and its batch leaving, in ms (0: at once). Default: 2. */
  batchIntervalMs?: number | undefined;
  /** A batch leaves as soon as it holds this many keys, and no message carries more. Default: 256. */
  batchMaxKeys?: number | undefined;
  /** Invalidations of a sender not verified yet are refused when stamped further than this from now, in ms. Default: 30000. */
  replayWindowMs?: number | undefined;
}

/** Options of `new InvalidationBus(cache, options)`: exactly one of `udp` and `redis`. */
export type InvalidationBusOptions = InvalidationBusSettings &
  (
    | {
        /** Send over UDP to a list of peers. */
        udp: InvalidationUdpOptions;
        redis?: undefined;
      }
    | {
        /** Send over Redis pub/sub. */
        redis: InvalidationRedisOptions;
        udp?: undefined;
      }
  );

/** Why a bus refused a message (or, for 'not-marker', a value). */
export type InvalidationDropReason = 'mac' | 'replay' | 'stale' | 'short' | 'oversize' | 'magic' | 'version' | 'garbled' | 'not-marker';

/** One invalidation as a peer sent it. */
export interface ReceivedInvalidation {
  op: 'delete' | 'clear' | 'clearPrefix' | 'set';
  /** The key (a prefix for clearPrefix, '' for clear). */
  key: string | Buffer;
  /** op 'set': the marker's stored form (its value kind, then its bytes). */
  value?: Buffer;
}

/** The arguments of each event of an InvalidationBus. */
export interface InvalidationBusEvents {
  /** A message was applied. */
  received: [event: { transport: InvalidationTransport; invalidations: ReceivedInvalidation[]; sentAt: number; cautious: boolean }];
  /** A sender (its id in hex) answered this bus. */
  verified: [event: { transport: InvalidationTransport; sender: string }];
  /** A message was refused (with `key` for a 'not-marker' value). */
  drop: [event: { transport: InvalidationTransport; reason: InvalidationDropReason; bytes: number; key?: string | Buffer }];
  /** Redis came back and the onReconnect policy was applied. */
  reconnect: [event: { transport: 'redis'; policy: 'clear' | 'keep' }];
  /** Socket and connection errors and failed sends (emitted only while a listener is attached); `peer` names a UDP peer a send failed to. */
  error: [error: Error & { peer?: string }];
  newListener: [eventName: string | symbol, listener: (...args: any[]) => void];
  removeListener: [eventName: string | symbol, listener: (...args: any[]) => void];
}

/**
 * Publishes every local set, delete and clear of a cache (every thread
 * attached with its handle) to other hosts over UDP or Redis, and applies
 * theirs. One bus per cache and process.
 */
export declare class InvalidationBus extends EventEmitter {
  #private;

  /** Call start() next. */
  constructor(cache: SharedCache<any, any>, options: InvalidationBusOptions);

  /** Binds the socket (UDP) or connects (Redis), then publishes and applies. Resolves to the bus. */
  start(): Promise<this>;

  /** The transport in use. */
  get transport(): InvalidationTransport;

  /** UDP while running: the bound address; else null. */
  get address(): AddressInfo | null;

  /** UDP: replaces the peer list. */
  setPeers(peers: readonly InvalidationPeer[]): void;

  /** Whether the bus runs (between start() and close()). */
  get running(): boolean;

  /** Sends what is waiting, stops, and closes the socket or connections. */
  close(): Promise<void>;

  on<E extends keyof InvalidationBusEvents>(event: E, listener: (...args: InvalidationBusEvents[E]) => void): this;
  addListener<E extends keyof InvalidationBusEvents>(event: E, listener: (...args: InvalidationBusEvents[E]) => void): this;
  once<E extends keyof InvalidationBusEvents>(event: E, listener: (...args: InvalidationBusEvents[E]) => void): this;
  prependListener<E extends keyof InvalidationBusEvents>(event: E, listener: (...args: InvalidationBusEvents[E]) => void): this;
  prependOnceListener<E extends keyof InvalidationBusEvents>(event: E, listener: (...args: InvalidationBusEvents[E]) => void): this;
  off<E extends keyof InvalidationBusEvents>(event: E, listener: (...args: InvalidationBusEvents[E]) => void): this;
  removeListener<E extends keyof InvalidationBusEvents>(event: E, listener: (...args: InvalidationBusEvents[E]) => void): this;
}

// ---------------------------------------------------------------------------
// Diagnostics channels

/**
 * The names of arenacache's node:diagnostics_channel channels:
 * `diagnostics_channel.subscribe(channels.fetch, (message) => ...)`.
 */
export declare const channels: {
  readonly evict: 'arenacache:evict';
  readonly repair: 'arenacache:repair';
  readonly fetch: 'arenacache:fetch';
};

/** Why a shard was repaired. */
export type RepairReason = 'dead-holder' | 'lock-lost' | 'corrupt' | 'damaged' | 'restart-locked' | 'restart-damaged';

/** How a fetch() call ended. */
export type FetchOutcome = 'hit' | 'stale' | 'load' | 'wait' | 'stale-on-error' | 'error' | 'timeout' | 'aborted' | 'refresh' | 'refresh-error';

/** On 'arenacache:evict': a set() evicted `count` entries of shard `shard` (one message per reason). */
export interface EvictMessage {
  count: number;
  reason: 'memory' | 'max';
  shard: number;
}

/** On 'arenacache:repair': a shard was repaired, losing `lost` entries. */
export interface RepairMessage {
  shard: number;
  reason: RepairReason;
  lost: number;
}

/** On 'arenacache:fetch': how a fetch() call ended. */
export interface FetchMessage {
  /** The key as given to fetch(). */
  key: CacheKey;
  outcome: FetchOutcome;
  durationMs: number;
  /** The rejection, for the outcomes that reject (and 'stale-on-error', 'refresh-error'). */
  error?: unknown;
}

/** The message each channel publishes, by channel name. */
export interface ChannelMessages {
  'arenacache:evict': EvictMessage;
  'arenacache:repair': RepairMessage;
  'arenacache:fetch': FetchMessage;
}

export {};

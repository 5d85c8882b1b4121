// Type declarations for 'arenacache/rate-limit' (lib/rate-limit/index.js):
// a store for express-rate-limit 7 and 8 that counts in a SharedCache.
//
// The store's shapes are written out here rather than imported from
// 'express-rate-limit': the entry never loads express-rate-limit (the
// limiter loads the store, not the other way round), so its declarations
// must not need it either. They are what express-rate-limit's `Store` type
// asks for, and test/types/rate-limit.ts checks that a SharedCacheStore is
// assignable to it.

import type { SharedCache } from './index.js';

/** What the store knows of a client's window: express-rate-limit's `ClientRateLimitInfo`. */
export interface SharedCacheStoreInfo {
  /** Hits in the current window (an increment's own hit included). */
  totalHits: number;
  /** When the window ends and the count starts again. */
  resetTime: Date;
}

/** Options of `new SharedCacheStore(options)`: `cache` or `path`, not both. */
export interface SharedCacheStoreOptions {
  /** The SharedCache to count in (made by `new`, `attach()` or `open()`); the caller owns it and shutdown() leaves it open. */
  cache?: SharedCache<any, any> | undefined;
  /** A cache file to open with `SharedCache.open()`; the store owns that cache and shutdown() closes it. */
  path?: string | undefined;
  /** With `path`: the size of the file if the store creates it; a file that exists keeps its own. Default 16 MiB. */
  memoryBytes?: number | undefined;
  /** Put before every client key in the cache. Default `'rl:'`. */
  prefix?: string | undefined;
}

/**
 * A store for express-rate-limit (`rateLimit({ store })`, versions 7 and 8)
 * with a fixed window per client, counted in a SharedCache: every thread,
 * cluster worker and process on the same cache or file shares the limit.
 */
export declare class SharedCacheStore {
  #private;

  /** TypeError or RangeError for bad options; ERR_CACHE_CLOSED for a closed cache; SharedCache.open()'s errors with `path`. */
  constructor(options: SharedCacheStoreOptions);

  /** Always false: every instance on the same cache sees the same counts. */
  localKeys: boolean;

  /** The SharedCache the store counts in. */
  get cache(): SharedCache;

  /** What the store puts before every client key. */
  get prefix(): string;

  /** Takes `windowMs` from express-rate-limit's options (called by the limiter when it is created). */
  init(options: { windowMs: number }): void;

  /** Counts a hit: the window's hits so far (this one included) and its end. */
  increment(key: string): Promise<SharedCacheStoreInfo>;

  /** Takes back a hit, never below 0; neither creates the key nor moves its window's end. */
  decrement(key: string): Promise<void>;

  /**
   * The current window of `key`, or undefined when it has none; not a hit.
   * resetTime is undefined only for a count something else stored without
   * a ttl (the next increment() gives it a window).
   */
  get(key: string): Promise<{ totalHits: number; resetTime: Date | undefined } | undefined>;

  /** Ends the window of `key`. */
  resetKey(key: string): Promise<void>;

  /** Ends the window of every key under the prefix, in every process sharing the cache (not one atomic step). */
  resetAll(): Promise<void>;

  /** Stops the store (later calls throw ERR_CACHE_CLOSED) and closes the cache it opened from `path`. */
  shutdown(): Promise<void>;
}

// arenacache/rate-limit: a store for express-rate-limit (its Store interface
// of versions 7 and 8) that counts hits in a SharedCache, so that every
// worker thread, every cluster worker and every process that opens the same
// file enforces one limit per client, with no Redis and no round trip
// through a cluster primary.
//
// A fixed window per client: the cache key `${prefix}${key}` holds the
// client's hit count. A hit is one cache.incr(): a missing or expired key
// starts at 1 with a ttl of windowMs (the window starts at the client's
// first hit), an existing key counts up in place and keeps its expiry (the
// window does not slide). incr() is one step under the key's shard lock, so
// hits of any number of threads and processes are counted exactly: of
// N concurrent hits, each gets its own count, and exactly `limit` of them
// pass. Nothing else is kept, in memory or in the file.

import { SharedCache } from '../cache/shared-cache.js';
import { MAX_TTL, MAX_TTL_WORDS } from '../cache/options.js';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { checkObject, checkPath, withDefaults } from '../validate.js';

/** The store's options and their defaults (docs/rate-limit.md describes each). */
const DEFAULTS = Object.freeze({
  /** The SharedCache to count in; the caller owns it (shutdown() leaves it open). Give this or `path`. */
  cache: undefined,
  /** A cache file to open with SharedCache.open(); the store owns that cache and shutdown() closes it. */
  path: undefined,
  /** The size of the file `path` when the store creates it; a file that exists keeps its own size. */
  memoryBytes: 16 * 2 ** 20,
  /** Put before every client key: keeps the counts of several limiters (and other users of the cache) apart. */
  prefix: 'rl:',
});

/**
 * How often decrement() reads and compares-and-sets before it gives up: as
 * many as cache.update() allows itself. Each attempt loses only to a write
 * of the same key between its read and its write (microseconds).
 */
const DECREMENT_ATTEMPTS = 100;

/**
 * The cache for `path`: the file opened with `memoryBytes` (which creates it
 * if it does not exist, and copes with processes creating it at once), or,
 * when the file exists with another size, the file as it is.
 */
function openFile(path, memoryBytes) {
  try {
    return SharedCache.open(path, { memoryBytes });
  } catch (error) {
    // memoryBytes is the only option given, so a mismatch is about it.
    if (error?.code !== codes.ERR_ARENA_MISMATCH) throw error;
  }
  return SharedCache.open(path);
}

function notACount(key, value) {
  const holds = Array.isArray(value) ? 'an array' : value === null ? 'null' : `a ${typeof value}`;
  return new ArenaCacheError(codes.ERR_NOT_A_NUMBER, `rate-limit key ${describe(key)} holds ${holds}, not a count: another user of the cache wrote it (give the store a prefix of its own)`);
}

export class SharedCacheStore {
  #cache;
  #owned;
  #prefix;
  /** 0 until init() gives express-rate-limit's windowMs. */
  #windowMs = 0;
  #shutDown = false;

  /**
   * Counts are shared by every instance of the store on the same cache (and
   * file): express-rate-limit's check for a key counted twice in one
   * request by two limiters sharing a local store does not apply.
   */
  localKeys = false;

  /**
   * @param {{ cache?: SharedCache, path?: string, memoryBytes?: number, prefix?: string }} options
   *   `cache` or `path` (one of them), `memoryBytes` with `path`, `prefix`
   */
  constructor(options) {
    // The likeliest mistake: without this it would read as "neither".
    if (options instanceof SharedCache) throw new TypeError('options must be an object such as { cache } or { path } (got a SharedCache: pass it as { cache })');
    const given = options;
    const resolved = withDefaults(options, DEFAULTS, 'options');
    const { cache, path, prefix } = resolved;
    if (typeof prefix !== 'string') throw new TypeError(`options.prefix must be a string (got ${describe(prefix)})`);
    if ((cache === undefined) === (path === undefined)) {
      throw new TypeError(`options must have either cache (a SharedCache) or path (a cache file to open), ${cache === undefined ? 'and has neither' : 'not both'}`);
    }
    if (cache !== undefined) {
      if (!(cache instanceof SharedCache)) throw new TypeError(`options.cache must be a SharedCache (got ${describe(cache)})`);
      if (given.memoryBytes !== undefined) throw new TypeError('options.memoryBytes sizes a file the store opens: give it with options.path, not options.cache');
      // Failing here names the mistake; failing on the first request would not.
      if (cache.closed) throw new ArenaCacheError(codes.ERR_CACHE_CLOSED, 'options.cache is closed: pass a SharedCache that close() was not called on');
      this.#cache = cache;
      this.#owned = false;
    } else {
      checkPath(path, 'options.path');
      this.#cache = openFile(path, resolved.memoryBytes);
      this.#owned = true;
    }
    this.#prefix = prefix;
  }

  /** The SharedCache the store counts in (the one it opened, with `path`). */
  get cache() {
    return this.#cache;
  }

  /** What the store puts before every client key (express-rate-limit reads it too). */
  get prefix() {
    return this.#prefix;
  }

  /**
   * Called by express-rate-limit once, with its options, when the limiter
   * is created; the store takes `windowMs` from them.
   * @param {{ windowMs: number }} options
   */
  init(options) {
    checkObject(options, 'options');
    const { windowMs } = options;
    if (typeof windowMs !== 'number') throw new TypeError(`options.windowMs must be a number of milliseconds (got ${describe(windowMs)})`);
    // 0 would be a ttl of "no expiry": a window that never ends.
    if (!(windowMs > 0 && windowMs <= MAX_TTL)) {
      throw new RangeError(`options.windowMs must be a number of milliseconds above 0 and at most ${MAX_TTL_WORDS} (got ${describe(windowMs)})`);
    }
    this.#windowMs = windowMs;
  }

  /**
   * Counts a hit of `key`: { totalHits, resetTime }, totalHits counting this
   * one, resetTime when the window ends.
   * @param {string} key
   */
  async increment(key) {
    const cacheKey = this.#cacheKey(key, 'increment');
    const windowMs = this.#windowMs;
    if (windowMs === 0) {
      throw new ArenaCacheError(
        codes.ERR_STORE_NOT_INITIALIZED,
        'increment() before init(): express-rate-limit calls store.init(options) with its windowMs when the limiter is created; used on its own, call store.init({ windowMs }) first',
      );
    }
    const totalHits = this.#cache.incr(cacheKey, 1, { ttl: windowMs });
    const entry = this.#cache.info(cacheKey);
    let resetAt = entry?.expiresAt;
    if (resetAt === Infinity) {
      // A count without expiry, which this store never writes (a set() of
      // the key without ttl): without a window it would block for good.
      this.#cache.touch(cacheKey, windowMs);
      resetAt = undefined;
    }
    // undefined: the key expired or was reset right after the incr (the
    // next hit starts a window), or was given a window just now.
    return { totalHits, resetTime: new Date(resetAt ?? Date.now() + windowMs) };
  }

  /**
   * Takes back a hit of `key` (express-rate-limit's skipSuccessfulRequests
   * and skipFailedRequests): one less, never below 0. It neither creates the
   * key nor moves the end of its window: a key that is missing or has
   * expired is left alone.
   * @param {string} key
   */
  async decrement(key) {
    const cacheKey = this.#cacheKey(key, 'decrement');
    for (let attempt = 0; attempt < DECREMENT_ATTEMPTS; attempt++) {
      const entry = this.#cache.info(cacheKey);
      if (entry === undefined) return;
      if (typeof entry.value !== 'number') throw notACount(cacheKey, entry.value);
      if (entry.value <= 0) return;
      // incr(-1) would keep the expiry, but on a key that expired since the
      // read it would start a window; compareAndSet() stores only over the
      // entry read.
      if (this.#storeUntil(cacheKey, entry.version, entry.value - 1, entry.expiresAt)) return;
    }
    throw new ArenaCacheError(
      codes.ERR_UPDATE_CONFLICT,
      `decrement(): key ${describe(cacheKey)} was changed by other writers between each of ${DECREMENT_ATTEMPTS} reads and the write after it; its count was left as it was`,
    );
  }

  /**
   * compareAndSet() of `count` over the entry of `version`, ending at `end`
   * (ms since the epoch, or Infinity) as it did: true if it stored, or if
   * the window ended meanwhile (nothing to take back from), false if
   * another write came first. A ttl is relative to the cache's Date.now()
   * at the write, a little after the one the ttl is computed from: when
   * the clock ticked in between, the end came out a millisecond late, and
   * is written again (the count as it is by then) until it is `end`.
   */
  #storeUntil(cacheKey, version, count, end) {
    const cache = this.#cache;
    for (let write = 0; write < DECREMENT_ATTEMPTS; write++) {
      const now = Date.now();
      if (end <= now) return true;
      const ttl = end === Infinity ? 0 : end - now;
      if (!cache.compareAndSet(cacheKey, version, count, { ttl, staleWhileRevalidate: 0 })) return write > 0;
      // The write read the clock between these two reads of it.
      if (end === Infinity || Date.now() === now) return true;
      const written = cache.info(cacheKey);
      if (written === undefined || written.expiresAt <= end || typeof written.value !== 'number') return true;
      ({ version, value: count } = written);
    }
    return true;
  }

  /**
   * { totalHits, resetTime } of `key`'s current window, or undefined when
   * it has none. Not a hit.
   * @param {string} key
   */
  async get(key) {
    const cacheKey = this.#cacheKey(key, 'get');
    const entry = this.#cache.info(cacheKey);
    if (entry === undefined) return undefined;
    if (typeof entry.value !== 'number') throw notACount(cacheKey, entry.value);
    return { totalHits: entry.value, resetTime: entry.expiresAt === Infinity ? undefined : new Date(entry.expiresAt) };
  }

  /**
   * Ends `key`'s window: its next hit starts a new one.
   * @param {string} key
   */
  async resetKey(key) {
    this.#cache.delete(this.#cacheKey(key, 'resetKey'));
  }

  /**
   * Ends the window of every key under the store's prefix, in every process
   * that shares the cache. Not one atomic step: it walks the cache's keys,
   * so a count started meanwhile may stay. With prefix '' it deletes every
   * string key of the cache.
   */
  async resetAll() {
    this.#checkOpen('resetAll');
    const prefix = this.#prefix;
    // keys() reads each shard at one instant, so deleting while walking is safe.
    for (const key of this.#cache.keys()) {
      if (typeof key === 'string' && key.startsWith(prefix)) this.#cache.delete(key);
    }
  }

  /**
   * Stops the store: later calls throw ERR_CACHE_CLOSED. Closes the cache
   * it opened from `path`; a cache it was given stays open for its owner.
   * The counts stay in the cache.
   */
  async shutdown() {
    if (this.#shutDown) return;
    this.#shutDown = true;
    if (this.#owned) this.#cache.close();
  }

  #checkOpen(method) {
    if (this.#shutDown) throw new ArenaCacheError(codes.ERR_CACHE_CLOSED, `${method}() after shutdown(): the store is shut down`);
  }

  /** The cache key of express-rate-limit's `key`, after the checks every method makes. */
  #cacheKey(key, method) {
    this.#checkOpen(method);
    if (typeof key !== 'string') throw new TypeError(`key must be a string (got ${describe(key)})`);
    return this.#prefix + key;
  }
}

// The inode cache of an InodeFS: inode records and directory entries of the
// latest committed state, in a SharedCache (so every thread given the same
// cache shares it), bounded by entry count.
//
// Only committed data enters it: writers update it (a private cache) or drop
// the changed keys (a shared one) after their transaction commits, and a
// miss is filled from a fresh read while the key's shard lock is held. So a
// reader holding an older state can never store it over what a writer has
// just written: either its fill comes first and the writer's update or drop
// follows it, or it comes after and reads the new state.

import { SharedCache } from '../cache/shared-cache.js';
import { fullyWaiting } from '../cache/fully-waiting.js';
import { kStampIsCurrent } from '../internal-symbols.js';
import { FoundEntry } from '../cache/found-entry.js';

/** Shared memory per cached entry (records carry inline file data). */
const BYTES_PER_ENTRY = 2048;

export class InodeCache {
  #cache = null;
  /** The cache's calls that take a lock, waiting for a stopped holder rather than give up (see fully-waiting.js). */
  #calls = null;
  #private;
  #maxSize;
  #hits = 0;
  #misses = 0;

  #prefix;

  /**
   * @param {SharedCache | undefined} shared a cache given by the user, else a private one of `size` entries
   * @param {string} prefix put before every key: a shared cache may serve several stores, and hold
   *   entries of an earlier owner process of this one
   */
  constructor(shared, size, prefix) {
    this.#private = shared === undefined;
    this.#prefix = prefix;
    if (shared !== undefined) {
      this.#cache = shared;
      this.#calls = fullyWaiting(shared);
      this.#maxSize = shared.stats().maxEntries ?? size;
    } else {
      this.resize(size);
    }
  }

  get isPrivate() {
    return this.#private;
  }

  get enabled() {
    return this.#cache !== null;
  }

  /**
   * The cached value of `key`, else `load()`'s (stored unless undefined).
   * While a trace is on (trace()), each hit's stamp is added to it; a miss
   * spoils it (a filled value has no stamp to check later).
   */
  get(key, load) {
    if (this.#cache === null) return load();
    const cacheKey = this.#prefix + key;
    const trace = this.#trace;
    // A traced get hands the cache a record to fill with what answered it.
    const found = this.#found;
    const value = trace === null ? this.#calls.get(cacheKey) : this.#calls.getFound(cacheKey, found);
    if (value !== undefined) {
      this.#hits++;
      if (trace !== null) trace.push(found.toRecordStamp());
      return value;
    }
    this.#misses++;
    this.#trace = null;
    let loaded;
    try {
      return this.#calls.fillLocked(cacheKey, () => (loaded = load()));
    } catch (error) {
      // A record too large for the cache's entries (inline content): served, not cached.
      if (error instanceof RangeError && loaded !== undefined) return loaded;
      throw error;
    }
  }

  #trace = null;
  /** The record a traced get fills (see get()): read right after it, before any other get. */
  #found = new FoundEntry();

  /** `lookups` answered without asking the cache (the path memo answered for them): hits all the same. */
  countHits(lookups) {
    this.#hits += lookups;
  }

  /** Starts collecting the stamps of the coming hits. */
  trace() {
    this.#trace = [];
  }

  /** The stamps collected since trace(), or null if some lookup missed; ends the trace. */
  traced() {
    const stamps = this.#trace;
    this.#trace = null;
    return stamps;
  }

  /** Whether every stamp still holds: the values read with them are still the cache's (no write, eviction or fill since). */
  holds(stamps) {
    const cache = this.#cache;
    if (cache === null) return false;
    for (let i = 0; i < stamps.length; i++) if (!cache[kStampIsCurrent](stamps[i])) return false;
    return true;
  }

  /** After a commit: the new values of the changed keys (undefined: gone). */
  apply(changes) {
    if (this.#cache === null) return;
    for (const [key, value] of changes) {
      const cacheKey = this.#prefix + key;
      // A shared cache hears from writers in several threads, whose updates
      // may arrive in another order than their commits: a set could put an
      // older record over a newer one. So it only drops the keys, and the
      // next read fills them from lmdb under the shard lock. A private cache
      // has one writer, whose updates come in commit order.
      if (value === undefined || !this.#private) {
        this.#calls.delete(cacheKey);
        continue;
      }
      try {
        this.#calls.set(cacheKey, value);
      } catch (error) {
        // Too large to cache (inline content): the old value must not stay.
        if (!(error instanceof RangeError)) throw error;
        this.#calls.delete(cacheKey);
      }
    }
  }

  stats() {
    const lookups = this.#hits + this.#misses;
    return { size: this.#cache?.size ?? 0, maxSize: this.#maxSize, hits: this.#hits, misses: this.#misses, hitRate: lookups === 0 ? 0 : this.#hits / lookups };
  }

  flush() {
    this.#calls?.clear();
  }

  /** A new private cache of `size` entries (0: none). */
  resize(size) {
    this.#cache?.close();
    this.#trace = null;
    this.#maxSize = size;
    this.#cache = size === 0 ? null : new SharedCache({ memoryBytes: Math.max(2 ** 20, size * BYTES_PER_ENTRY), max: size, policy: 'lru' });
    this.#calls = this.#cache === null ? null : fullyWaiting(this.#cache);
  }

  close() {
    if (this.#private) this.#cache?.close();
    this.#cache = null;
    this.#calls = null;
  }
}

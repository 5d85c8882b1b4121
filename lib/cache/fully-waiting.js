// A SharedCache seen by the layers built on it (CacheFS, InodeFS's inode
// cache) whose writes must not be cut short: their calls wait for a shard
// lock as long as a live holder keeps it, not only options.lockWaitMs.
//
// A CacheFS write changes the disk and then the cache's record of the
// file; an InodeFS write commits and then updates its cache. If the second
// step gave up on a stopped holder (ERR_ARENA_BUSY), the cache would keep
// describing a version that is gone, and serve it. Until those layers can
// undo or retry such a step, they wait for the holder, as every call did
// before lockWaitMs existed (docs/how-it-works.md, bounded waits).

import { kFillLocked, kGetFound, kStampIsCurrent, kWaitFully } from '../internal-symbols.js';

/**
 * The calls of `cache` those layers make, each waiting without bound.
 * @param {import('./shared-cache.js').SharedCache} cache
 */
export function fullyWaiting(cache) {
  return {
    maxKeyBytes: cache.maxKeyBytes,
    get: (key) => cache[kWaitFully](() => cache.get(key)),
    /** get(), filling `found` (the caller's FoundEntry) with what answered it (see kGetFound). */
    getFound: (key, found) => cache[kWaitFully](() => cache[kGetFound](key, found)),
    /** Whether the value read with `stamp` is still the entry's (no lock: nothing to wait for). */
    stampIsCurrent: (stamp) => cache[kStampIsCurrent](stamp),
    set: (key, value) => cache[kWaitFully](() => cache.set(key, value)),
    delete: (key) => cache[kWaitFully](() => cache.delete(key)),
    /** Every key, listed at once (keys() is a generator: its shards are read as it is consumed). */
    keys: () => cache[kWaitFully](() => [...cache.keys()]),
    fillLocked: (key, load) => cache[kWaitFully](() => cache[kFillLocked](key, load)),
    clear: () => cache[kWaitFully](() => cache.clear()),
  };
}

// The symbols through which one part of the package reaches another's
// internals. Symbol keys stay out of option checks, enumeration and the
// public API; none of them is exported from the package.

// SharedCache's, for CacheFS's near cache and InodeFS's path memo (see
// lib/arena/entries/record-stamp.js for what a stamp proves).

/**
 * [kGetFound](key, found): get(key), and on a hit fills `found` (a
 * FoundEntry, lib/cache/found-entry.js, that the caller owns) with what
 * answered it: found.toRecordStamp() is the stamp of the value returned.
 */
export const kGetFound = Symbol('getFound');
/** [kStampIsCurrent](stamp): whether the value read with `stamp` is still the entry's. */
export const kStampIsCurrent = Symbol('stampIsCurrent');
/** [kBothStampsAreCurrent](a, b): whether the values read with stamps `a` and `b` are both still their entries'. */
export const kBothStampsAreCurrent = Symbol('bothStampsAreCurrent');
/** [kFillLocked](key, load): stores `load()`'s value under `key` while holding the key's shard lock. */
export const kFillLocked = Symbol('fillLocked');
/** [kWaitFully](fn): runs `fn()` with the instance's shard lock waits not bounded by lockWaitMs (see lib/cache/fully-waiting.js). */
export const kWaitFully = Symbol('waitFully');

/**
 * [kInvalidation](): the port through which an InvalidationBus reaches its
 * cache's outbox and applies peers' invalidations without publishing them again.
 */
export const kInvalidation = Symbol('invalidation');
/**
 * SharedCache's internal methods for the Redis tier's holder (lib/redis):
 * this thread's owner identity as lock records name it, and whether the
 * owner of such an identity is known to be dead, in any PID namespace for a
 * file-backed cache (arena/common/liveness.js).
 */
export const kOwnerIdentity = Symbol('ownerIdentity');
export const kOwnerIsDead = Symbol('ownerIsDead');
/** [kUnpublished](): another instance over the same arena whose writes an InvalidationBus does not publish (for the Redis tier). */
export const kUnpublished = Symbol('unpublished');

/**
 * An option of InvalidationBus, for tests only: the bus's clock (a function
 * returning ms since the epoch, default Date.now), so that a test can run a
 * peer whose clock is off. A symbol key: option checks do not see it, and it
 * is not part of the documented options.
 */
export const kClock = Symbol('clock');

/**
 * [kBacking](): how an InodeFS gives a CacheFS its backing (lib/fs/backing.js),
 * so that lib/fs needs nothing of lmdb. In the global registry (Symbol.for),
 * so that an InodeFS of another copy of the package is a root all the same.
 */
export const kBacking = Symbol.for('arenacache.fs.backing');

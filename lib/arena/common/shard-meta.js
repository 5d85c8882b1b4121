// The words of a shard's 128-byte meta line (an Int32Array of 32), in one
// place so that the lock, the shard, its rings and its policy cannot collide.
//
// Two threads setting keys of one shard pass its meta block back and forth
// between their cores, so everything a rewrite in place writes (the lock and
// its owner, the live bytes, the write stamp) is in words 0-11: the first 48
// bytes are one cache line whether the buffer starts on a 64-byte line (a
// mapped file) or 16 bytes past one (a SharedArrayBuffer from malloc, as V8
// allocates them). Inserts add the counts and the main ring (words 11-15);
// the small ring, sampled evictions and the sweeper use the rest. With the
// 16-byte shift, words 23-31 share a line with the next shard's lock: only
// a reset (M_RESETTING), a relocation onto itself (M_MOVE_*) and an
// increment in place (M_UNDO_*) write there.

// ShardLock (shard-lock.js). The block store's stripes and the invalidation
// outbox share these lock words with their own layouts: keep them here.
export const M_SEQ = 0;
export const M_OWNER_PID = 1;
/** The holder's id: its kernel tid in memory, its thread slot's claim id in a mapped file (see liveness.js). */
export const M_OWNER_TID = 2;
/** Threads sleeping in Atomics.wait on M_SEQ. */
export const M_WAITERS = 9;
/** The sequence value of the holding that M_OWNER_PID/M_OWNER_TID describe. */
export const M_OWNER_SEQ = 10;

// Shard (shard.js)
export const M_COUNT = 3;
export const M_LIVE_BYTES = 4;
export const M_TTL_COUNT = 5;
/**
 * Float64 index (words 6-7) of the shard's write count, which stamps every
 * record written (see record.js). It only grows, across clear() and repairs,
 * so a stamp is never handed out twice.
 */
export const M64_WRITE_STAMP = 3;
export const M_AGING_CURSOR = 8;

// Rings (ring.js): 5 words each from here, main ring first (words 11-15, then 16-20).
export const M_RINGS = 11;

/** xorshift32 state for sampling (writers only). */
export const M_RANDOM = 21;
export const M_SWEEP_CURSOR = 22;
/**
 * 1 while Shard.reset() runs (a clear): a holder that dies meanwhile leaves
 * it set, and the rebuild after it finishes the clear (see rebuild.js). On
 * the next shard's lock line, which only a reset writes to.
 */
export const M_RESETTING = 23;
/**
 * A relocation whose copy overlaps its source (Ring.recycleTail), while it
 * runs: the record's offset + 1 (0: none), where it goes, and its size. A
 * holder that dies meanwhile may leave the record torn; the rebuild after it
 * drops that record and skips what it covered (see rebuild.js).
 */
export const M_MOVE_FROM = 24;
export const M_MOVE_TO = 25;
export const M_MOVE_SIZE = 26;
/**
 * An increment in place of a number record (SharedCache.incr, see
 * entries/atomic-ops.js), while it runs: the record's offset + 1 (0: none),
 * and the value and write stamp it had, as float64s (words 28-31). A holder
 * that dies meanwhile leaves them set, and the rebuild after it puts the
 * record back as it was: a counter is left as it was before the increment in
 * flight, or after it, never lost.
 */
export const M_UNDO_AT = 27;
export const M64_UNDO_VALUE = 14;
export const M64_UNDO_STAMP = 15;

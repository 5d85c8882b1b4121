// The words of a shard's 128-byte meta line (an Int32Array of 32), in one
// place so that the lock, the shard, its rings and its policy cannot collide.

// ShardLock (shard-lock.js)
export const M_SEQ = 0;
export const M_OWNER_PID = 1;
export const M_OWNER_TID = 2;
/** Threads sleeping in Atomics.wait on M_SEQ. */
export const M_WAITERS = 9;
/** The sequence value of the holding that M_OWNER_PID/M_OWNER_TID describe. */
export const M_OWNER_SEQ = 10;

// Shard (shard.js)
export const M_COUNT = 3;
export const M_LIVE_BYTES = 4;
export const M_TTL_COUNT = 5;
/** xorshift32 state for sampling (writers only). */
export const M_RANDOM = 6;
export const M_SWEEP_CURSOR = 7;
export const M_AGING_CURSOR = 8;

// Rings (ring.js): 5 words each from here, main ring first.
export const M_RINGS = 12;

/**
 * Float64 index (words 22-23) of the shard's write count, which stamps every
 * record written (see record.js). It only grows, across clear() and repairs,
 * so a stamp is never handed out twice.
 */
export const M64_WRITE_STAMP = 11;

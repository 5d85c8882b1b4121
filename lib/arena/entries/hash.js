// Key hashing: FNV-1a over the key bytes, started from a per-arena random
// seed and the key kind, then a murmur3 finalizer so that every bit of the
// result depends on every input byte. The low bits pick the shard, the high
// bits the dictionary slot; keys like "user:1", "user:2" spread evenly.
//
// The seed lives in the arena header, so every thread and process computes the
// same hash, while an outsider cannot precompute colliding keys offline.

export const FNV_PRIME = 0x01000193;
export const FNV_OFFSET = 0x811c9dc5;

/** The starting state for keys of `keyKind` in an arena with `seed`. */
export function hashStart(seed, keyKind) {
  return Math.imul((FNV_OFFSET ^ seed) >>> 0, FNV_PRIME) ^ (keyKind + 1);
}

/** The final avalanche step; returns an unsigned 32-bit hash. */
export function hashFinish(h) {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash of `bytes[0, length)` from a start state. */
export function hashBytes(start, bytes, length) {
  let h = start;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ bytes[i], FNV_PRIME);
  return hashFinish(h);
}

/**
 * FNV-1a state after `bytes[from, to)`, continued from state `h` (not
 * finished, so that one hash can run over several ranges).
 */
export function fnv1aRange(h, bytes, from, to) {
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i], FNV_PRIME);
  return h >>> 0;
}

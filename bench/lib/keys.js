// Keys, payloads and access orders shared by the benchmarks: every peer sees
// the same keys in the same (random, seeded) order.

import { fillRandom, shuffledIndexes } from '../../test/helpers/seeded-random.js';

export function makeKeys(count) {
  return Array.from({ length: count }, (_, i) => `key:${i}`);
}

/** A seeded permutation of [0, n), so reads hit keys in random order. */
export function shuffledOrder(n, seed = 42) {
  return shuffledIndexes(n, seed);
}

/** `size` seeded pseudo-random bytes. */
export function makePayload(size, seed = 1) {
  return fillRandom(Buffer.allocUnsafe(size), seed);
}

/** memoryBytes large enough to hold every entry with room to spare. */
export function arenaBytesFor(entries, payload) {
  return Math.max(64 * 2 ** 20, 2 ** Math.ceil(Math.log2(entries * (payload + 64) * 2)));
}

// Keys, payloads and access orders shared by the benchmarks: every peer sees
// the same keys in the same (random, seeded) order.

export function makeKeys(count) {
  return Array.from({ length: count }, (_, i) => `key:${i}`);
}

/** A seeded permutation of [0, n), so reads hit keys in random order. */
export function shuffledOrder(n, seed = 42) {
  const order = Array.from({ length: n }, (_, i) => i);
  let state = seed >>> 0;
  for (let i = n - 1; i > 0; i--) {
    state = (Math.imul(state ^ (state >>> 15), 2246822519) + 0x6d2b79f5) >>> 0;
    const j = state % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

export function makePayload(size, seed = 1) {
  const payload = Buffer.allocUnsafe(size);
  let x = seed;
  for (let i = 0; i < size; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    payload[i] = x >>> 24;
  }
  return payload;
}

/** memoryBytes large enough to hold every entry with room to spare. */
export function arenaBytesFor(entries, payload) {
  return Math.max(64 * 2 ** 20, 2 ** Math.ceil(Math.log2(entries * (payload + 64) * 2)));
}

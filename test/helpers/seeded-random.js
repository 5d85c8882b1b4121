// The one seeded random generator of the tests, the benchmarks and the demo
// (mulberry32), so that a seed names the same sequence everywhere: a failing
// randomized test prints its seed and SEED=<n> replays it, and every
// benchmark run and peer sees the same keys, sizes and orders.

/**
 * mulberry32 from `seed`: a function returning floats in [0, 1), with
 * `.word()` (the next unsigned 32-bit word; the float is word / 2^32),
 * `.int(n)` (an integer in [0, n)) and `.pick(items)`, all drawing from the
 * same sequence.
 */
export function seededRandom(seed) {
  let state = seed >>> 0;
  const word = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
  const next = () => word() / 4294967296;
  next.word = word;
  next.int = (n) => Math.floor(next() * n);
  next.pick = (items) => items[Math.floor(next() * items.length)];
  return next;
}

/** Fills `bytes` (a Uint8Array or Buffer) from `from` to `to` with the sequence of `seed`; returns `bytes`. */
export function fillRandom(bytes, seed, from = 0, to = bytes.length) {
  const random = seededRandom(seed);
  let i = from;
  for (; i + 4 <= to; i += 4) {
    const w = random.word();
    bytes[i] = w;
    bytes[i + 1] = w >>> 8;
    bytes[i + 2] = w >>> 16;
    bytes[i + 3] = w >>> 24;
  }
  for (let w = random.word(); i < to; i++, w >>>= 8) bytes[i] = w;
  return bytes;
}

/** A seeded permutation of [0, n) (Fisher-Yates). */
export function shuffledIndexes(n, seed) {
  const random = seededRandom(seed);
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = random.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** The seed for this run: SEED from the environment, else a fresh one. */
export function testSeed() {
  return process.env.SEED ? Number(process.env.SEED) : (Math.random() * 2 ** 32) >>> 0;
}

/** Whether the long versions of the stress tests were asked for. */
export const STRESS = process.env.STRESS === '1';

// A small seeded PRNG (mulberry32) so randomized tests are reproducible:
// a failing run prints its seed, and SEED=<n> replays it.

export function seededRandom(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (n) => Math.floor(next() * n);
  next.pick = (items) => items[Math.floor(next() * items.length)];
  return next;
}

/** The seed for this run: SEED from the environment, else a fresh one. */
export function testSeed() {
  return process.env.SEED ? Number(process.env.SEED) : (Math.random() * 2 ** 32) >>> 0;
}

/** Whether the long versions of the stress tests were asked for. */
export const STRESS = process.env.STRESS === '1';

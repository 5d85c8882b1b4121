// Seeded randomness for the benchmarks and the demo: every run and every
// peer sees the same sequence.

/** mulberry32: a small, good 32-bit PRNG; returns floats in [0, 1). */
export function seededRandom(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Samples ranks 0..n-1 with probability proportional to 1 / (rank + 1)^alpha. */
export function zipfSampler(n, alpha, random) {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1) ** alpha;
    cdf[k] = total;
  }
  return () => {
    const target = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Spreads ranks over the key space so that popular keys are not neighbours. */
export function scatter(rank, keys) {
  return (rank * 2654435761) % keys;
}

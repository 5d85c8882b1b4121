// A seeded Zipf sampler: rank k (0-based) is drawn with probability
// proportional to 1 / (k + 1)^alpha, like the popularity of real request keys.

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

export function zipfSampler(n, alpha, seed) {
  const cdf = new Float64Array(n);
  let total = 0;
  for (let k = 0; k < n; k++) {
    total += 1 / (k + 1) ** alpha;
    cdf[k] = total;
  }
  const random = seededRandom(seed);
  // Ranks map to scattered keys, so popular keys are not neighbours.
  const keyOfRank = Uint32Array.from({ length: n }, (_, k) => (k * 2654435761) % n);
  return () => {
    const target = random() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cdf[mid] < target) lo = mid + 1;
      else hi = mid;
    }
    return keyOfRank[lo];
  };
}

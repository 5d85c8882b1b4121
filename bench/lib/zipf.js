// Zipf popularity for the benchmarks and the demo: which rank a draw of a
// seeded generator (test/helpers/seeded-random.js) is, and where each rank
// sits in the key space.

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

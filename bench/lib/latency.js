// Latency summaries for the benchmark reports.

/** { avgUs, p50Us, p99Us, maxUs } of per-operation times in ms (or null for none). */
export function summarizeLatency(samplesMs) {
  if (samplesMs.length === 0) return null;
  const sorted = Float64Array.from(samplesMs).sort();
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] * 1000;
  const sum = sorted.reduce((a, b) => a + b, 0);
  return { samples: sorted.length, avgUs: (sum / sorted.length) * 1000, p50Us: at(0.5), p99Us: at(0.99), maxUs: sorted[sorted.length - 1] * 1000 };
}

/** `count` seeded random indexes below `n`. */
export function randomIndexes(count, n, seed) {
  const out = new Uint32Array(count);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = (x >>> 0) % n;
  }
  return out;
}

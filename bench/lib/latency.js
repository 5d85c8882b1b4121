// Latency summaries for the benchmark reports, on a perf_hooks histogram
// (HDR, three significant digits), as lib/cache/latency.js keeps them.

import { createHistogram } from 'node:perf_hooks';

/** { samples, avgUs, p50Us, p99Us, maxUs } of per-operation times in ms (or null for none). */
export function summarizeLatency(samplesMs) {
  if (samplesMs.length === 0) return null;
  const histogram = createHistogram();
  // In nanoseconds: a histogram holds whole numbers of 1 or more.
  for (const ms of samplesMs) histogram.record(Math.max(1, Math.round(ms * 1e6)));
  return {
    samples: histogram.count,
    avgUs: histogram.mean / 1000,
    p50Us: histogram.percentile(50) / 1000,
    p99Us: histogram.percentile(99) / 1000,
    maxUs: histogram.max / 1000,
  };
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

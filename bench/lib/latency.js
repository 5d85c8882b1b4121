// Latency summaries for the benchmark reports, on a perf_hooks histogram
// (HDR, three significant digits), as lib/cache/latency.js keeps them.

import { createHistogram } from 'node:perf_hooks';
import { summary } from '../../lib/cache/latency.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';

/** { samples, avgUs, p50Us, p99Us, maxUs } of per-operation times in ms (or null for none). */
export function summarizeLatency(samplesMs) {
  if (samplesMs.length === 0) return null;
  const histogram = createHistogram();
  // In nanoseconds: a histogram holds whole numbers of 1 or more.
  for (const ms of samplesMs) histogram.record(Math.max(1, Math.round(ms * 1e6)));
  return summary(histogram);
}

/** `count` seeded random indexes below `n`. */
export function randomIndexes(count, n, seed) {
  const random = seededRandom(seed);
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) out[i] = random.int(n);
  return out;
}

// Latency summaries for the benchmark reports.

import { seededRandom } from '../../test/helpers/seeded-random.js';

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
  const random = seededRandom(seed);
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) out[i] = random.int(n);
  return out;
}

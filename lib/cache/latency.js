// LatencySampler: optional latency sampling of get() and set() for
// benchmarks (cache.startLatencySampling()). The times go into two
// perf_hooks histograms (HDR, three significant digits, in nanoseconds), so
// the percentiles cover every sampled call in constant memory.
//
// A cache with a sampler hands its get() and set() calls to it; the sampler
// calls the same method back with `passing` set, and that call (with any the
// codec or a getter makes inside it) runs plain. Without a sampler the
// methods pay one null check of a private field.

import { createHistogram } from 'node:perf_hooks';
import { describe } from '../errors.js';

const DEFAULT_EVERY = 64;

/** Nanoseconds since `start` (process.hrtime.bigint()), recorded; a histogram holds 1 ns or more. */
function recordSince(histogram, start) {
  const elapsed = process.hrtime.bigint() - start;
  histogram.record(elapsed > 0n ? elapsed : 1n);
}

/** { samples, avgUs, p50Us, p99Us, maxUs } of a histogram of nanoseconds (the benchmarks' reports use it too). */
export function summary(histogram) {
  if (histogram.count === 0) return { samples: 0, avgUs: 0, p50Us: 0, p99Us: 0, maxUs: 0 };
  return {
    samples: histogram.count,
    avgUs: histogram.mean / 1000,
    p50Us: histogram.percentile(50) / 1000,
    p99Us: histogram.percentile(99) / 1000,
    maxUs: histogram.max / 1000,
  };
}

export class LatencySampler {
  /** One get() or set() in this many is timed. */
  #every;
  /** Calls of either method so far: they share the count. */
  #calls = 0;
  #getTimes = createHistogram();
  #setTimes = createHistogram();
  /** True while a call handed to this sampler runs: the cache then runs its calls plain. */
  passing = false;

  /**
   * @param {{ every?: number } | undefined} options startLatencySampling()'s
   */
  constructor(options) {
    const every = options?.every ?? DEFAULT_EVERY;
    if (typeof every !== 'number') throw new TypeError(`options.every must be a number (got ${describe(every)})`);
    if (!Number.isInteger(every) || every < 1) throw new RangeError(`options.every must be a positive integer (got ${describe(every)})`);
    this.#every = every;
  }

  /** Whether this call is one to time. */
  #due() {
    return ++this.#calls % this.#every === 0;
  }

  /**
   * cache.get(key, options), timed when it is due.
   * @param {{ get(key: unknown, options?: object): unknown }} cache
   */
  get(cache, key, options) {
    const start = this.#due() ? process.hrtime.bigint() : 0n;
    this.passing = true;
    try {
      return cache.get(key, options);
    } finally {
      this.passing = false;
      if (start !== 0n) recordSince(this.#getTimes, start);
    }
  }

  /**
   * cache.set(key, value, options), timed when it is due.
   * @param {{ set(key: unknown, value: unknown, options?: object): unknown }} cache
   */
  set(cache, key, value, options) {
    const start = this.#due() ? process.hrtime.bigint() : 0n;
    this.passing = true;
    try {
      return cache.set(key, value, options);
    } finally {
      this.passing = false;
      if (start !== 0n) recordSince(this.#setTimes, start);
    }
  }

  /** latency()'s report: { every, get: { samples, avgUs, p50Us, p99Us, maxUs }, set: {...} }. */
  report() {
    return { every: this.#every, get: summary(this.#getTimes), set: summary(this.#setTimes) };
  }
}

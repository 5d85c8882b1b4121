// LatencySampler: optional latency sampling of get() and set() for
// benchmarks. It is installed by wrapping the two methods on one cache
// instance; without it the methods are the plain prototype ones, so sampling
// costs nothing when it is off.

const RESERVOIR = 65_536;

class Samples {
  constructor() {
    this.values = new Float64Array(RESERVOIR);
    this.count = 0;
    this.sum = 0;
    this.max = 0;
  }

  add(microseconds) {
    this.values[this.count % RESERVOIR] = microseconds;
    this.count++;
    this.sum += microseconds;
    if (microseconds > this.max) this.max = microseconds;
  }

  summary() {
    const n = Math.min(this.count, RESERVOIR);
    if (n === 0) return { samples: 0, avgUs: 0, p50Us: 0, p99Us: 0, maxUs: 0 };
    const sorted = this.values.slice(0, n).sort();
    const at = (q) => sorted[Math.min(n - 1, Math.floor(q * n))];
    return { samples: this.count, avgUs: this.sum / this.count, p50Us: at(0.5), p99Us: at(0.99), maxUs: this.max };
  }
}

export class LatencySampler {
  /** @param {number} every time one call in `every` */
  constructor(every) {
    this.every = every;
    this.calls = 0;
    this.get = new Samples();
    this.set = new Samples();
  }

  /** Wraps `method` (get or set) so that one call in `every` is timed. */
  wrap(samples, method) {
    const sampler = this;
    return function sampled(...args) {
      if (++sampler.calls % sampler.every !== 0) return method.apply(this, args);
      const start = process.hrtime.bigint();
      try {
        return method.apply(this, args);
      } finally {
        samples.add(Number(process.hrtime.bigint() - start) / 1000);
      }
    };
  }

  report() {
    return { every: this.every, get: this.get.summary(), set: this.set.summary() };
  }
}

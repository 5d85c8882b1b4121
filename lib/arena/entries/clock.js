// Clock: Date.now() for expiry checks, optionally cached for `resolution` ms
// (like lru-cache's ttlResolution). Calling Date.now() costs tens of
// nanoseconds, as much as the rest of a small read; with a resolution the
// time is read at most once per window and an entry may live up to
// `resolution` ms past its expiry. The timer that ends a window is unref'd,
// so it never keeps a process alive.

export class Clock {
  /** @param {number} resolution ms; 0 reads the time on every call */
  constructor(resolution) {
    this.resolution = resolution;
    this.cached = 0;
    this.expire = () => {
      this.cached = 0;
    };
  }

  now() {
    if (this.resolution === 0) return Date.now();
    if (this.cached === 0) {
      this.cached = Date.now();
      setTimeout(this.expire, this.resolution).unref();
    }
    return this.cached;
  }
}

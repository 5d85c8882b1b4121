// ReplayGuard: refuses an invalidation datagram seen before, or one whose
// timestamp is outside the window around now. Nonces are remembered until
// their datagram would be stale anyway; memory is bounded by `maxNonces`:
// when full, the oldest are forgotten and everything not newer than them
// is refused as stale from then on, so a forgotten nonce can never be
// replayed.

export class ReplayGuard {
  /**
   * @param {{ windowMs: number, maxNonces: number }} options
   */
  constructor({ windowMs, maxNonces }) {
    this.windowMs = windowMs;
    this.maxNonces = maxNonces;
    /** nonce (hex) -> timestamp (ms); insertion order is arrival order. */
    this.seen = new Map();
    /** Datagrams stamped at or before this were possibly forgotten: refused. */
    this.floor = -Infinity;
  }

  /** 'stale', 'replay', or null (accepted, and remembered). */
  check(nonce, timestamp, now = Date.now()) {
    if (!(Math.abs(now - timestamp) <= this.windowMs) || timestamp <= this.floor) return 'stale';
    if (this.seen.has(nonce)) return 'replay';
    this.#forgetOld(now);
    this.seen.set(nonce, timestamp);
    return null;
  }

  #forgetOld(now) {
    for (const [nonce, timestamp] of this.seen) {
      // Stale now, so refused by the window whether remembered or not.
      if (now - timestamp > this.windowMs) this.seen.delete(nonce);
      else break;
    }
    while (this.seen.size >= this.maxNonces) {
      const [nonce, timestamp] = this.seen.entries().next().value;
      this.seen.delete(nonce);
      this.floor = Math.max(this.floor, timestamp);
    }
  }
}

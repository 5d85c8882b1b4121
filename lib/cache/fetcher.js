// Fetcher: single-flight loading across threads for SharedCache#fetch.
//
// On a miss, the first caller in the whole arena (any thread, any process
// with a mapped file) claims the key in the FlightTable and runs the loader;
// everyone else waits for it and then reads the value from the cache. Calls
// in the same thread share one promise and never touch the table twice.
// A loader's error rejects every waiter: in its own thread with the error
// itself, in other threads with an Error of the same name, message and code.

import { STAT } from '../arena/thread-stats.js';

/** After this many rounds of waiting and missing, a caller loads by itself. */
const MAX_ROUNDS = 8;

export class Fetcher {
  /**
   * @param {{ get(key: unknown): unknown, set(key: unknown, value: unknown, options?: object): unknown }} cache
   * @param {import('../arena/flights.js').FlightTable} flights
   * @param {Float64Array} counters this thread's counter slot
   * @param {number} timeoutMs how long to wait for another thread's loader
   */
  constructor(cache, flights, counters, timeoutMs) {
    this.cache = cache;
    this.flights = flights;
    this.counters = counters;
    this.timeoutMs = timeoutMs;
    /** Loads in flight in this thread, by key identity. */
    this.local = new Map();
  }

  async fetch(key, keyId, hash, loader, setOptions) {
    this.counters[STAT.fetches]++;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const inFlight = this.local.get(keyId);
    if (inFlight !== undefined) return inFlight;
    const loading = this.load(key, hash, loader, setOptions);
    this.local.set(keyId, loading);
    try {
      return await loading;
    } finally {
      this.local.delete(keyId);
    }
  }

  async load(key, hash, loader, setOptions) {
    const deadline = performance.now() + this.timeoutMs;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const { role, slot, generation } = this.flights.claim(hash);
      if (role === 'none') break;
      if (role === 'loader') return this.runLoader(key, loader, setOptions, slot);
      this.counters[STAT.fetchWaits]++;
      const outcome = await this.flights.wait(slot, generation, Math.max(0, deadline - performance.now()));
      const value = this.cache.get(key);
      if (value !== undefined) return value;
      if (outcome === 'timeout') {
        this.counters[STAT.fetchTimeouts]++;
        break;
      }
      if (outcome === 'released') {
        const error = this.flights.errorOf(slot, generation);
        if (error !== null) throw error;
      }
      // Released without a value we can see (evicted already, or another key
      // with the same hash), or abandoned by a dead loader: try again.
    }
    return this.runLoader(key, loader, setOptions, -1);
  }

  /** Runs the loader and stores its value; with `slot` >= 0, as the key's claimed loader. */
  async runLoader(key, loader, setOptions, slot) {
    this.counters[STAT.fetchLoads]++;
    let value;
    try {
      value = await loader(key);
      if (value === undefined) {
        throw new TypeError('the fetch() loader returned undefined; return a value to cache (null is one), or throw to fail');
      }
      this.cache.set(key, value, setOptions);
    } catch (error) {
      this.counters[STAT.fetchErrors]++;
      if (slot >= 0) this.flights.fail(slot, error);
      throw error;
    }
    if (slot >= 0) this.flights.complete(slot);
    return value;
  }
}

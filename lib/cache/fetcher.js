// Fetcher: single-flight loading across threads for SharedCache#fetch.
//
// On a miss, the first caller in the whole arena (any thread, any process
// with a mapped file) claims the key in the FlightTable and runs the loader;
// everyone else waits for it and then reads the value from the cache. Calls
// in the same thread share one promise and never touch the table twice.
// A loader's error rejects every waiter: in its own thread with the error
// itself, in other threads with an Error of the same name, message and code.
//
// An entry stored with a stale window (options.staleWhileRevalidate) is
// served stale for that long after its ttl: the caller that finds it stale
// starts one refresh in the background (one in the whole arena: the claim
// is the same) and every caller meanwhile gets the stale value at once.
//
// A loader gets fetchTimeoutMs: then its signal aborts, its claim is
// released with ERR_FETCH_TIMEOUT for every waiter (none of them starts a
// load of its own, so a slow backend is not hit by a stampede), and the
// value it may still return is dropped. A loader whose thread cannot even
// run its timer (a blocked event loop) is taken over by one waiter once
// it is overdue by another fetchTimeoutMs.
//
// close() of the instance ends its part at once: its pending fetch() calls
// reject with its ERR_CACHE_CLOSED, its loaders' signals abort, and every
// claim it holds is given back unfinished (OUTCOME_NONE), before the mapping
// can go, so that waiters in other threads and processes claim the key and
// load it themselves instead of waiting out fetchTimeoutMs.

import { ArenaCacheError, codes } from '../errors.js';
import { OUTCOME_NONE, OUTCOME_OK, OUTCOME_UNCACHED } from './flights.js';
import { STAT } from '../arena/common/thread-stats.js';
import { fetchStarted, publishFetch } from './diagnostics.js';

/** After this many rounds of waiting and missing, a caller loads by itself. */
const MAX_ROUNDS = 8;

/**
 * What the fetcher needs of its SharedCache (see SharedCache#fetch).
 * @typedef {{
 *   read(key: unknown): unknown,
 *   store(key: unknown, value: unknown, options: object): boolean,
 *   dropIfLapsed(key: unknown): void,
 *   closedSignal: AbortSignal,
 * }} FetchPort
 * closedSignal aborts at close(), with the ERR_CACHE_CLOSED pending calls reject with.
 */

function timeoutError(timeoutMs) {
  return new ArenaCacheError(
    codes.ERR_FETCH_TIMEOUT,
    `the fetch() loader ran longer than options.fetchTimeoutMs (${timeoutMs} ms); its signal was aborted and its result is dropped`,
  );
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts. */
function untilAborted(promise, signal) {
  if (signal === undefined) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

export class Fetcher {
  /**
   * @param {FetchPort} cache
   * @param {import('./flights.js').FlightTable} flights
   * @param {Float64Array} counters this thread's counter slot
   * @param {number} timeoutMs options.fetchTimeoutMs: how long a loader may run
   */
  constructor(cache, flights, counters, timeoutMs) {
    this.cache = cache;
    this.flights = flights;
    this.counters = counters;
    this.timeoutMs = timeoutMs;
    /** Loads in flight in this thread (refreshes included), by key identity: see track(). */
    this.local = new Map();
    /**
     * What close() ends at once: one callback per pending call and running
     * loader. A Set and one listener rather than a listener each: an
     * AbortSignal warns past 10 listeners and scans them on every add.
     * @type {Set<() => void>}
     */
    this.closers = new Set();
    cache.closedSignal.addEventListener(
      'abort',
      () => {
        for (const close of this.closers) close();
        this.closers.clear();
      },
      { once: true },
    );
  }

  /** `promise`, or a rejection with the instance's ERR_CACHE_CLOSED as soon as close() is called. */
  untilClosed(promise) {
    const closed = this.cache.closedSignal;
    if (closed.aborted) return Promise.reject(closed.reason);
    return new Promise((resolve, reject) => {
      const close = () => reject(closed.reason);
      this.closers.add(close);
      promise.then(
        (value) => {
          this.closers.delete(close);
          resolve(value);
        },
        (error) => {
          this.closers.delete(close);
          reject(error);
        },
      );
    });
  }

  /**
   * @param {object} o resolved fetch options (see SharedCache#fetch): setOptions,
   *   allowStale, forceRefresh, signal, context, allowStaleOnFetchRejection,
   *   noDeleteOnFetchRejection
   * @param {{ cached: unknown, stale: boolean, startedAt: number }} lookup
   *   what the call's lookup of the key found (cached undefined: a miss, or
   *   none made for forceRefresh) and whether that value is stale, and when
   *   the call began (diagnostics.fetchStarted())
   */
  async fetch(key, keyId, hash, loader, o, lookup) {
    const { cached, stale: cachedIsStale, startedAt } = lookup;
    this.counters[STAT.fetches]++;
    let stale;
    if (cached !== undefined) {
      if (!cachedIsStale) {
        publishFetch(key, 'hit', startedAt);
        return cached;
      }
      stale = cached;
      if (o.allowStale) {
        this.counters[STAT.fetchStale]++;
        this.refresh(key, keyId, hash, loader, o, stale);
        publishFetch(key, 'stale', startedAt);
        return stale;
      }
    }
    const flight = this.local.get(keyId) ?? this.track(keyId, (started) => this.load(key, hash, loader, o, stale, started));
    const closed = this.cache.closedSignal;
    let value;
    try {
      // close() rejects this call at once, whatever the load it joined is doing.
      value = await untilAborted(this.untilClosed(flight.promise), o.signal);
    } catch (error) {
      const aborted = o.signal?.aborted === true && error === o.signal.reason;
      // A closed instance answers nothing more, not even a stale value.
      if (stale !== undefined && o.allowStaleOnFetchRejection && !aborted && !(closed.aborted && error === closed.reason)) {
        this.counters[STAT.fetchStale]++;
        publishFetch(key, 'stale-on-error', startedAt, error);
        return stale;
      }
      publishFetch(key, aborted ? 'aborted' : error?.code === codes.ERR_FETCH_TIMEOUT ? 'timeout' : 'error', startedAt, error);
      throw error;
    }
    publishFetch(key, flight.waited ? 'wait' : 'load', startedAt);
    return value;
  }

  /**
   * Starts a load of this thread, `start(flight)`, and registers it under
   * `keyId` until it settles: { promise, waited } (waited: its value came
   * from another thread's loader).
   */
  track(keyId, start) {
    const flight = { promise: null, waited: false };
    flight.promise = start(flight);
    this.local.set(keyId, flight);
    const forget = () => {
      if (this.local.get(keyId) === flight) this.local.delete(keyId);
    };
    flight.promise.then(forget, forget);
    return flight;
  }

  /**
   * Starts refreshing a stale value unless a load of the key is under way
   * (in this thread, or claimed by another): nobody waits for it.
   */
  refresh(key, keyId, hash, loader, o, stale) {
    if (this.local.has(keyId)) return;
    const claim = this.flights.claim(hash);
    if (claim.role !== 'loader') return;
    const startedAt = fetchStarted();
    // Its failure is counted (fetchErrors) and rejects no caller.
    this.track(keyId, () => this.runLoader(key, loader, o, claim, stale)).promise.then(
      () => publishFetch(key, 'refresh', startedAt),
      (error) => publishFetch(key, 'refresh-error', startedAt, error),
    );
  }

  async load(key, hash, loader, o, stale, flight) {
    // A holding that passed its loader's own deadline by this much has a loader that cannot run its timer.
    const overdueMs = 2 * this.timeoutMs;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const claim = this.flights.claim(hash);
      if (claim.role === 'none') break;
      if (claim.role === 'loader') return this.runLoader(key, loader, o, claim, stale);
      const { slot, generation } = claim;
      this.counters[STAT.fetchWaits]++;
      const outcome = await this.waitForFlight(slot, generation, overdueMs + 50);
      const value = this.cache.read(key);
      if (value !== undefined) {
        flight.waited = true;
        return value;
      }
      if (outcome === 'timeout') {
        if (this.flights.abandonOverdue(slot, generation, overdueMs)) continue;
        throw timeoutError(this.timeoutMs);
      }
      if (outcome === 'released') {
        const error = this.flights.errorOf(slot, generation);
        if (error !== null) throw error;
        // Too large to cache: nothing to read, and another claim would load it again all the same.
        if (this.flights.outcomeOf(slot, generation) === OUTCOME_UNCACHED) break;
      }
      // Released without a value we can see (evicted already, or another key
      // with the same hash), or abandoned by a dead loader: try again.
    }
    return this.runLoader(key, loader, o, null, stale);
  }

  /**
   * flights.wait(slot, generation, ms), in steps of the table's poll
   * interval so that a close() of this instance ends the wait within one
   * step (rejecting with its reason): a wait left running would keep the
   * thread's event loop alive (see FlightTable#wait) for up to twice
   * fetchTimeoutMs after close().
   */
  async waitForFlight(slot, generation, ms) {
    const closed = this.cache.closedSignal;
    const deadline = performance.now() + ms;
    for (;;) {
      const outcome = await this.flights.wait(slot, generation, Math.min(deadline - performance.now(), this.flights.pollMs));
      if (closed.aborted) throw closed.reason;
      if (outcome !== 'timeout' || performance.now() >= deadline) return outcome;
    }
  }

  /**
   * Runs the loader (with `claim`, as the key's claimed loader) and stores
   * its value; a value too large to store is returned all the same.
   */
  async runLoader(key, loader, o, claim, stale) {
    const counters = this.counters;
    const closed = this.cache.closedSignal;
    const controller = new AbortController();
    /** @type {(reason: unknown) => void} */
    let rejectClosing = () => {};
    // Settles only by rejecting, at close().
    const closing = new Promise((resolve, reject) => {
      rejectClosing = reject;
    });
    const onClose = () => {
      // The claim goes first, while the arena is still mapped (close()
      // releases the mapping right after aborting closedSignal): waiters
      // elsewhere wake, find no value and no error, and load themselves.
      if (claim !== null) this.flights.complete(claim.slot, claim.holding, OUTCOME_NONE);
      controller.abort(closed.reason);
      rejectClosing(closed.reason);
    };
    if (closed.aborted) {
      onClose();
      return closing;
    }
    counters[STAT.fetchLoads]++;
    this.closers.add(onClose);
    let timer;
    const timedOut = new Promise((resolve, reject) => {
      timer = setTimeout(() => {
        const error = timeoutError(this.timeoutMs);
        controller.abort(error);
        reject(error);
      }, this.timeoutMs);
    });
    let value;
    let stored;
    try {
      value = await Promise.race([loader(key, { signal: controller.signal, staleValue: stale, context: o.context }), timedOut, closing]);
      if (value === undefined) {
        throw new TypeError('the fetch() loader returned undefined; return a value to cache (null is one), or throw to fail');
      }
      // A holding taken over while its loader's thread was blocked (see
      // load) now belongs to a newer load, whose value must not be overwritten.
      if (claim !== null && !this.flights.holds(claim.slot, claim.holding)) return value;
      stored = this.cache.store(key, value, o.setOptions);
    } catch (error) {
      // After close() nothing is a failure of the load (the instance is
      // closing it): not counted, and the claim was given back (onClose).
      if (closed.aborted) throw error;
      counters[error?.code === codes.ERR_FETCH_TIMEOUT && controller.signal.reason === error ? STAT.fetchTimeouts : STAT.fetchErrors]++;
      if (claim !== null) this.flights.fail(claim.slot, claim.holding, error);
      // As lru-cache: a stale value whose refresh failed goes, unless the caller keeps it.
      if (stale !== undefined && !o.allowStaleOnFetchRejection && !o.noDeleteOnFetchRejection) this.cache.dropIfLapsed(key);
      throw error;
    } finally {
      clearTimeout(timer);
      this.closers.delete(onClose);
    }
    if (!stored) counters[STAT.fetchUncached]++;
    if (claim !== null) this.flights.complete(claim.slot, claim.holding, stored ? OUTCOME_OK : OUTCOME_UNCACHED);
    return value;
  }
}

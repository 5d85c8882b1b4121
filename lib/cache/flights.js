// FlightTable: who is loading which key right now, shared by every thread.
//
// fetch() on a miss claims the key's slot here; whoever claims it runs the
// loader and everyone else who arrives meanwhile waits on the slot's
// generation word (Atomics.waitAsync) until the loader stores the value or
// fails. A slot is 16 int32 words:
//
//   0  generation: bumped every time the slot is released (waiters wait on it)
//   1  tag: the key's hash | 1 while a load is in flight, 0 when free
//   2  owner pid word (the pid), 3 owner id (its tid in memory, its claim's
//      owner id in a mapped file: to notice a loader whose thread died, see
//      liveness.js)
//   4  outcome of the holding that ended with generation word 5: OK /
//      ERROR / UNCACHED (the value was too large to store)
//   5  the generation that outcome belongs to
//   6  holding: bumped by every claim, so a loader can tell its holding
//      from a later one (see holds())
//   8  (float64) when the load started
//
// and a 512-byte area per slot carries a failed loader's error (as JSON) to
// waiters in other threads. Two keys with the same 32-bit hash share a slot:
// the second waits for the first, misses, and loads itself; nothing is lost.

import { ArenaCacheError } from '../errors.js';
import { FLIGHT_ERROR_BYTES, FLIGHT_SLOT_BYTES } from '../arena/common/layout.js';
import { OWNER_DEAD, ownerPidWord, ownerState } from '../arena/common/liveness.js';

const WORDS = FLIGHT_SLOT_BYTES / 4;
const F_GENERATION = 0;
const F_TAG = 1;
const F_OWNER_PID = 2;
const F_OWNER_TID = 3;
const F_OUTCOME = 4;
const F_OUTCOME_GENERATION = 5;
const F_HOLDING = 6;
const F64_STARTED = 4;
/**
 * No outcome: the loader gave its holding up unfinished (its cache instance
 * was closed). Waiters find no value and no error, and claim the key again.
 */
export const OUTCOME_NONE = 0;
export const OUTCOME_OK = 1;
export const OUTCOME_ERROR = 2;
export const OUTCOME_UNCACHED = 3;
/** Slots probed for a key before giving up (the caller then loads uncoordinated). */
const PROBES = 8;

export class FlightTable {
  /**
   * @param {SharedArrayBuffer} buffer
   * @param {object} header the arena header (flightsOffset, flightErrorsOffset, flightSlots)
   * @param {number} owner this thread's identity (kernel tid, or a negative id)
   * @param {number} [pollMs] how often waiters look again without a wake:
   *   a loader in another process (mapped file) cannot notify them
   * @param {import('../arena/common/liveness.js').ThreadLiveness | null} [liveness] for
   *   a mapped file: its threads' liveness locks, which tell whether a
   *   loader in another process is alive
   */
  constructor(buffer, header, owner, pollMs = 100, liveness = null) {
    this.liveness = liveness;
    /** Recorded next to `owner`: our pid (for messages; liveness goes by `owner`, see liveness.js). */
    this.pidWord = ownerPidWord();
    this.pollMs = pollMs;
    this.slots = header.flightSlots;
    this.words = new Int32Array(buffer, header.flightsOffset, this.slots * WORDS);
    this.f64 = new Float64Array(buffer, header.flightsOffset, (this.slots * FLIGHT_SLOT_BYTES) / 8);
    this.errors = Buffer.from(buffer, header.flightErrorsOffset, this.slots * FLIGHT_ERROR_BYTES);
    this.owner = owner;
  }

  /**
   * Claims the slot for `hash` or joins the load in flight.
   * @returns {{ role: 'loader' | 'waiter' | 'none', slot: number, generation: number, holding: number }}
   *   'none': every probed slot is busy with other keys. A loader passes
   *   `holding` to complete() or fail().
   */
  claim(hash) {
    const words = this.words;
    const tag = hash | 1;
    const home = (hash >>> 0) % this.slots;
    for (let probe = 0; probe < PROBES; probe++) {
      const slot = (home + probe) % this.slots;
      const base = slot * WORDS;
      for (;;) {
        const current = Atomics.load(words, base + F_TAG);
        if (current === tag) {
          const generation = Atomics.load(words, base + F_GENERATION);
          // Still the same holding once the generation is read.
          if (Atomics.load(words, base + F_TAG) !== tag) continue;
          return { role: 'waiter', slot, generation, holding: 0 };
        }
        if (current !== 0) break;
        if (Atomics.compareExchange(words, base + F_TAG, 0, tag) !== 0) continue;
        const holding = (Atomics.add(words, base + F_HOLDING, 1) + 1) | 0;
        words[base + F_OWNER_PID] = this.pidWord;
        words[base + F_OWNER_TID] = this.owner;
        this.f64[slot * (WORDS / 2) + F64_STARTED] = Date.now();
        return { role: 'loader', slot, generation: Atomics.load(words, base + F_GENERATION), holding };
      }
    }
    return { role: 'none', slot: -1, generation: 0, holding: 0 };
  }

  /**
   * The loader of `holding` (see claim) is done (OUTCOME_OK: it stored the
   * value; OUTCOME_UNCACHED: the value was too large to store; OUTCOME_NONE:
   * it gave up, see fetcher.js): free the slot and wake the waiters.
   */
  complete(slot, holding, outcome = OUTCOME_OK) {
    if (this.holds(slot, holding)) this.release(slot, outcome);
  }

  /**
   * Whether `holding` of `slot` still stands: a holding overdue for long
   * enough is taken from its loader (see abandonOverdue), whose later
   * release must not end the next holding.
   */
  holds(slot, holding) {
    const base = slot * WORDS;
    return Atomics.load(this.words, base + F_TAG) !== 0 && Atomics.load(this.words, base + F_HOLDING) === holding;
  }

  /** The loader failed: leave the error for waiters in other threads, free the slot, wake them. */
  fail(slot, holding, error) {
    if (!this.holds(slot, holding)) return;
    const base = slot * FLIGHT_ERROR_BYTES;
    const json = JSON.stringify({
      name: typeof error?.name === 'string' ? error.name : 'Error',
      message: typeof error?.message === 'string' ? error.message : String(error),
      code: typeof error?.code === 'string' || typeof error?.code === 'number' ? error.code : undefined,
    });
    // Truncated to the area; a cut in the middle of the JSON is caught when reading.
    const written = this.errors.write(json, base + 4, FLIGHT_ERROR_BYTES - 4, 'utf8');
    this.errors.writeUInt32LE(written, base);
    this.release(slot, OUTCOME_ERROR);
  }

  release(slot, outcome) {
    const words = this.words;
    const base = slot * WORDS;
    const next = (Atomics.load(words, base + F_GENERATION) + 1) | 0;
    words[base + F_OUTCOME] = outcome;
    words[base + F_OUTCOME_GENERATION] = next;
    words[base + F_OWNER_TID] = 0;
    words[base + F_OWNER_PID] = 0;
    // Free the slot first, then move the generation on: a waiter that wakes
    // and retries finds the slot free (or claimed by a new loader).
    Atomics.store(words, base + F_TAG, 0);
    Atomics.store(words, base + F_GENERATION, next);
    Atomics.notify(words, base + F_GENERATION);
  }

  /**
   * Waits up to `ms` for the holding of `slot` that started at `generation`
   * to end. Resolves 'released', 'timeout' or 'abandoned' (its loader's
   * thread or process exited: the slot was freed for someone else to load).
   * Polls every `pollMs`, since a loader in another process cannot notify.
   */
  async wait(slot, generation, ms, pollMs = this.pollMs) {
    const words = this.words;
    const index = slot * WORDS + F_GENERATION;
    const deadline = performance.now() + ms;
    for (;;) {
      if (Atomics.load(words, index) !== generation) return 'released';
      const left = deadline - performance.now();
      if (left <= 0) return 'timeout';
      const step = Math.min(left, pollMs);
      const result = Atomics.waitAsync(words, index, generation, step);
      if (result.async) {
        // A pending Atomics.waitAsync does not keep Node's event loop alive;
        // a timer does, so a thread that only waits does not exit meanwhile.
        const keepAlive = setTimeout(() => {}, step + 50);
        await result.value;
        clearTimeout(keepAlive);
      }
      if (Atomics.load(words, index) !== generation) return 'released';
      if (this.abandon(slot, generation)) return 'abandoned';
    }
  }

  /** Frees the slot if its loader's thread (or process) is gone. */
  abandon(slot, generation) {
    const words = this.words;
    const base = slot * WORDS;
    const pidWord = words[base + F_OWNER_PID];
    const tid = words[base + F_OWNER_TID];
    if (pidWord <= 0 || ownerState(pidWord, tid, this.liveness) !== OWNER_DEAD) return false;
    return this.free(slot, generation);
  }

  /**
   * Frees the slot if its holding began more than `overdueMs` ago: its
   * loader's thread is alive but neither finished nor gave up at its own
   * deadline (its event loop is blocked), so a waiter may load instead.
   */
  abandonOverdue(slot, generation, overdueMs) {
    if (!(Date.now() - this.f64[slot * (WORDS / 2) + F64_STARTED] > overdueMs)) return false;
    return this.free(slot, generation);
  }

  /** Ends the holding of `slot` that began at `generation`, if it is still held, and wakes its waiters. */
  free(slot, generation) {
    const words = this.words;
    const base = slot * WORDS;
    const tag = Atomics.load(words, base + F_TAG);
    if (tag === 0 || Atomics.load(words, base + F_GENERATION) !== generation) return false;
    if (Atomics.compareExchange(words, base + F_TAG, tag, 0) !== tag) return false;
    Atomics.store(words, base + F_GENERATION, (generation + 1) | 0);
    Atomics.notify(words, base + F_GENERATION);
    return true;
  }

  /** How the holding of `slot` that started at `generation` ended (OUTCOME_*), or 0 if unknown (abandoned, or the slot reused since). */
  outcomeOf(slot, generation) {
    const words = this.words;
    const base = slot * WORDS;
    const outcome = words[base + F_OUTCOME];
    return words[base + F_OUTCOME_GENERATION] === ((generation + 1) | 0) ? outcome : 0;
  }

  /**
   * The error a loader in another thread failed with, if the holding that
   * started at `generation` ended in failure (and the slot has not been
   * reused since); else null. An ArenaCacheError (a timeout) comes back as one.
   */
  errorOf(slot, generation) {
    const words = this.words;
    const base = slot * WORDS;
    if (this.outcomeOf(slot, generation) !== OUTCOME_ERROR) return null;
    const area = slot * FLIGHT_ERROR_BYTES;
    const length = Math.min(this.errors.readUInt32LE(area), FLIGHT_ERROR_BYTES - 4);
    let fields;
    try {
      // Decoded from a copy: UTF-8 decoding of memory another thread may be writing can crash (see Arena#readUtf8).
      fields = JSON.parse(Buffer.from(this.errors.subarray(area + 4, area + 4 + length)).toString('utf8'));
    } catch {
      fields = { name: 'Error', message: 'the loader failed in another thread (its error message was too long to pass on)' };
    }
    // Re-check: if the slot was reused while we read, the error may be another's.
    if (words[base + F_OUTCOME_GENERATION] !== ((generation + 1) | 0)) return null;
    if (fields.name === 'ArenaCacheError' && typeof fields.code === 'string') return new ArenaCacheError(fields.code, fields.message);
    /** @type {Error & { code?: string }} */
    const error = new Error(fields.message);
    error.name = fields.name;
    if (fields.code !== undefined) error.code = fields.code;
    return error;
  }
}

/**
 * Frees every flight slot and moves its generation on, so that waiters look
 * again: after a restart, the loaders that held them are gone.
 */
export function abandonAllFlights(buffer, header) {
  const words = new Int32Array(buffer, header.flightsOffset, header.flightSlots * WORDS);
  for (let slot = 0; slot < header.flightSlots; slot++) {
    const base = slot * WORDS;
    words[base + F_OWNER_PID] = 0;
    words[base + F_OWNER_TID] = 0;
    Atomics.store(words, base + F_TAG, 0);
    Atomics.add(words, base + F_GENERATION, 1);
  }
}

// Per-thread counters inside the arena, summed when read.
//
// A shared counter bumped with Atomics.add by every get would put one cache
// line at the centre of every thread's hot path. Instead each thread claims a
// 128-byte slot of its own and increments plain float64 words in it (exact to
// 2^53); stats() adds the slots up. Slots of threads that have exited are
// taken over by new threads (their counts are kept: counters only grow), so a
// pool that recycles workers does not run out.

import { currentThreadId, isThreadAlive } from '../native.js';
import { H32_ANON_THREAD_COUNTER, THREAD_SLOT_BYTES } from './layout.js';

/** Counter indexes inside a slot's Float64Array (index 0 holds the owner). */
export const STAT = Object.freeze({
  hits: 1,
  misses: 2,
  sets: 3,
  deletes: 4,
  /** Evicted because memory was short. */
  evictions: 5,
  /** Evicted because the entry bound (`max`) was reached. */
  evictionsMax: 6,
  expirations: 7,
  relocations: 8,
  promotions: 9,
  readRetries: 10,
  lockWaits: 11,
  lockRecoveries: 12,
  shardRepairs: 13,
  sweeps: 14,
  sweptEntries: 15,
  fetches: 16,
  fetchLoads: 17,
  fetchWaits: 18,
  fetchTimeouts: 19,
  fetchErrors: 20,
});
const COUNTER_NAMES = Object.keys(STAT);
const WORDS_PER_SLOT = THREAD_SLOT_BYTES / 4;
const DOUBLES_PER_SLOT = THREAD_SLOT_BYTES / 8;

// Slots this thread already holds, by arena id: attaching twice in one thread
// shares the slot (all increments still come from this one thread). The
// buffer may be another view of the same memory (a structured clone) or a
// new mapping of the same file, so a known slot is reused only while the
// arena itself still names this thread as its owner.
const heldSlots = new Map();

function ownerIsGone(owners, slot) {
  const tid = Atomics.load(owners, slot * WORDS_PER_SLOT);
  const pid = owners[slot * WORDS_PER_SLOT + 1];
  return tid > 0 && pid > 0 && isThreadAlive(pid, tid) === false ? tid : 0;
}

/**
 * Claims this thread's counter slot in the arena.
 * @returns {{ counters: Float64Array, slot: number, shared: boolean, tid: number, owner: number }}
 *   `shared` is true when every slot belongs to a live thread and this thread
 *   has to share the last one (its counts may then lose a few increments).
 */
export function claimThreadSlot(buffer, layout) {
  const owners = new Int32Array(buffer, layout.statsOffset, (layout.threadSlots * THREAD_SLOT_BYTES) / 4);
  const known = heldSlots.get(layout.arenaId);
  if (known !== undefined) {
    if (known.counters.buffer === buffer) return known;
    const base = known.slot * WORDS_PER_SLOT;
    if (known.shared || (Atomics.load(owners, base) === known.owner && owners[base + 1] === process.pid)) {
      const counters = new Float64Array(buffer, layout.statsOffset + known.slot * THREAD_SLOT_BYTES, DOUBLES_PER_SLOT);
      const claim = { ...known, counters };
      heldSlots.set(layout.arenaId, claim);
      return claim;
    }
  }
  const header = new Int32Array(buffer, 0, H32_ANON_THREAD_COUNTER + 1);
  const tid = currentThreadId();
  // Without the addon there is no kernel tid; a unique negative id still marks
  // the slot as taken (it just can never be recognised as dead).
  const owner = tid > 0 ? tid : -1 - Atomics.add(header, H32_ANON_THREAD_COUNTER, 1);
  let slot = -1;
  for (let i = 0; i < layout.threadSlots && slot < 0; i++) {
    if (Atomics.compareExchange(owners, i * WORDS_PER_SLOT, 0, owner) === 0) slot = i;
  }
  for (let i = 0; i < layout.threadSlots && slot < 0; i++) {
    const dead = ownerIsGone(owners, i);
    if (dead !== 0 && Atomics.compareExchange(owners, i * WORDS_PER_SLOT, dead, owner) === dead) slot = i;
  }
  const shared = slot < 0;
  if (shared) slot = layout.threadSlots - 1;
  else owners[slot * WORDS_PER_SLOT + 1] = process.pid;
  const counters = new Float64Array(buffer, layout.statsOffset + slot * THREAD_SLOT_BYTES, DOUBLES_PER_SLOT);
  // `owner` identifies this thread in the arena: its kernel tid, or a unique
  // negative number without the addon.
  const claim = { counters, slot, shared, tid: tid > 0 ? tid : 0, owner };
  heldSlots.set(layout.arenaId, claim);
  return claim;
}

/** Sums every slot: the arena-wide counters. */
export function sumThreadSlots(buffer, layout) {
  const all = new Float64Array(buffer, layout.statsOffset, layout.threadSlots * DOUBLES_PER_SLOT);
  const owners = new Int32Array(buffer, layout.statsOffset, layout.threadSlots * WORDS_PER_SLOT);
  const totals = {};
  for (const name of COUNTER_NAMES) totals[name] = 0;
  let threads = 0;
  for (let slot = 0; slot < layout.threadSlots; slot++) {
    if (owners[slot * WORDS_PER_SLOT] !== 0) threads++;
    const base = slot * DOUBLES_PER_SLOT;
    for (const name of COUNTER_NAMES) totals[name] += all[base + STAT[name]];
  }
  totals.threads = threads;
  return totals;
}

/**
 * Frees every counter slot but `keep` (their counts stay): after a restart,
 * the threads that held them are gone.
 */
export function releaseThreadSlots(buffer, layout, keep) {
  const owners = new Int32Array(buffer, layout.statsOffset, layout.threadSlots * WORDS_PER_SLOT);
  for (let slot = 0; slot < layout.threadSlots; slot++) {
    if (slot === keep) continue;
    owners[slot * WORDS_PER_SLOT + 1] = 0;
    Atomics.store(owners, slot * WORDS_PER_SLOT, 0);
  }
}

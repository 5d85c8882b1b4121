// Per-thread counters inside the arena, summed when read.
//
// A shared counter bumped with Atomics.add by every get would put one cache
// line at the centre of every thread's hot path. Instead each thread claims a
// 128-byte slot of its own and increments plain float64 words in it (exact to
// 2^53); stats() adds the slots up. Slots of threads that have exited are
// taken over by new threads (their counts are kept: counters only grow), so a
// pool that recycles workers does not run out.

import { currentThreadId, isThreadAlive } from '../../native/thread-identity.js';
import { H32_ANON_THREAD_COUNTER, THREAD_SLOT_BYTES } from './layout.js';
import { claimOwnerId, OWNER_DEAD, ownerState } from './liveness.js';

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
  /** Damaged slots found and reset by sumThreadSlots (counted by the thread that reset them). */
  threadSlotRepairs: 21,
  /** Gets answered by an instance's near cache (counted apart from hits; stats() adds them in). */
  nearHits: 22,
  /** Entries lost to lock recoveries (a rebuild drops only the write in flight) and shard resets after damage. */
  lostEntries: 23,
  /** Records dropped because they failed their checksum (a damaged file: pages from before a machine crash, flipped bytes); also in lostEntries. */
  checksumFailures: 24,
  /** fetch() calls answered with a stale value (options.staleWhileRevalidate), or a stale value after a failed load (allowStaleOnFetchRejection). */
  fetchStale: 25,
  /** Values a fetch() loader returned that were too large to store: returned to the caller, not cached. */
  fetchUncached: 26,
  /**
   * Calls that gave up waiting for a lock a live thread held past
   * lockWaitMs (see shard-lock.js): gets answered as misses (counted as
   * misses too), writes refused with ERR_ARENA_BUSY, fetch() values returned uncached.
   */
  lockTimeouts: 27,
  /** incr() calls that changed or created a number (see entries/atomic-ops.js). */
  increments: 28,
  /** Conditional writes that wrote: add, replace, compareAndSet, touch, and update's store or delete (also counted as sets or deletes). */
  conditionalWrites: 29,
  /** Conditional writes whose condition did not hold (the key present for add, absent for replace or touch, another version for compareAndSet), and update() retries. */
  conditionalMisses: 30,
});
const COUNTER_NAMES = Object.keys(STAT);
const WORDS_PER_SLOT = THREAD_SLOT_BYTES / 4;
const DOUBLES_PER_SLOT = THREAD_SLOT_BYTES / 8;
/** The first word of a slot that no counter uses: it stays 0. */
const FIRST_UNUSED = Math.max(...Object.values(STAT)) + 1;
/** PID_MAX_LIMIT of 64-bit Linux: no pid or tid is larger. */
const PID_LIMIT = 2 ** 22;

// Slots this thread already holds, by arena id: attaching twice in one thread
// shares the slot (all increments still come from this one thread). The
// buffer may be another view of the same memory (a structured clone) or a
// new mapping of the same file, so a known slot is reused only while the
// arena itself still names this thread as its owner, and (in a mapped file)
// while this thread can hold its claim again: after its last instance
// closed, another thread may have taken either.
const heldSlots = new Map();

/**
 * The owner word of slot `slot` if its owner is known to be dead, else 0.
 * With `liveness` (a mapped file), the owner word is a claim's owner id
 * (see liveness.js claimOwnerId) and the claim's liveness lock says, in any
 * PID namespace (a positive word is a tid an earlier version wrote: not
 * known to be dead); otherwise the kernel is asked about the owner's tid,
 * which is only meaningful in this process's namespace (an in-memory
 * arena's threads are all in this process).
 * @param {Int32Array} owners
 * @param {number} slot
 * @param {import('./liveness.js').ThreadLiveness | null} liveness
 * @returns {number}
 */
function ownerIsGone(owners, slot, liveness) {
  const word = Atomics.load(owners, slot * WORDS_PER_SLOT);
  const pid = owners[slot * WORDS_PER_SLOT + 1];
  if (liveness !== null) return word !== 0 && ownerState(pid, word, liveness) === OWNER_DEAD ? word : 0;
  return word > 0 && pid > 0 && isThreadAlive(pid, word) === false ? word : 0;
}

/**
 * Claims this thread's counter slot in the arena; with `liveness` (a
 * mapped file, see liveness.js), first a claim of the file, whose liveness
 * lock this thread holds until the instance closes.
 * @param {import('./liveness.js').ThreadLiveness | null} [liveness]
 * @returns {{ counters: Float64Array, slot: number, shared: boolean, tid: number, owner: number }}
 *   `owner` is the id this thread's holdings are recorded under (see
 *   liveness.js ownerState): its claim's owner id in a mapped file, else
 *   its kernel tid (or a negative id without the addon). `shared` is true
 *   when every slot belongs to a live thread and this thread has to share
 *   the last one for its counts (which may then lose a few increments; its
 *   identity is its claim's all the same).
 */
export function claimThreadSlot(buffer, layout, liveness = null) {
  const owners = new Int32Array(buffer, layout.statsOffset, (layout.threadSlots * THREAD_SLOT_BYTES) / 4);
  const known = heldSlots.get(layout.arenaId);
  if (known !== undefined) {
    const base = known.slot * WORDS_PER_SLOT;
    const stillNamed = known.shared || Atomics.load(owners, base) === known.owner;
    // One more hold of the claim's lock (each instance gives one back).
    if (stillNamed && (liveness === null || liveness.hold(-known.owner))) {
      if (known.counters.buffer === buffer) return known;
      // Another mapping of the same file, or another view of the same memory.
      const counters = new Float64Array(buffer, layout.statsOffset + known.slot * THREAD_SLOT_BYTES, DOUBLES_PER_SLOT);
      const claim = { ...known, counters };
      heldSlots.set(layout.arenaId, claim);
      return claim;
    }
    heldSlots.delete(layout.arenaId);
  }
  const header = new Int32Array(buffer, 0, H32_ANON_THREAD_COUNTER + 1);
  const tid = currentThreadId();
  // In memory every thread is this process's and its kernel tid names it;
  // without the addon there is no tid, and a unique negative id still marks
  // the slot as taken (it just can never be recognised as dead). In a
  // mapped file, the claim (see liveness.js).
  let owner;
  if (liveness !== null) owner = claimOwnerId(liveness.claimNew());
  else owner = tid > 0 ? tid : -1 - (Atomics.add(header, H32_ANON_THREAD_COUNTER, 1) & 0x3fffffff);
  let slot = -1;
  for (let i = 0; i < layout.threadSlots && slot < 0; i++) {
    if (Atomics.compareExchange(owners, i * WORDS_PER_SLOT, 0, owner) === 0) slot = i;
  }
  for (let i = 0; i < layout.threadSlots && slot < 0; i++) {
    const dead = ownerIsGone(owners, i, liveness);
    if (dead !== 0 && Atomics.compareExchange(owners, i * WORDS_PER_SLOT, dead, owner) === dead) slot = i;
  }
  const shared = slot < 0;
  if (shared) slot = layout.threadSlots - 1;
  else owners[slot * WORDS_PER_SLOT + 1] = process.pid;
  const counters = new Float64Array(buffer, layout.statsOffset + slot * THREAD_SLOT_BYTES, DOUBLES_PER_SLOT);
  const claim = { counters, slot, shared, tid: tid > 0 ? tid : 0, owner };
  heldSlots.set(layout.arenaId, claim);
  return claim;
}

// A damaged slot: its bytes were overwritten by something other than
// counting (a damaged file, a stray write through the buffer), which shows
// as a value counting never writes. Counting only ever stores whole numbers
// from 0 to 2^53 in the counter words, a possible tid (or a negative id
// without the addon) and pid in the owner words, and nothing in the words
// past the counters. Each word is written whole (an aligned 8- or 4-byte
// store), so a slot in use never looks damaged, whatever the timing. Bytes
// that happen to look like counts cannot be told apart: they are summed.

/** What makes slot `slot` damaged, as { word, reason }, or null when it holds what counting writes. */
function slotDamage(all, owners, slot) {
  const tid = Atomics.load(owners, slot * WORDS_PER_SLOT);
  const pid = owners[slot * WORDS_PER_SLOT + 1];
  if (tid > PID_LIMIT || pid < 0 || pid > PID_LIMIT) return { word: 0, reason: `its owner, thread ${tid} of process ${pid}, cannot exist` };
  const base = slot * DOUBLES_PER_SLOT;
  for (const name of COUNTER_NAMES) {
    const value = all[base + STAT[name]];
    if (!(Number.isSafeInteger(value) && value >= 0)) return { word: STAT[name], reason: `${name} is ${value}, not a count` };
  }
  for (let word = FIRST_UNUSED; word < DOUBLES_PER_SLOT; word++) {
    if (all[base + word] !== 0 || Object.is(all[base + word], -0)) return { word, reason: `word ${word}, which no counter uses, is ${all[base + word]}` };
  }
  return null;
}

function slotViews(buffer, layout) {
  return {
    all: new Float64Array(buffer, layout.statsOffset, layout.threadSlots * DOUBLES_PER_SLOT),
    owners: new Int32Array(buffer, layout.statsOffset, layout.threadSlots * WORDS_PER_SLOT),
  };
}

/**
 * Resets damaged slot `slot` (its counts are lost: they cannot be told from
 * the damage); an impossible owner is cleared too, so that a new thread can
 * claim the slot. Several threads may find the same damage at once: the one
 * whose compare-and-exchange of the damaged word wins resets the slot, and
 * says so by returning true.
 */
function resetSlot(buffer, layout, all, owners, slot, damage) {
  const words = new BigInt64Array(buffer, layout.statsOffset + slot * THREAD_SLOT_BYTES, DOUBLES_PER_SLOT);
  const seen = Atomics.load(words, damage.word);
  // Another thread may have reset it since: the word must still hold the damage.
  const again = slotDamage(all, owners, slot);
  if (again === null || again.word !== damage.word) return false;
  if (Atomics.compareExchange(words, damage.word, seen, 0n) !== seen) return false;
  for (let word = 1; word < DOUBLES_PER_SLOT; word++) all[slot * DOUBLES_PER_SLOT + word] = 0;
  return true;
}

/**
 * Sums every slot: the arena-wide counters. A damaged slot (see
 * slotDamage) is left out and reset, and the reset counted in `counters`
 * (the calling thread's slot); its owner, if alive, counts on from zero.
 */
export function sumThreadSlots(buffer, layout, counters) {
  let repairs = 0;
  const totals = sumSlots(buffer, layout, (all, owners, slot, damage) => {
    if (resetSlot(buffer, layout, all, owners, slot, damage)) repairs++;
  });
  // Counted after the sum, which has read the calling thread's slot (or skipped it, if it was the damaged one).
  counters[STAT.threadSlotRepairs] += repairs;
  totals.threadSlotRepairs += repairs;
  return totals;
}

/**
 * sumThreadSlots() without writing anything (for an inspection: see
 * entries/inspector.js): damaged slots are left out, not reset, and a slot
 * counts as a thread only when `isAlive(pidWord, ownerWord)` says so.
 */
export function readThreadSlots(buffer, layout, isAlive) {
  return sumSlots(buffer, layout, () => {}, isAlive);
}

/**
 * The counters of every sound slot summed, and `threads`: the slots that
 * have an owner (with `isAlive`, one it calls alive). `onDamage(all,
 * owners, slot, damage)` is called for each damaged slot, which is left out.
 */
function sumSlots(buffer, layout, onDamage, isAlive = null) {
  const { all, owners } = slotViews(buffer, layout);
  const totals = {};
  for (const name of COUNTER_NAMES) totals[name] = 0;
  let threads = 0;
  const owned = (slot) => {
    const owner = Atomics.load(owners, slot * WORDS_PER_SLOT);
    return owner !== 0 && (isAlive === null || isAlive(owners[slot * WORDS_PER_SLOT + 1], owner));
  };
  for (let slot = 0; slot < layout.threadSlots; slot++) {
    const damage = slotDamage(all, owners, slot);
    if (damage !== null) {
      onDamage(all, owners, slot, damage);
      // A possible owner keeps its slot, and counts as a thread.
      if (damage.word !== 0 && owned(slot)) threads++;
      continue;
    }
    if (owned(slot)) threads++;
    const base = slot * DOUBLES_PER_SLOT;
    for (const name of COUNTER_NAMES) totals[name] += all[base + STAT[name]];
  }
  totals.threads = threads;
  return totals;
}

/** The damaged slots, for verify(): one line each, without changing anything. */
export function threadSlotProblems(buffer, layout) {
  const { all, owners } = slotViews(buffer, layout);
  const problems = [];
  for (let slot = 0; slot < layout.threadSlots; slot++) {
    const damage = slotDamage(all, owners, slot);
    if (damage !== null) problems.push(`thread counter slot ${slot} is damaged (${damage.reason}); stats() leaves its counts out and resets it`);
  }
  return problems;
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

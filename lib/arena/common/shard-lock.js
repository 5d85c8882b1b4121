// ShardLock: one int32 per shard that is both the writers' lock and the
// readers' sequence number (a seqlock).
//
//   even  unlocked; readers may read optimistically
//   odd   a writer is inside; readers wait, and retry if it changed meanwhile
//
// Writers take the lock with one compareExchange and release it with another
// (so a holder whose lock was taken away notices). Every release moves the
// sequence forward, never back: a given odd value therefore names exactly one
// holding of the lock, which is what lets a waiter measure how long that one
// holding has lasted. Readers pay two loads and no store, so reads never
// contend with each other.
//
// A holder can die inside its critical section: a worker terminated by
// worker.terminate(), or (with a mapped file) a process killed by SIGKILL.
// The holder therefore records who it is and which holding that identity
// belongs to (the odd sequence value). A waiter that has spun a while asks
// whether that thread still exists: in memory, the kernel, by tid (every
// thread is this process's); in a mapped file, only the liveness lock of
// the claim it recorded, for this process's threads too (liveness.js: pids
// repeat across PID namespaces, so an equal pid proves nothing). A dead holder's lock is
// taken over at once and the shard repaired (shard.recoverFromDeadHolder():
// the cache drops the shard's entries, the block store only the block being
// written), so entries are lost, never corrupted.
//
// A holder known to be alive is never taken over, however long it holds the
// lock: a stalled one (SIGSTOP, a debugger, a frozen cgroup, swap) would
// resume writing into the shard after the takeover, unseen by the seqlock,
// and readers could copy those bytes as another key's value. Its waiters
// wait, but not without bound (`waitMs`, the cache's lockWaitMs): a stopped
// process must not freeze every other process's event loop. Past the bound
// acquire() throws ERR_ARENA_BUSY and waitWhileHeld() returns false (the
// cache answers a get as a miss, and refuses a write); the holding is
// remembered, so later calls give up at once until it ends instead of
// blocking for the bound each time. The lease (lockLeaseMs) ends only
// holdings whose holder cannot be named: without the addon, a holder
// killed between taking the lock and recording itself, or one recorded by
// an earlier version of arenacache.

import { ArenaCacheError, codes } from '../../errors.js';
import { publishRepair } from './repair-channel.js';
import { OWNER_ALIVE, OWNER_DEAD, OWNER_UNKNOWN, ownerPidWord, ownerState, pidOf } from './liveness.js';
import { M_COUNT, M_OWNER_PID, M_OWNER_SEQ, M_OWNER_TID, M_SEQ, M_WAITERS } from './shard-meta.js';
import { STAT } from './thread-stats.js';
import { memoryWaiting } from './waiting.js';


// An optimistic read must keep its data reads between its two sequence reads.
// x86 never reorders loads with loads, so a plain first read and an atomic
// second read suffice. Weakly ordered CPUs (arm64) need an atomic first read
// and, before the second read, an atomic read-modify-write (a release) so that
// the data reads complete first.
export const WEAK_MEMORY_ORDER = process.arch !== 'x64' && process.arch !== 'ia32';

/** A reader's first look at the sequence (`meta` is the shard's meta words). */
export function sequenceBefore(meta) {
  return WEAK_MEMORY_ORDER ? Atomics.load(meta, M_SEQ) : meta[M_SEQ];
}

/** A reader's second look, after its data reads; `fence` is a private Int32Array of the reader's. */
export function sequenceAfter(meta, fence) {
  if (WEAK_MEMORY_ORDER) Atomics.add(fence, 0, 0);
  return Atomics.load(meta, M_SEQ);
}

/**
 * The owner word of a shard whose check a sole opener left for later (see
 * leaveUnchecked): no pid has these bits (pids are below 2^22), so no
 * thread is ever named by it.
 */
export const UNCHECKED_OWNER_WORD = 0x7e000000;

/**
 * For a sole opener that cannot trust a file's pages (see
 * entries/restart.js): leaves the unlocked shard of `meta` locked, its
 * holder marked as "to be checked", so that the first thread that needs it
 * (a reader or writer waiting for its lock, the sweeper, verify()) checks
 * it first (ShardLock#checkUnchecked) and no record of it is read before.
 * Returns false for a shard already locked (left to its rebuild).
 */
export function leaveUnchecked(meta) {
  const seq = meta[M_SEQ];
  if ((seq & 1) !== 0) return false;
  const held = (seq + 1) | 0;
  meta[M_SEQ] = held;
  recordOwner(meta, held, UNCHECKED_OWNER_WORD, 0);
  return true;
}

/**
 * Records `ownerWord` and `ownerId` as the owner of holding `held` of the
 * lock in `meta`: identity first, then which holding it is for.
 */
function recordOwner(meta, held, ownerWord, ownerId) {
  meta[M_OWNER_PID] = ownerWord;
  meta[M_OWNER_TID] = ownerId;
  // Last, and on weakly ordered CPUs as a release: a waiter that reads
  // this holding's sequence here must not read the identity of the last.
  if (WEAK_MEMORY_ORDER) Atomics.store(meta, M_OWNER_SEQ, held);
  else meta[M_OWNER_SEQ] = held;
}

/** Whether holding `seq` of the lock in `meta` is a shard left to be checked (see leaveUnchecked). */
export function isUnchecked(meta, seq) {
  return Atomics.load(meta, M_OWNER_SEQ) === seq && meta[M_OWNER_PID] === UNCHECKED_OWNER_WORD && Atomics.load(meta, M_SEQ) === seq;
}

/**
 * How many of `shards` are left to be checked (see leaveUnchecked).
 * @param {Iterable<{ meta: Int32Array }>} shards
 */
export function countUnchecked(shards) {
  let count = 0;
  for (const shard of shards) {
    const seq = Atomics.load(shard.meta, M_SEQ);
    if ((seq & 1) !== 0 && isUnchecked(shard.meta, seq)) count++;
  }
  return count;
}

/** Busy polls before sleeping: a critical section lasts microseconds. */
const SPIN_POLLS = 256;
/**
 * Longest single sleep. A release wakes sleepers at once (Atomics.notify,
 * or the shared futex for a mapped file); the bound matters only when no
 * wake comes, as from a dead holder.
 */
const SLEEP_MAX_MS = 2;

export class ShardLock {
  /**
   * @param {{ leaseMs: number, waitMs?: number, counters: Float64Array, ownerId: number, waiting?: typeof memoryWaiting,
   *   truncation?: import('./truncation.js').TruncationWatch, liveness?: import('./liveness.js').ThreadLiveness }} options
   *   `waitMs` is the longest one call waits for a holder that is alive
   *   (or not yet past the lease) before it gives up (Infinity: no bound);
   *   `ownerId` is what this thread's holdings are recorded under: its
   *   kernel tid (0 when unknown) in memory, its claim's owner id in a
   *   mapped file (see liveness.js ownerState); `waiting` how to sleep and
   *   wake (see waiting.js: across processes for a mapped file);
   *   `truncation` and `liveness` for a mapped file (see mapped-options.js;
   *   `liveness` holds this thread's claim).
   */
  constructor({ leaseMs, waitMs = Infinity, counters, ownerId, waiting = memoryWaiting, truncation = null, liveness = null }) {
    this.leaseMs = leaseMs;
    this.waitMs = waitMs;
    this.waiting = waiting;
    /** For a mapped file: its TruncationWatch (see truncation.js), checked before every lock. */
    this.truncation = truncation;
    this.liveness = liveness;
    this.counters = counters;
    this.ownerId = ownerId;
    /** What own() records as M_OWNER_PID: the pid (for messages; liveness goes by ownerId). */
    this.ownerWord = ownerPidWord();
    /**
     * Holdings this thread has waited for past a spin, by lock (a shard's,
     * a stripe's): { seq, since, seen, gaveUp, warned }. `since` is when one
     * was first seen held, so the lease and the bound count a holding's
     * whole age across calls; `seen` when it was last seen held (an entry
     * not looked at for longer than the bound is forgotten, unless the same
     * live holder, ownerWord and ownerId, still holds: the sequence may have
     * come round to the same value for another holding); `gaveUp` makes
     * later calls give up at once.
     * @type {Map<object, { seq: number, since: number, seen: number, gaveUp: boolean, warned: boolean, ownerWord: number, ownerId: number }>}
     */
    this.stalls = new Map();
  }

  /**
   * Takes the shard's lock; returns the held (odd) sequence value. Throws
   * ERR_ARENA_BUSY when a live holder keeps it past `waitMs`.
   */
  acquire(shard) {
    const truncation = this.truncation;
    if (truncation !== null && truncation.faults[0] !== truncation.seen) truncation.check();
    const meta = shard.meta;
    const seq = meta[M_SEQ];
    const held = (seq + 1) | 0;
    if ((seq & 1) === 0 && Atomics.compareExchange(meta, M_SEQ, seq, held) === seq) {
      // own(), written out: every set takes this path, and its callers run
      // out of V8's inlining budget before own() (a call per set).
      meta[M_OWNER_PID] = this.ownerWord;
      meta[M_OWNER_TID] = this.ownerId;
      if (WEAK_MEMORY_ORDER) Atomics.store(meta, M_OWNER_SEQ, held);
      else meta[M_OWNER_SEQ] = held;
      return held;
    }
    return this.acquireContended(shard);
  }

  /** acquire() without the bound: waits as long as a live holder holds. */
  acquireRepairing(shard) {
    const meta = shard.meta;
    const seq = meta[M_SEQ];
    if ((seq & 1) === 0 && Atomics.compareExchange(meta, M_SEQ, seq, (seq + 1) | 0) === seq) {
      return this.own(meta, (seq + 1) | 0);
    }
    return this.acquireContended(shard, false);
  }

  /**
   * Takes the lock past a holder, waiting for it; throws ERR_ARENA_BUSY when
   * a live holder keeps it past `waitMs` (`bounded` false: waits on, for
   * the one repair that must not be skipped, see lockWasTaken).
   * @param {import('../entries/shard.js').Shard} shard
   */
  acquireContended(shard, bounded = true) {
    const meta = shard.meta;
    this.counters[STAT.lockWaits]++;
    for (;;) {
      const seq = Atomics.load(meta, M_SEQ);
      if ((seq & 1) === 0) {
        if (Atomics.compareExchange(meta, M_SEQ, seq, (seq + 1) | 0) === seq) return this.own(meta, (seq + 1) | 0);
      } else if (!this.waitWhileHeld(shard, seq, bounded) && bounded) {
        throw this.busyError(shard, seq);
      }
    }
  }

  /** Records this thread as the owner of holding `held` (identity first, then whose it is; acquire() writes the same). */
  own(meta, held) {
    recordOwner(meta, held, this.ownerWord, this.ownerId);
    return held;
  }

  /**
   * The ERR_ARENA_BUSY of a call that gave up waiting for holding `seq` of
   * `shard`; `outcome` says what the call did not do.
   */
  busyError(shard, seq, outcome = 'nothing was written') {
    const stall = this.stalls.get(shard);
    const heldMs = stall === undefined ? 0 : Math.round(performance.now() - stall.since);
    const where = typeof shard.index === 'number' ? `shard ${shard.index}'s lock` : 'a lock';
    return new ArenaCacheError(
      codes.ERR_ARENA_BUSY,
      `${where} has been held for ${heldMs} ms by ${this.describeHolder(shard, seq)}, past lockWaitMs (${this.waitMs} ms): ` +
        `${outcome} (a live holder is never taken over: it may be stopped, as by SIGSTOP or a debugger, or stalled; ` +
        'once it goes on, the lock is free again)',
    );
  }

  /** Who holds holding `seq`, as far as it can be said (for messages). */
  describeHolder(shard, seq) {
    const meta = shard.meta;
    const pid = pidOf(meta[M_OWNER_PID]);
    if (Atomics.load(meta, M_OWNER_SEQ) !== seq || pid <= 0) return 'a thread that has not said who it is';
    return this.liveness !== null
      ? `a live thread of process ${pid} (as numbered in its own PID namespace)`
      : `a live thread of process ${pid}`;
  }

  /**
   * Releases the lock. If it was taken over meanwhile (we were presumed dead
   * or too slow), whatever we wrote after that may have damaged the shard:
   * unless the holding only read, reset the shard once more under a proper lock.
   * @param {boolean} [changed=true] false when the holding only read
   */
  release(shard, held, changed = true) {
    const meta = shard.meta;
    if (Atomics.compareExchange(meta, M_SEQ, held, (held + 1) | 0) !== held) {
      if (changed) this.lockWasTaken(shard);
      return;
    }
    if (meta[M_WAITERS] !== 0) this.waiting.notify(meta, M_SEQ);
  }

  /**
   * Waits until the shard's sequence is no longer the odd value `seq`:
   * released, or taken over from a dead or expired holder (true). False
   * when a holder known to be alive keeps it past `waitMs` in this call
   * (`bounded`), or kept it past the bound in an earlier call: then at
   * once, after one look at whether it died. A holder that cannot be named
   * is waited for until the lease ends its holding (lockLeaseMs).
   */
  waitWhileHeld(shard, seq, bounded = true) {
    const meta = shard.meta;
    for (let polls = 0; polls < SPIN_POLLS; polls++) {
      if (Atomics.load(meta, M_SEQ) !== seq) return true;
    }
    return this.waitLong(shard, seq, bounded);
  }

  /** The sleeping part of waitWhileHeld(). */
  waitLong(shard, seq, bounded) {
    const meta = shard.meta;
    if (isUnchecked(meta, seq)) {
      this.checkUnchecked(shard, seq);
      return true;
    }
    const start = performance.now();
    let stall = this.stalls.get(shard);
    if (stall === undefined || stall.seq !== seq || !(start - stall.seen <= Math.max(Math.min(this.waitMs, this.leaseMs), SLEEP_MAX_MS) || this.sameHolder(shard, stall))) {
      stall = { seq, since: start, seen: start, gaveUp: false, warned: false, ownerWord: 0, ownerId: 0 };
      this.stalls.set(shard, stall);
    }
    // No bound (waitMs Infinity, or the repair of lockWasTaken): wait on.
    bounded = bounded && Number.isFinite(this.waitMs);
    // Sleep instead of spinning: with more threads than cores the holder may
    // be waiting for our core. The waiter count tells releasers to notify;
    // the wait returns at once if the sequence already moved on. (A
    // thread terminated while asleep leaves the count one too high: releases
    // then notify needlessly, which costs time, never correctness.)
    let sleepMs = 0.05;
    // A holding this thread gave up on before is looked at once at first, without a sleep.
    let lookFirst = stall.gaveUp && bounded;
    for (;;) {
      if (lookFirst) {
        lookFirst = false;
      } else {
        Atomics.add(meta, M_WAITERS, 1);
        this.waiting.wait(meta, M_SEQ, seq, sleepMs);
        Atomics.sub(meta, M_WAITERS, 1);
      }
      if (Atomics.load(meta, M_SEQ) !== seq) {
        this.stalls.delete(shard);
        return true;
      }
      if (isUnchecked(meta, seq)) {
        this.stalls.delete(shard);
        this.checkUnchecked(shard, seq);
        return true;
      }
      const state = this.holderState(shard, seq);
      const now = performance.now();
      stall.seen = now;
      if (state === OWNER_ALIVE && stall.ownerId === 0) {
        stall.ownerWord = shard.meta[M_OWNER_PID];
        stall.ownerId = shard.meta[M_OWNER_TID];
      }
      const heldMs = now - stall.since;
      if (state === OWNER_DEAD || (state === OWNER_UNKNOWN && heldMs >= this.leaseMs)) {
        this.stalls.delete(shard);
        this.takeOver(shard, seq);
        return true;
      }
      // Only a holder known to be alive is given up on: one that cannot be
      // named may be dead, and is waited for until the lease ends its holding.
      const givingUp = bounded && state === OWNER_ALIVE && (stall.gaveUp || now - start >= this.waitMs);
      // Emitted while the holder still holds: the warning is delivered as
      // soon as this call returns (within the bound), not when the holder lets go.
      if (state === OWNER_ALIVE && !stall.warned && (givingUp || heldMs >= this.leaseMs)) this.warnLiveHolder(shard, stall, heldMs);
      if (givingUp) {
        stall.gaveUp = true;
        this.counters[STAT.lockTimeouts]++;
        return false;
      }
      sleepMs = Math.min(sleepMs * 2, SLEEP_MAX_MS);
    }
  }

  /**
   * Whether `stall`, not looked at for a while, is still the holding going
   * on: the same sequence value held by the same named, live holder. A pause
   * of the waiting thread (a busy event loop, a loaded machine) must not make
   * it wait the bound again, warn again or count the holding's age anew. A
   * holding never named is forgotten after the pause: its sequence value may
   * have come round again for another holding.
   */
  sameHolder(shard, stall) {
    if (stall.ownerId === 0) return false;
    const meta = shard.meta;
    return (
      Atomics.load(meta, M_OWNER_SEQ) === stall.seq &&
      meta[M_OWNER_PID] === stall.ownerWord &&
      meta[M_OWNER_TID] === stall.ownerId &&
      Atomics.load(meta, M_SEQ) === stall.seq
    );
  }

  /**
   * Whether the holder of sequence value `seq` is dead, alive or cannot be
   * told (OWNER_*, see liveness.js). A holder killed after taking the lock
   * but before recording itself (own()) cannot be named.
   */
  holderState(shard, seq) {
    return lockHolder(shard.meta, seq, this.liveness).state;
  }

  /**
   * Once per holding: a live holder has kept a lock past the lease or the
   * wait bound, and what its waiters do meanwhile (see the header).
   */
  warnLiveHolder(shard, stall, heldMs) {
    stall.warned = true;
    const pid = pidOf(shard.meta[M_OWNER_PID]);
    const where = typeof shard.index === 'number' ? `shard ${shard.index}'s lock` : 'a lock';
    const bound = Number.isFinite(this.waitMs)
      ? `calls that need it give up after lockWaitMs (${this.waitMs} ms): gets miss, writes fail with ERR_ARENA_BUSY`
      : 'waiting for it';
    process.emitWarning(
      `arenacache: ${where} has been held for ${Math.round(heldMs)} ms by a live thread of process ${pid}; ${bound} ` +
        '(a live holder is never taken over: it may be stopped or stalled, and would write on)',
      'ArenaCacheWarning',
    );
  }

  /** Takes the lock from a dead or expired holder and resets the shard. */
  takeOver(shard, seq) {
    const meta = shard.meta;
    // Still odd, so nobody else can enter while the shard is reset.
    const held = (seq + 2) | 0;
    if (Atomics.compareExchange(meta, M_SEQ, seq, held) !== seq) return;
    this.own(meta, held);
    const lostBefore = this.counters[STAT.lostEntries];
    shard.recoverFromDeadHolder();
    this.counters[STAT.lockRecoveries]++;
    // Cache shards only: a block store's stripe loses just the block in flight.
    if (shard.isCacheShard) publishRepair(shard.index, 'dead-holder', this.counters[STAT.lostEntries] - lostBefore);
    Atomics.store(meta, M_SEQ, (held + 1) | 0);
    this.waiting.notify(meta, M_SEQ);
  }

  /**
   * Checks a shard a sole opener left to be checked (see leaveUnchecked),
   * holding its lock meanwhile, so that its waiters wait (a check of 150,000
   * entries takes about 55 ms) and then find it checked or repaired. Only
   * a cache shard is ever left so. Another thread may have taken it first:
   * then nothing is done here.
   */
  checkUnchecked(shard, seq) {
    const meta = shard.meta;
    // Still odd: nobody else enters while the shard is checked.
    const held = (seq + 2) | 0;
    if (Atomics.compareExchange(meta, M_SEQ, seq, held) !== seq) return;
    this.own(meta, held);
    const lostBefore = this.counters[STAT.lostEntries];
    if (shard.checkAfterRestart()) {
      this.counters[STAT.shardRepairs]++;
      publishRepair(shard.index, 'restart-damaged', this.counters[STAT.lostEntries] - lostBefore);
    }
    Atomics.store(meta, M_SEQ, (held + 1) | 0);
    this.waiting.notify(meta, M_SEQ);
  }

  /** Our lock was taken over while we were writing: repair under a proper lock. */
  lockWasTaken(shard) {
    // Not bounded: what this thread wrote after the takeover may have
    // damaged the shard, and only this reset keeps readers from it.
    const held = this.acquireRepairing(shard);
    const lost = shard.isCacheShard ? shard.meta[M_COUNT] : 0;
    shard.reset();
    this.counters[STAT.lockRecoveries]++;
    if (shard.isCacheShard) publishRepair(shard.index, 'lock-lost', lost);
    this.release(shard, held);
  }
}

/**
 * Who holds holding `seq` (odd) of the lock in `meta`, read without writing
 * anything: { state, pid }, state OWNER_DEAD, OWNER_ALIVE or OWNER_UNKNOWN
 * (see liveness.js; `liveness` null for an in-memory arena), pid the
 * holder's as it recorded it (0: not recorded; for messages only). A holder
 * killed after taking the lock but before recording itself (own()) cannot
 * be named.
 */
export function lockHolder(meta, seq, liveness) {
  // The identity counts only if it was written for this very holding and
  // the holding is still going on once it has been read.
  if (Atomics.load(meta, M_OWNER_SEQ) !== seq) return { state: OWNER_UNKNOWN, pid: 0 };
  const word = meta[M_OWNER_PID];
  const id = meta[M_OWNER_TID];
  if (Atomics.load(meta, M_OWNER_SEQ) !== seq || Atomics.load(meta, M_SEQ) !== seq) return { state: OWNER_UNKNOWN, pid: 0 };
  return { state: ownerState(word, id, liveness), pid: pidOf(word) };
}

/**
 * After a restart, for the only process with the arena open: clears the
 * shard's waiter count, and if its lock was left held (its holder died
 * mid-write) repairs the shard (see recoverFromDeadHolder: `rebuild` false
 * where it must not be rebuilt) and moves the sequence on. Returns whether
 * it was held.
 */
export function releaseAbandonedLock(shard, rebuild = true) {
  const meta = shard.meta;
  meta[M_WAITERS] = 0;
  const seq = meta[M_SEQ];
  if ((seq & 1) === 0) return false;
  shard.recoverFromDeadHolder(rebuild);
  Atomics.store(meta, M_SEQ, (seq + 1) | 0);
  return true;
}

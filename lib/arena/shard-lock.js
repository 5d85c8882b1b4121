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
// The holder therefore records who it is (pid, kernel tid and, for a mapped
// file, its thread slot) and which holding that identity belongs to (the odd
// sequence value). A waiter that has spun a while asks whether that thread
// still exists: the kernel, by tid, for a thread of its own process; the
// slot's liveness lock for a thread of another process (liveness.js: a pid
// from another PID namespace means nothing here). A dead holder's lock is
// taken over at once and the shard repaired (shard.recoverFromDeadHolder():
// the cache drops the shard's entries, the block store only the block being
// written), so entries are lost, never corrupted.
//
// A holder known to be alive is never taken over, however long it holds the
// lock: a stalled one (SIGSTOP, a debugger, a frozen cgroup, swap) would
// resume writing into the shard after the takeover, unseen by the seqlock,
// and readers could copy those bytes as another key's value. Its waiters
// wait. The lease (lockLeaseMs) ends only holdings whose holder cannot be
// named: without the addon, a holder killed between taking the lock and
// recording itself, or one that shares the last thread slot.

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
   * @param {{ leaseMs: number, counters: Float64Array, tid: number, waiting?: typeof memoryWaiting,
   *   truncation?: import('./truncation.js').TruncationWatch, liveness?: import('./liveness.js').ThreadLiveness }} options
   *   `tid` is this thread's kernel thread id, 0 when unknown; `waiting` how
   *   to sleep and wake (see waiting.js: across processes for a mapped
   *   file); `truncation` and `liveness` for a mapped file (see
   *   mapped-options.js; `liveness` holds this thread's slot once claimed).
   */
  constructor({ leaseMs, counters, tid, waiting = memoryWaiting, truncation = null, liveness = null }) {
    this.leaseMs = leaseMs;
    this.waiting = waiting;
    /** For a mapped file: its TruncationWatch (see truncation.js), checked before every lock. */
    this.truncation = truncation;
    this.liveness = liveness;
    this.counters = counters;
    this.tid = tid;
    /** What own() records as M_OWNER_PID: the pid, and the slot whose liveness lock says whether we live. */
    this.ownerWord = ownerPidWord(liveness);
    /** Whether a warning about a live holder that keeps a lock past the lease was emitted (once per lock). */
    this.warnedLiveHolder = false;
  }

  /** Takes the shard's lock; returns the held (odd) sequence value. */
  acquire(shard) {
    const truncation = this.truncation;
    if (truncation !== null && truncation.faults[0] !== truncation.seen) truncation.check();
    const meta = shard.meta;
    const seq = meta[M_SEQ];
    if ((seq & 1) === 0 && Atomics.compareExchange(meta, M_SEQ, seq, (seq + 1) | 0) === seq) {
      return this.own(meta, (seq + 1) | 0);
    }
    return this.acquireContended(shard);
  }

  /** @param {import('./shard.js').Shard} shard */
  acquireContended(shard) {
    const meta = shard.meta;
    this.counters[STAT.lockWaits]++;
    for (;;) {
      const seq = Atomics.load(meta, M_SEQ);
      if ((seq & 1) === 0) {
        if (Atomics.compareExchange(meta, M_SEQ, seq, (seq + 1) | 0) === seq) return this.own(meta, (seq + 1) | 0);
      } else {
        this.waitWhileHeld(shard, seq);
      }
    }
  }

  /** Records this thread as the owner of holding `held` (identity first, then whose it is). */
  own(meta, held) {
    meta[M_OWNER_PID] = this.ownerWord;
    meta[M_OWNER_TID] = this.tid;
    meta[M_OWNER_SEQ] = held;
    return held;
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
   * released, or taken over from a dead or expired holder.
   */
  waitWhileHeld(shard, seq) {
    const meta = shard.meta;
    for (let polls = 0; polls < SPIN_POLLS; polls++) {
      if (Atomics.load(meta, M_SEQ) !== seq) return;
    }
    // Sleep instead of spinning: with more threads than cores the holder may
    // be waiting for our core. The waiter count tells releasers to notify;
    // the wait returns at once if the sequence already moved on. (A
    // thread terminated while asleep leaves the count one too high: releases
    // then notify needlessly, which costs time, never correctness.)
    const since = performance.now();
    let sleepMs = 0.05;
    for (;;) {
      Atomics.add(meta, M_WAITERS, 1);
      this.waiting.wait(meta, M_SEQ, seq, sleepMs);
      Atomics.sub(meta, M_WAITERS, 1);
      if (Atomics.load(meta, M_SEQ) !== seq) return;
      const state = this.holderState(shard, seq);
      const waited = performance.now() - since;
      if (state === OWNER_DEAD || (state === OWNER_UNKNOWN && waited >= this.leaseMs)) {
        this.takeOver(shard, seq);
        return;
      }
      if (state === OWNER_ALIVE && waited >= this.leaseMs) this.warnLiveHolder(shard, waited);
      sleepMs = Math.min(sleepMs * 2, SLEEP_MAX_MS);
    }
  }

  /**
   * Whether the holder of sequence value `seq` is dead, alive or cannot be
   * told (OWNER_*, see liveness.js). A holder killed after taking the lock
   * but before recording itself (own()) cannot be named.
   */
  holderState(shard, seq) {
    const meta = shard.meta;
    // The identity counts only if it was written for this very holding and
    // the holding is still going on once it has been read.
    if (Atomics.load(meta, M_OWNER_SEQ) !== seq) return OWNER_UNKNOWN;
    const word = meta[M_OWNER_PID];
    const tid = meta[M_OWNER_TID];
    if (Atomics.load(meta, M_OWNER_SEQ) !== seq || Atomics.load(meta, M_SEQ) !== seq) return OWNER_UNKNOWN;
    return ownerState(word, tid, this.liveness);
  }

  /** Once per lock: a live holder has kept a lock past the lease, and its waiters wait (see the header). */
  warnLiveHolder(shard, waited) {
    if (this.warnedLiveHolder) return;
    this.warnedLiveHolder = true;
    const pid = pidOf(shard.meta[M_OWNER_PID]);
    process.emitWarning(
      `arenacache: a shard lock has been held for ${Math.round(waited)} ms, past lockLeaseMs, by a live thread of process ${pid}; ` +
        'waiting for it (a live holder is never taken over: it may be stopped or stalled, and would write on)',
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

  /** Our lock was taken over while we were writing: repair under a proper lock. */
  lockWasTaken(shard) {
    const held = this.acquire(shard);
    const lost = shard.isCacheShard ? shard.meta[M_COUNT] : 0;
    shard.reset();
    this.counters[STAT.lockRecoveries]++;
    if (shard.isCacheShard) publishRepair(shard.index, 'lock-lost', lost);
    this.release(shard, held);
  }
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

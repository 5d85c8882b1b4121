// ShardLock: one int32 per shard that is both the writers' lock and the
// readers' sequence number (a seqlock).
//
//   even  unlocked; readers may read optimistically
//   odd   a writer is inside; readers wait, and retry if it changed meanwhile
//
// Writers take the lock with one compareExchange and release it with another
// (so a writer whose lock was taken away notices). Readers pay two loads and
// no store, so reads never contend with each other.
//
// A holder can die inside its critical section: a worker terminated by
// worker.terminate(), or (with a mapped file) a process killed by SIGKILL.
// The lock therefore carries its owner (pid, kernel tid). A waiter that has
// spun for a while asks the kernel whether the owner still exists; if not, or
// if the lock has been held longer than the lease, the waiter takes the lock
// over and resets the shard (its entries are lost, never corrupted).

import { isProcessAlive, isThreadAlive } from '../native.js';
import { STAT } from './thread-stats.js';

export const M_SEQ = 0;
export const M_OWNER_PID = 1;
export const M_OWNER_TID = 2;
/** Threads sleeping in Atomics.wait on M_SEQ (meta words 3-8 belong to the shard). */
export const M_WAITERS = 9;

/** Busy polls before sleeping: a critical section lasts microseconds. */
const SPIN_POLLS = 256;
/**
 * Longest single sleep. A release wakes sleepers at once (Atomics.notify);
 * the bound matters only when no wake comes: a dead holder, or (with a
 * mapped file) a holder in another process, where Atomics.notify does not
 * reach.
 */
const SLEEP_MAX_MS = 2;

export class ShardLock {
  /**
   * @param {{ leaseMs: number, counters: Float64Array, tid: number }} options
   *   `tid` is this thread's kernel thread id, 0 when unknown.
   */
  constructor({ leaseMs, counters, tid }) {
    this.leaseMs = leaseMs;
    this.counters = counters;
    this.pid = process.pid;
    this.tid = tid;
  }

  /** Takes the shard's lock; returns the held (odd) sequence value. */
  acquire(shard) {
    const meta = shard.meta;
    const seq = meta[M_SEQ];
    if ((seq & 1) === 0 && Atomics.compareExchange(meta, M_SEQ, seq, (seq + 1) | 0) === seq) {
      meta[M_OWNER_PID] = this.pid;
      meta[M_OWNER_TID] = this.tid;
      return (seq + 1) | 0;
    }
    return this.acquireContended(shard);
  }

  acquireContended(shard) {
    const meta = shard.meta;
    this.counters[STAT.lockWaits]++;
    for (;;) {
      const seq = Atomics.load(meta, M_SEQ);
      if ((seq & 1) === 0) {
        if (Atomics.compareExchange(meta, M_SEQ, seq, (seq + 1) | 0) === seq) {
          meta[M_OWNER_PID] = this.pid;
          meta[M_OWNER_TID] = this.tid;
          return (seq + 1) | 0;
        }
      } else {
        this.waitWhileHeld(shard, seq);
      }
    }
  }

  /** Releases after a change: readers that overlapped will retry. */
  release(shard, held) {
    const meta = shard.meta;
    meta[M_OWNER_TID] = 0;
    meta[M_OWNER_PID] = 0;
    if (Atomics.compareExchange(meta, M_SEQ, held, (held + 1) | 0) !== held) this.lockWasTaken(shard);
    else if (meta[M_WAITERS] !== 0) Atomics.notify(meta, M_SEQ);
  }

  /**
   * Releases without a change: the sequence goes back to its value before
   * acquire, so optimistic readers that overlapped need not retry.
   */
  releaseUnchanged(shard, held) {
    const meta = shard.meta;
    meta[M_OWNER_TID] = 0;
    meta[M_OWNER_PID] = 0;
    // If this fails the lock was taken over while we only read: nothing to repair.
    if (Atomics.compareExchange(meta, M_SEQ, held, (held - 1) | 0) === held && meta[M_WAITERS] !== 0) {
      Atomics.notify(meta, M_SEQ);
    }
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
    // Atomics.wait returns at once if the sequence already moved on.
    const since = performance.now();
    let sleepMs = 0.05;
    for (;;) {
      Atomics.add(meta, M_WAITERS, 1);
      Atomics.wait(meta, M_SEQ, seq, sleepMs);
      Atomics.sub(meta, M_WAITERS, 1);
      if (Atomics.load(meta, M_SEQ) !== seq) return;
      if (performance.now() - since >= this.leaseMs || this.holderIsGone(shard, seq)) {
        this.takeOver(shard, seq);
        return;
      }
      sleepMs = Math.min(sleepMs * 2, SLEEP_MAX_MS);
    }
  }

  /** True when the holder of sequence value `seq` is known to have exited. */
  holderIsGone(shard, seq) {
    const meta = shard.meta;
    const pid = meta[M_OWNER_PID];
    const tid = meta[M_OWNER_TID];
    // Owner fields are written just after the lock is taken; re-check the
    // sequence so they are known to belong to this holding of the lock.
    if (Atomics.load(meta, M_SEQ) !== seq || pid <= 0) return false;
    if (pid !== this.pid && !isProcessAlive(pid)) return true;
    return tid > 0 && isThreadAlive(pid, tid) === false;
  }

  /** Takes the lock from a dead or expired holder and resets the shard. */
  takeOver(shard, seq) {
    const meta = shard.meta;
    // Still odd, so nobody else can enter while the shard is reset.
    if (Atomics.compareExchange(meta, M_SEQ, seq, (seq + 2) | 0) !== seq) return;
    meta[M_OWNER_PID] = this.pid;
    meta[M_OWNER_TID] = this.tid;
    shard.reset();
    this.counters[STAT.lockRecoveries]++;
    meta[M_OWNER_TID] = 0;
    meta[M_OWNER_PID] = 0;
    Atomics.store(meta, M_SEQ, (seq + 3) | 0);
    Atomics.notify(meta, M_SEQ);
  }

  /**
   * Our release failed: another thread decided we were dead and took the lock
   * over while we were still writing. Whatever we wrote after that may have
   * damaged the shard, so reset it once more under a proper lock.
   */
  lockWasTaken(shard) {
    const held = this.acquire(shard);
    shard.reset();
    this.counters[STAT.lockRecoveries]++;
    this.release(shard, held);
  }
}

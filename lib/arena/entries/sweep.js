// Sweeping: expired entries are removed when read or when the ring's tail
// reaches them; the sweeper also reclaims the memory of expired entries that
// nobody reads, a bounded slice at a time.
//
// One thread per arena sweeps at any moment (across processes too, with a
// mapped file): the one holding the sweeper lease in the header. Every
// attached cache ticks; a tick renews the lease if it is ours, takes it if it
// expired or its holder exited, and otherwise does nothing.

import { codes } from '../../errors.js';
import {
  H32_SWEEP_SHARD,
  H32_SWEEPER_PID,
  H32_SWEEPER_TID,
  H64_SWEEPER_LEASE_UNTIL,
  HEADER_BYTES,
} from '../common/layout.js';
import { OWNER_DEAD, ownerPidWord, ownerState } from '../common/liveness.js';
import { EXPIRY_F64, HAS_TTL } from './record.js';
import { M_SWEEP_CURSOR, M_TTL_COUNT } from '../common/shard-meta.js';
import { STAT } from '../common/thread-stats.js';

/** The lease outlives this many intervals, so a live sweeper keeps it. */
const LEASE_INTERVALS = 3;
/** Dictionary slots a sweep may scan per entry it may examine (tables are sparse). */
const SLOTS_PER_CHECK = 8;

export class Sweeper {
  /**
   * @param {import('./arena.js').Arena} arena
   * @param {number} owner this thread's identity (see claimThreadSlot)
   */
  constructor(arena, owner) {
    this.arena = arena;
    this.owner = owner;
    /** Recorded next to `owner`: our pid (for messages; liveness goes by `owner`, see liveness.js). */
    this.pidWord = ownerPidWord();
    this.h32 = new Int32Array(arena.buffer, 0, HEADER_BYTES / 4);
    this.h64 = new Float64Array(arena.buffer, 0, HEADER_BYTES / 8);
    this.leaseMs = arena.header.sweepIntervalMs * LEASE_INTERVALS;
  }

  /** True when this thread holds (or just took) the sweeper lease. */
  holdLease(now) {
    const h32 = this.h32;
    const holder = Atomics.load(h32, H32_SWEEPER_TID);
    if (holder === this.owner && h32[H32_SWEEPER_PID] === this.pidWord) {
      this.h64[H64_SWEEPER_LEASE_UNTIL] = now + this.leaseMs;
      return true;
    }
    if (holder !== 0 && now < this.h64[H64_SWEEPER_LEASE_UNTIL] && !this.holderExited(holder)) return false;
    if (Atomics.compareExchange(h32, H32_SWEEPER_TID, holder, this.owner) !== holder) return false;
    h32[H32_SWEEPER_PID] = this.pidWord;
    this.h64[H64_SWEEPER_LEASE_UNTIL] = now + this.leaseMs;
    return true;
  }

  /** Whether the lease's holder, thread `tid`, is known to be dead (in any PID namespace, see liveness.js). */
  holderExited(tid) {
    return ownerState(this.h32[H32_SWEEPER_PID], tid, this.arena.liveness) === OWNER_DEAD;
  }

  /** Gives the lease up (the cache is closing), so another thread takes over at once. */
  release() {
    if (Atomics.compareExchange(this.h32, H32_SWEEPER_TID, this.owner, 0) === this.owner) {
      this.h64[H64_SWEEPER_LEASE_UNTIL] = 0;
    }
  }

  /** One timer tick: sweep a slice if this thread is the sweeper. Returns entries removed. */
  tick(checks) {
    if (!this.holdLease(Date.now())) return 0;
    // A shard a restart left to be checked, one per tick (see leaveUnchecked).
    this.arena.checkPendingShard();
    return this.sweep(checks);
  }

  /**
   * Examines up to `checks` entries (scanning at most 8 × `checks`
   * dictionary slots, empty ones included), continuing where the last sweep
   * stopped, holding one shard's lock at a time, and removes expired ones.
   */
  sweep(checks) {
    const arena = this.arena;
    const shards = arena.shards;
    const counters = arena.counters;
    const now = Date.now();
    let entriesLeft = checks;
    let slotsLeft = SLOTS_PER_CHECK * checks;
    let removed = 0;
    for (let visited = 0; visited < shards.length && entriesLeft > 0 && slotsLeft > 0; visited++) {
      const shard = shards[(Atomics.add(this.h32, H32_SWEEP_SHARD, 1) >>> 0) % shards.length];
      if (shard.meta[M_TTL_COUNT] === 0) continue;
      let held;
      try {
        held = arena.lock.acquire(shard);
      } catch (error) {
        // A live thread keeps this shard's lock past lockWaitMs: sweep it another time.
        if (error?.code === codes.ERR_ARENA_BUSY) continue;
        throw error;
      }
      let removedHere = 0;
      try {
        const table = shard.table;
        const n = shard.slots;
        let cursor = shard.meta[M_SWEEP_CURSOR] % n;
        for (let scanned = 0; scanned < n && entriesLeft > 0 && slotsLeft > 0; scanned++) {
          slotsLeft--;
          const w0 = table[2 * cursor];
          if (w0 !== 0) {
            entriesLeft--;
            const offset = (w0 - 1) * 8;
            if ((shard.u32[offset >>> 2] & HAS_TTL) !== 0 && shard.f64[(offset >>> 3) + EXPIRY_F64] <= now) {
              // Removal shifts later entries back into this slot: look at it again.
              shard.removeEntry(cursor, offset);
              removedHere++;
              continue;
            }
          }
          if (++cursor === n) cursor = 0;
        }
        shard.meta[M_SWEEP_CURSOR] = cursor;
        shard.publishCount();
      } catch (error) {
        arena.resetAfter(shard, error);
      } finally {
        arena.lock.release(shard, held, removedHere > 0);
      }
      removed += removedHere;
    }
    counters[STAT.sweeps]++;
    counters[STAT.sweptEntries] += removed;
    counters[STAT.expirations] += removed;
    return removed;
  }
}

/** Clears the sweeper lease: after a restart its holder is gone. */
export function releaseSweeperLease(buffer) {
  const h32 = new Int32Array(buffer, 0, HEADER_BYTES / 4);
  h32[H32_SWEEPER_PID] = 0;
  Atomics.store(h32, H32_SWEEPER_TID, 0);
  new Float64Array(buffer, 0, HEADER_BYTES / 8)[H64_SWEEPER_LEASE_UNTIL] = 0;
}

// RecordStamp: proof that a value read from the arena is still the entry's
// current value, checked with no lock: one load of shared memory while the
// shard is unwritten, two after a write.
//
// Every record carries a write stamp that no other record of its shard has
// ever had (record.js). While the key's dictionary slot still points at the
// record's offset and the record there still bears the stamp, neither a set,
// delete, eviction, relocation, clear nor a shard repair by any thread or
// process has touched the entry: each of them moves or empties the slot or
// writes a new stamp before it releases the shard's lock. Validity is per
// entry: writes to other keys of the shard do not disturb it.
//
// A stamp that no longer holds may be a false alarm (a relocation moved the
// same record); the caller then reads the arena again.
//
// Those two loads reach the slot's and the record's cache lines, which a
// large cache holds far apart: most of a near hit's time. So a check that
// passes also notes the shard's write count (every holding that changes the
// shard advances it before releasing the lock), read before the check while
// no writer held the shard. While the count is still that value, nothing in
// the shard has changed since, and the check is one load of the shard's meta
// line, which stays in cache. The count is a float64 that only grows (across
// clear() and repairs too), so it cannot come back to a value by wrapping as
// the 32-bit sequence would.
//
// On x86 the two loads see a writer's stores in the order it made them (the
// slot is emptied before its space is reused), so a match means the value was
// current at the first load, within the caller's get. Weakly ordered CPUs
// give no such order: there the loads are bracketed by the shard's sequence
// like an optimistic read.

import { STAMP_F64 } from './record.js';
import { M64_WRITE_STAMP, M_SEQ } from './shard-meta.js';
import { sequenceAfter, sequenceBefore, WEAK_MEMORY_ORDER } from './shard-lock.js';

const fence = new Int32Array(new SharedArrayBuffer(4));

export class RecordStamp {
  /**
   * The record at `offset` that dictionary slot `slot` of `shard` pointed at
   * during a consistent read, which found `stamp` and `expiresAt` (0: none)
   * in it. They must come from that read: read afterwards, they could
   * belong to a newer version than the value.
   * @param {import('./shard.js').Shard} shard
   */
  constructor(shard, slot, offset, stamp, expiresAt) {
    // Every field first, in one order: one hidden class for all stamps.
    this.shard = null;
    this.table = null;
    this.f64 = null;
    this.meta64 = null;
    /** The shard's write count when a full check last passed (-1: none yet). */
    this.writes = -1;
    /** Whether touch() may still count (see Shard.touchAt). */
    this.touchable = true;
    this.word = 0;
    this.pointer = 0;
    this.offset = 0;
    this.stampIndex = 0;
    this.stamp = 0;
    this.expiresAt = 0;
    if (shard !== null) this.set(shard, slot, offset, stamp, expiresAt);
  }

  /** Points this stamp at another record (a near cache reuses its entries). */
  set(shard, slot, offset, stamp, expiresAt) {
    if (shard !== this.shard) {
      this.shard = shard;
      this.table = shard.table;
      this.f64 = shard.f64;
      this.meta64 = shard.meta64;
    }
    this.writes = -1;
    this.touchable = true;
    this.word = 2 * slot;
    this.pointer = offset / 8 + 1;
    this.offset = offset;
    this.stampIndex = (offset >>> 3) + STAMP_F64;
    this.stamp = stamp;
    this.expiresAt = expiresAt;
  }

  /** Whether the entry is unchanged and unexpired; `clock` as the arena's (see clock.js). */
  holds(clock) {
    if (WEAK_MEMORY_ORDER) return this.holdsOrdered(clock);
    if (this.meta64[M64_WRITE_STAMP] !== this.writes && !this.recheck()) return false;
    return this.expiresAt === 0 || this.expiresAt > clock.now();
  }

  /** The two-load check, after the shard was written (or on first use); notes the count it vouches for. */
  recheck() {
    const writes = this.meta64[M64_WRITE_STAMP];
    // Atomic, so that the compiler keeps the count's load before it and the
    // slot's and record's after it.
    const seq = Atomics.load(this.shard.meta, M_SEQ);
    if (this.table[this.word] !== this.pointer || this.f64[this.stampIndex] !== this.stamp) return false;
    // Read while a writer held the shard, the count may predate a change
    // the check did not see yet: it vouches for nothing.
    if ((seq & 1) === 0) this.writes = writes;
    this.touchable = true;
    return true;
  }

  holdsOrdered(clock) {
    const meta = this.shard.meta;
    const seq = sequenceBefore(meta);
    if ((seq & 1) !== 0) return false;
    const same = this.table[this.word] === this.pointer && this.f64[this.stampIndex] === this.stamp;
    return sequenceAfter(meta, fence) === seq && same && (this.expiresAt === 0 || this.expiresAt > clock.now());
  }

  /** A use of the entry for the eviction policy, as a get of it in the arena counts. */
  touch() {
    if (this.touchable) this.touchable = this.shard.touchAt(this.word >>> 1, this.offset);
  }
}

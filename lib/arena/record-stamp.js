// RecordStamp: proof that a value read from the arena is still the entry's
// current value, checked with two loads of shared memory and no lock.
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
// On x86 the two loads see a writer's stores in the order it made them (the
// slot is emptied before its space is reused), so a match means the value was
// current at the first load, within the caller's get. Weakly ordered CPUs
// give no such order: there the loads are bracketed by the shard's sequence
// like an optimistic read.

import { STAMP_F64 } from './record.js';
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
    }
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
    return this.table[this.word] === this.pointer && this.f64[this.stampIndex] === this.stamp && (this.expiresAt === 0 || this.expiresAt > clock.now());
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
    this.shard.touchAt(this.word >>> 1, this.offset);
  }
}

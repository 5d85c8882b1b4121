// RecordStamp: proof that a value read from the arena is still the entry's
// current value, checked with no lock: one load of shared memory while the
// key's slot group is unwritten, three after a write.
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
// passes also notes the write count of the slot's group (a few hundred
// consecutive slots, see layout.slotGroupsPerShard), read before the check
// while no writer held the shard. Every change of a slot, or of the record it
// points at, advances its group's count under the shard's lock (see
// Shard.slotChanged), so while the count is still that value the entry is
// unchanged, and the check is one load of the counts, which are small enough
// to stay in the CPU cache. With one count per shard, a 90/10 mix of gets
// and sets over 100,000 keys (Zipf 0.99, 64 shards) sent seven gets in ten
// to the slot and record; with up to 256 groups per shard, one in four. A
// count is a float64 that only grows (across clear() and repairs too), so it
// cannot come back to a noted value by wrapping.
//
// On x86 the loads see a writer's stores in the order it made them (the
// slot is emptied before its space is reused), so a match means the value was
// current at the first load, within the caller's get. Weakly ordered CPUs
// give no such order: there the loads are bracketed by the shard's sequence
// like an optimistic read.

import { STAMP_F64 } from './record.js';
import { M_SEQ } from '../common/shard-meta.js';
import { sequenceAfter, sequenceBefore, WEAK_MEMORY_ORDER } from '../common/shard-lock.js';

const fence = new Int32Array(new SharedArrayBuffer(4));
const WORD = 2 ** 32;

/** checkStamp(): the record is no longer the one stamped. */
export const STAMP_GONE = -2;
/** checkStamp(): the record still holds, but the check vouches for no write count. */
export const STAMP_HOLDS = -1;

/**
 * The full check of a stamp: whether dictionary slot `slot` of `shard` still
 * points at the record at `offset` and that record still bears `stamp`.
 * Returns STAMP_GONE, or the write count of the slot's group the check
 * vouches for (neither changed while the count keeps that value), or
 * STAMP_HOLDS when it vouches for none (a writer held the shard, or the CPU
 * orders loads weakly).
 * @param {import('./shard.js').Shard} shard
 */
export function checkStamp(shard, slot, offset, stamp) {
  const meta = shard.meta;
  const word = 2 * slot;
  const pointer = offset / 8 + 1;
  const stampIndex = (offset >>> 3) + STAMP_F64;
  if (WEAK_MEMORY_ORDER) {
    const seq = sequenceBefore(meta);
    if ((seq & 1) !== 0) return STAMP_GONE;
    const same = shard.table[word] === pointer && shard.f64[stampIndex] === stamp;
    return same && sequenceAfter(meta, fence) === seq ? STAMP_HOLDS : STAMP_GONE;
  }
  const writes = shard.groupWrites[shard.groupOf(slot)];
  // Atomic, so that the compiler keeps the count's load before it and the
  // slot's and record's after it.
  const seq = Atomics.load(meta, M_SEQ);
  if (shard.table[word] !== pointer || shard.f64[stampIndex] !== stamp) return STAMP_GONE;
  // Read while a writer held the shard, the count may predate a change the
  // check did not see yet.
  return (seq & 1) === 0 ? writes : STAMP_HOLDS;
}

export class RecordStamp {
  /**
   * The record at `offset` that dictionary slot `slot` of `shard` pointed at
   * during a consistent read, which found `stamp` and `expiresAt` (0: none)
   * in it. They must come from that read: read afterwards, they could
   * belong to a newer version than the value.
   * @param {import('./shard.js').Shard} shard
   */
  constructor(shard, slot, offset, stamp, expiresAt) {
    this.shard = shard;
    this.groupWrites = shard.groupWrites;
    this.group = shard.groupOf(slot);
    // The group's write count the last full check vouched for (STAMP_HOLDS: none),
    // as two small integers: V8 keeps a float64 field in a box of its own,
    // one more cache miss per check. Counts stay below 2^53.
    this.writesLow = STAMP_HOLDS;
    this.writesHigh = 0;
    this.slot = slot;
    this.offset = offset;
    this.stamp = stamp;
    this.expiresAt = expiresAt;
  }

  /** Whether the entry is unchanged and unexpired; `clock` as the arena's (see clock.js). */
  holds(clock) {
    if (WEAK_MEMORY_ORDER || this.groupWrites[this.group] !== this.writesHigh * WORD + this.writesLow) {
      const writes = checkStamp(this.shard, this.slot, this.offset, this.stamp);
      if (writes === STAMP_GONE) return false;
      this.writesLow = writes | 0;
      this.writesHigh = (writes - (writes | 0)) / WORD;
    }
    return this.expiresAt === 0 || this.expiresAt > clock.now();
  }
}

/** FoundEntry.valueKind of a value a near cache kept ready (decoded): its stored kind is not noted. */
export const VALUE_KIND_UNKNOWN = -1;

/**
 * What a lookup found, or what a store wrote: an entry's place, and when the
 * lookup read the value, the record's write stamp, freshness and value kind,
 * all from one consistent read or one holding of the lock. The caller owns
 * the record and hands it to the call that fills it (the arena's get(),
 * peek() and set(), Shard.findSlot() and store()), which fills it before it
 * returns: a result reaches its consumer as a value it is handed, never as
 * a field of the arena read after the call.
 *
 * A caller may reuse one record call after call where no user code can run
 * between the call that fills it and its last read of it: any lookup made
 * meanwhile by the same caller (a codec's decode may read the cache) would
 * refill it. Where user code runs (a decode), the caller takes what it
 * needs first (see SharedCache#decodeFound). toRecordStamp() makes a
 * RecordStamp, which stays valid after the record is refilled.
 */
export class FoundEntry {
  constructor() {
    /** @type {import('./shard.js').Shard | null} the entry's shard */
    this.shard = null;
    /** Its dictionary slot (-1: the lookup missed). */
    this.slot = -1;
    /** Its record's offset in the shard's region. */
    this.offset = 0;
    /** Its record's write stamp (see record.js). */
    this.stamp = 0;
    /** When the value stops being fresh: its stale time, else its expiry (0: never). */
    this.expiresAt = 0;
    /** Whether the value read was stale (only reads that allow stale values return one). */
    this.stale = false;
    /** How the value's bytes turn back into a value: VALUE_RAW, VALUE_UTF8 or VALUE_CODEC (VALUE_KIND_UNKNOWN: see there). */
    this.valueKind = 0;
  }

  /** Copies every field of `other` into this record. */
  copyFrom(other) {
    this.shard = other.shard;
    this.slot = other.slot;
    this.offset = other.offset;
    this.stamp = other.stamp;
    this.expiresAt = other.expiresAt;
    this.stale = other.stale;
    this.valueKind = other.valueKind;
  }

  /** A RecordStamp of the entry, which stays valid after the record is refilled (call only after a hit or a store). */
  toRecordStamp() {
    return new RecordStamp(/** @type {import('./shard.js').Shard} */ (this.shard), this.slot, this.offset, this.stamp, this.expiresAt);
  }
}

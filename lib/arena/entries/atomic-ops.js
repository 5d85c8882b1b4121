// The arena's read-modify-write operations: each looks the key up and
// decides under the shard's lock, in one holding, so no write of any
// thread or process comes between what it saw and what it wrote. They back
// SharedCache's add, replace, compareAndSet, incr, touch, take and update
// (lib/cache/atomic.js says what each means to a user).
//
// "Present" here is what a get with allowStale sees: a live record that has
// not expired (a stale one is present). A key's version is its record's
// write stamp (record.js): unique in its shard, so never handed out twice
// for a key, and changed by every write of it.
//
// No user code runs under the lock: values come in already encoded, and go
// out in stored form (a string, a Buffer copy, a number, or codec bytes the
// caller decodes after the lock is released).
//
// Crashes: a store is a set (a replacement drops the old record before the
// new one is in, so a holder killed in between loses the key, as a set's
// would); a removal is one word. An increment of a number record changes
// its 8 bytes in place under an undo journal in the shard's meta line
// (M_UNDO_*, see rebuild.js), so a counter is never lost to a kill: it
// holds its value from before the increment in flight, or after it.

import { CHECKSUM_BYTES, EXPIRY_F64, HAS_STALE, HAS_TTL, keyWord, NUMBER_BYTES, paddedKeyBytes, recordKeyStart, recordSize, recordTimeBytes, REWRITING, sealRecord, STALE_F64, STAMP_F64, VALUE_CODEC, VALUE_KIND_SHIFT, VALUE_NUMBER, writeTimes } from './record.js';
import { ArenaCacheError, codes } from '../../errors.js';
import { M64_UNDO_STAMP, M64_UNDO_VALUE, M_UNDO_AT } from '../common/shard-meta.js';
import { STAT } from '../common/thread-stats.js';

/** storeIf() conditions: the key is absent (add), present (replace), or present at a version (compareAndSet). */
export const IF_ABSENT = 0;
export const IF_PRESENT = 1;
export const IF_VERSION = 2;

/** What incrementNumber() returns for a key holding codec bytes (a number an older version stored, or a custom codec's value): the caller decodes it and retries as a compare-and-set. */
export const HOLDS_CODEC_VALUE = Symbol('codec value');
/** What incrementNumber() returns for a key holding a string or bytes; its kind is in `found.valueKind`. */
export const HOLDS_OTHER_VALUE = Symbol('not a number');

/**
 * Looks `key` up with its shard's lock held, filling `found` (offset, slot);
 * returns the slot (-1: none) or -1 also for an expired record (offset is still filled).
 */
function findPresent(shard, key, found) {
  const slot = shard.findSlot(key.bytes, key.length, keyWord(key.length, key.kind), key.hash, found);
  found.shard = shard;
  found.slot = slot;
  return slot;
}

/**
 * The size of the live record at `offset` (word 0 `flags`) as its header's
 * lengths make it, when its stored size agrees and the record lies in the
 * shard's region; else -1 (damage). A change in place reseals the checksum
 * over that many bytes, never over lengths read back unchecked: a damaged
 * length would send the seal, and its loop, past the record.
 */
function soundRecordSize(shard, offset, flags) {
  const u32 = shard.u32;
  const size = recordSize(flags >>> 16, u32[(offset >>> 2) + 1] + (shard.checksums ? CHECKSUM_BYTES : 0), recordTimeBytes(flags));
  return size === u32[(offset >>> 2) + 3] && offset + size <= shard.regionBytes ? size : -1;
}

/** The ERR_ARENA_CORRUPT of a record whose lengths disagree (see soundRecordSize): Arena#resetAfter repairs its shard. */
function damagedRecord(shard, offset) {
  return new ArenaCacheError(codes.ERR_ARENA_CORRUPT, `shard ${shard.index}: the record at ${offset} has lengths that disagree with its size`);
}

/** Fills `written` with the record at `slot` as this holding leaves it (see Arena#set). */
function noteWritten(shard, slot, entryExpiresAt, written) {
  const at = (shard.table[2 * slot] - 1) * 8;
  written.shard = shard;
  written.slot = slot;
  written.offset = at;
  written.stamp = shard.f64[(at >>> 3) + STAMP_F64];
  written.expiresAt = entryExpiresAt;
  written.stale = false;
}

/**
 * Stores `entry` under `key` if `condition` holds (IF_ABSENT, IF_PRESENT,
 * or IF_VERSION with the key's version equal to `version`); returns whether
 * it stored. `written` is filled as by Arena#set when it did.
 */
export function storeIf(arena, key, entry, condition, version, written) {
  const shard = arena.shards[key.hash & arena.shardMask];
  const held = arena.lock.acquire(shard);
  let stored = false;
  try {
    const slot = findPresent(shard, key, written);
    const offset = written.offset;
    const present = slot >= 0 && !arena.isExpired(shard, offset);
    if (condition === IF_ABSENT ? !present : present && (condition === IF_PRESENT || shard.f64[(offset >>> 3) + STAMP_F64] === version)) {
      stored = true;
      const at = arena.storeLocked(shard, slot, offset, key, entry, written);
      noteWritten(shard, at, entry.staleAt > 0 ? entry.staleAt : entry.expiresAt, written);
    }
  } finally {
    arena.lock.release(shard, held, stored);
  }
  arena.counters[stored ? STAT.conditionalWrites : STAT.conditionalMisses]++;
  if (stored) arena.counters[STAT.sets]++;
  return stored;
}

/** Removes `key` if it is present at `version`; returns whether it did. */
export function removeIfVersion(arena, key, version) {
  const shard = arena.shards[key.hash & arena.shardMask];
  const held = arena.lock.acquire(shard);
  let removed = false;
  try {
    const found = arena.probe;
    const slot = findPresent(shard, key, found);
    const offset = found.offset;
    if (slot >= 0 && !arena.isExpired(shard, offset) && shard.f64[(offset >>> 3) + STAMP_F64] === version) {
      removed = true;
      shard.removeEntry(slot, offset);
      shard.publishCount();
    }
  } finally {
    arena.lock.release(shard, held, removed);
  }
  arena.counters[removed ? STAT.conditionalWrites : STAT.conditionalMisses]++;
  if (removed) arena.counters[STAT.deletes]++;
  return removed;
}

/**
 * Removes `key` and returns its value in stored form (see the top), in one
 * holding of the lock; undefined when it has no fresh value (a stale one
 * too with `allowStale`). `found` says the value's kind.
 */
export function takeValue(arena, key, allowStale, found) {
  const shard = arena.shards[key.hash & arena.shardMask];
  const held = arena.lock.acquire(shard);
  let value;
  try {
    const slot = findPresent(shard, key, found);
    if (slot >= 0) {
      const offset = found.offset;
      const read = arena.readStored(shard, offset, allowStale, found);
      if (read !== undefined) {
        value = read;
        shard.removeEntry(slot, offset);
        shard.publishCount();
      }
    }
  } finally {
    arena.lock.release(shard, held, value !== undefined);
  }
  // A get that removes: a hit and a delete, or a miss.
  if (value === undefined) {
    arena.counters[STAT.misses]++;
  } else {
    arena.counters[STAT.hits]++;
    arena.counters[STAT.deletes]++;
  }
  return value;
}

/**
 * Adds `delta` to the number `key` holds, in place, and returns the new
 * number; for an absent (or expired) key stores `entry` (the initial number
 * plus delta, with its ttl) and returns entry.payload. A key holding
 * anything else is left as it is: HOLDS_CODEC_VALUE or HOLDS_OTHER_VALUE
 * (`found.valueKind` says which kind).
 */
export function incrementNumber(arena, key, delta, entry, found) {
  const shard = arena.shards[key.hash & arena.shardMask];
  const held = arena.lock.acquire(shard);
  let result;
  try {
    const slot = findPresent(shard, key, found);
    const offset = found.offset;
    if (slot < 0 || arena.isExpired(shard, offset)) {
      const at = arena.storeLocked(shard, slot, offset, key, entry, found);
      noteWritten(shard, at, entry.expiresAt, found);
      result = entry.payload;
    } else {
      const flags = shard.u32[offset >>> 2];
      const kind = (flags >>> VALUE_KIND_SHIFT) & 3;
      found.valueKind = kind;
      if (kind !== VALUE_NUMBER) {
        result = kind === VALUE_CODEC ? HOLDS_CODEC_VALUE : HOLDS_OTHER_VALUE;
      } else {
        try {
          result = addInPlace(shard, slot, offset, flags, delta);
        } catch (error) {
          // Damage (rethrown otherwise): the shard is repaired, as a reader
          // finding damage repairs it, and the count starts again.
          arena.resetAfter(shard, error);
          const at = shard.store(key, entry, found);
          noteWritten(shard, at, entry.expiresAt, found);
          result = entry.payload;
        }
      }
    }
  } finally {
    arena.lock.release(shard, held, typeof result === 'number');
  }
  if (typeof result === 'number') arena.counters[STAT.increments]++;
  return result;
}

/**
 * Adds `delta` to the number record at `offset` (slot `slot`) in place,
 * journaled (see the top), and returns the new number; ERR_ARENA_CORRUPT,
 * changing nothing, for a record whose lengths disagree.
 */
export function addInPlace(shard, slot, offset, flags, delta) {
  const size = soundRecordSize(shard, offset, flags);
  if (size < 0 || shard.u32[(offset >>> 2) + 1] !== NUMBER_BYTES) throw damagedRecord(shard, offset);
  const f64 = shard.f64;
  const valueAt = (recordKeyStart(offset, flags) + paddedKeyBytes(flags >>> 16)) >>> 3;
  const stampAt = (offset >>> 3) + STAMP_F64;
  const before = f64[valueAt];
  const after = before + delta;
  const meta = shard.meta;
  const meta64 = shard.meta64;
  meta64[M64_UNDO_VALUE] = before;
  meta64[M64_UNDO_STAMP] = f64[stampAt];
  // Last: the journal holds from here on.
  meta[M_UNDO_AT] = offset + 1;
  // The stamp before the value: a near copy checked meanwhile no longer holds.
  f64[stampAt] = shard.nextWriteStamp();
  f64[valueAt] = after;
  if (shard.checksums) sealRecord(shard.u32, shard.u8, offset, size, (valueAt << 3) + NUMBER_BYTES);
  meta[M_UNDO_AT] = 0;
  shard.slotChanged(slot);
  shard.touchAt(slot, offset);
  return after;
}

/**
 * Gives a present `key` a ttl of `ttl` ms from now (0: none), keeping its
 * stale window, and a new version, its value unchanged; returns whether it
 * was present (false too when the record with its new time fields would not
 * fit a shard). The time fields are rewritten in place when the record has
 * the same ones (marked REWRITING, as Shard#rewrite does), else the record
 * is written again with `entry` (the caller's scratch) filled from its value.
 */
export function touchEntry(arena, key, ttl, entry, found) {
  const shard = arena.shards[key.hash & arena.shardMask];
  const held = arena.lock.acquire(shard);
  let touched = false;
  let repaired = false;
  try {
    const slot = findPresent(shard, key, found);
    const offset = found.offset;
    if (slot >= 0 && !arena.isExpired(shard, offset)) {
      const u32 = shard.u32;
      const o4 = offset >>> 2;
      const flags = u32[o4];
      const f64 = shard.f64;
      const size = soundRecordSize(shard, offset, flags);
      if (size < 0) throw damagedRecord(shard, offset);
      // A stale window keeps its length after the new ttl (a damaged one: none).
      const stored = (flags & HAS_STALE) !== 0 ? f64[(offset >>> 3) + EXPIRY_F64] - f64[(offset >>> 3) + STALE_F64] : 0;
      const window = stored > 0 && stored < Infinity ? stored : 0;
      const now = Date.now();
      const staleAt = ttl > 0 && window > 0 ? now + ttl : 0;
      const expiresAt = ttl > 0 ? now + ttl + window : 0;
      const times = expiresAt > 0 ? (staleAt > 0 ? HAS_TTL | HAS_STALE : HAS_TTL) : 0;
      if ((flags & (HAS_TTL | HAS_STALE)) === times) {
        touched = true;
        u32[o4] = flags | REWRITING;
        f64[(offset >>> 3) + STAMP_F64] = shard.nextWriteStamp();
        writeTimes(f64, offset, expiresAt, staleAt);
        if (shard.checksums) sealRecord(u32, shard.u8, offset, size, recordKeyStart(offset, flags) + paddedKeyBytes(flags >>> 16) + u32[o4 + 1]);
        u32[o4] = flags;
        shard.slotChanged(slot);
      } else if (arena.entryFromRecord(shard, offset, expiresAt, staleAt, entry, found)) {
        touched = true;
        shard.storeFound(slot, offset, key, entry);
        entry.payload = null;
      }
    }
  } catch (error) {
    // Damage (rethrown otherwise): the shard is repaired, the entry with it.
    touched = false;
    repaired = true;
    arena.resetAfter(shard, error);
  } finally {
    arena.lock.release(shard, held, touched || repaired);
  }
  arena.counters[touched ? STAT.conditionalWrites : STAT.conditionalMisses]++;
  return touched;
}

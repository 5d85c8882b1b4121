// Shard: one lock, one dictionary and one circular log of records.
//
// The dictionary is open addressing with linear probing. A slot is two u32
// words: the record's offset in the log (in 8-byte units, plus one, so 0 means
// empty) and the key's hash with its low two bits replaced by a reference
// mark that readers set (CLOCK). Deletion shifts the following slots back
// instead of leaving tombstones, so probe chains never rot.
//
// The log is a ring: records are appended at `head`, and space is reclaimed
// at `tail`. Reclaiming a live record either evicts it or, if it was read
// since the tail last passed it (its mark is set), moves it to the head and
// clears the mark: a second chance, which makes the ring an approximate LRU.
// When most of the ring is dead space (overwritten or deleted records), live
// records at the tail are moved rather than evicted, so dead space never
// pushes live entries out. Variable-length records mean a 64-byte value takes
// 64 bytes plus a 16-byte header, not a whole block.
//
// Methods that change anything must be called with the shard's lock held.
// findSlot() and the record readers are also used by optimistic readers, who
// may see half-written data: they bound every index and let the sequence
// check throw the result away.

import { ArenaCacheError, codes } from '../errors.js';
import {
  HAS_TTL,
  KEY_MATCH_MASK,
  KEY_KIND_SHIFT,
  RECORD_HEADER_BYTES,
  TTL_BYTES,
  TYPE_DEAD,
  TYPE_LIVE,
  TYPE_MASK,
  TYPE_PAD,
  VALUE_KIND_SHIFT,
} from './record.js';
import { SHARD_META_BYTES } from './layout.js';
import { M_SEQ } from './shard-lock.js';
import { STAT } from './thread-stats.js';

// Meta words after the lock words (see shard-lock.js for 0-2).
export const M_COUNT = 3;
export const M_HEAD = 4;
export const M_TAIL = 5;
export const M_USED = 6;
export const M_LIVE_BYTES = 7;
export const M_LIVE_RECORD_BYTES = 8;

/** Clears the reference mark but keeps the hash bits of a slot's word 1. */
export const TAG_MASK = ~3;
/** Records moved per store at most: bounds the time a writer holds the lock. */
const RELOCATION_BUDGET = 16;
/** Below this fraction of live bytes, reclaiming moves live records instead of evicting. */
const COMPACTION_LIVE_FRACTION = 7 / 8;

function corrupt(shardIndex, what) {
  return new ArenaCacheError(codes.ERR_ARENA_CORRUPT, `arena shard ${shardIndex} is corrupt: ${what}`);
}

export class Shard {
  /**
   * @param {SharedArrayBuffer} buffer
   * @param {ReturnType<import('./layout.js').computeLayout>} layout
   * @param {number} index
   * @param {Float64Array} counters this thread's counter slot
   */
  constructor(buffer, layout, index, counters) {
    const regionBytes = layout.regionBytes;
    const dataOffset = layout.dataOffset + index * regionBytes;
    this.index = index;
    this.counters = counters;
    this.meta = new Int32Array(buffer, layout.metaOffset + index * SHARD_META_BYTES, SHARD_META_BYTES / 4);
    this.slots = layout.slotsPerShard;
    this.table = new Uint32Array(buffer, layout.tablesOffset + index * layout.slotsPerShard * 8, layout.slotsPerShard * 2);
    // home(tag) = floor(tag * slots / 2^32): uses the high hash bits, while the
    // low bits chose the shard. Exact in float64 (see homeOf).
    this.homeScale = layout.slotsPerShard / 4294967296;
    this.regionBytes = regionBytes;
    this.maxEntries = layout.maxEntriesPerShard;
    // `max` bounds the whole cache: inserting counts the entries of all shards.
    this.globalMax = layout.max;
    this.shardCount = layout.shardCount;
    this.allMeta = new Int32Array(buffer, layout.metaOffset, (layout.shardCount * SHARD_META_BYTES) / 4);
    this.compactionLimit = Math.floor(regionBytes * COMPACTION_LIVE_FRACTION);
    this.u8 = new Uint8Array(buffer, dataOffset, regionBytes);
    this.u32 = new Uint32Array(buffer, dataOffset, regionBytes / 4);
    this.i32 = new Int32Array(buffer, dataOffset, regionBytes / 4);
    this.f64 = new Float64Array(buffer, dataOffset, regionBytes / 8);
    this.bytes = Buffer.from(buffer, dataOffset, regionBytes);
    /** Offset of the record findSlot() found last. */
    this.foundOffset = 0;
    this.relocationBudget = 0;
  }

  homeOf(tag) {
    return Math.floor((tag >>> 0) * this.homeScale);
  }

  /**
   * Finds the slot of the live record whose key is `key[0, keyLength)` with
   * word 0 matching `expectedWord` (see record.keyWord). Returns the slot index
   * and sets `foundOffset`, or returns -1. Safe to call without the lock.
   */
  findSlot(key, keyLength, expectedWord, hash) {
    const table = this.table;
    const u32 = this.u32;
    const u8 = this.u8;
    const n = this.slots;
    const tag = hash & TAG_MASK;
    let i = Math.floor((tag >>> 0) * this.homeScale);
    for (let probes = 0; probes < n; probes++) {
      const w0 = table[2 * i];
      if (w0 === 0) return -1;
      if (((table[2 * i + 1] ^ tag) & TAG_MASK) === 0) {
        const offset = (w0 - 1) * 8;
        const flags = u32[offset >>> 2];
        if (((flags & KEY_MATCH_MASK) >>> 0) === expectedWord) {
          const keyStart = offset + RECORD_HEADER_BYTES + ((flags & HAS_TTL) << 1);
          let j = 0;
          while (j < keyLength && u8[keyStart + j] === key[j]) j++;
          if (j === keyLength) {
            this.foundOffset = offset;
            return i;
          }
        }
      }
      if (++i === n) i = 0;
    }
    return -1;
  }

  /** The slot pointing at the record at `offset`, or -1. */
  slotOfRecord(offset, hash) {
    const table = this.table;
    const n = this.slots;
    const target = offset / 8 + 1;
    let i = this.homeOf(hash & TAG_MASK);
    for (let probes = 0; probes < n; probes++) {
      const w0 = table[2 * i];
      if (w0 === target) return i;
      if (w0 === 0) return -1;
      if (++i === n) i = 0;
    }
    return -1;
  }

  insertSlot(hash, offset) {
    const table = this.table;
    const n = this.slots;
    const tag = hash & TAG_MASK;
    let i = this.homeOf(tag);
    // The entry bound keeps a slot free; a full table means a damaged shard
    // (and must not become an endless loop).
    for (let probes = 0; table[2 * i] !== 0; probes++) {
      if (probes === n) throw corrupt(this.index, 'the dictionary has no free slot');
      if (++i === n) i = 0;
    }
    table[2 * i + 1] = tag;
    table[2 * i] = offset / 8 + 1;
  }

  /** Empties slot `i` and shifts back the entries whose probe ran through it. */
  removeSlot(i) {
    const table = this.table;
    const n = this.slots;
    let j = i;
    for (let probes = 0; ; probes++) {
      if (probes === n) throw corrupt(this.index, 'the dictionary has no free slot');
      if (++j === n) j = 0;
      const w0 = table[2 * j];
      if (w0 === 0) break;
      const w1 = table[2 * j + 1];
      const home = this.homeOf(w1 & TAG_MASK);
      // The entry at j may move to the hole at i unless its home lies
      // cyclically in (i, j].
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (!stays) {
        table[2 * i] = w0;
        table[2 * i + 1] = w1;
        i = j;
      }
    }
    table[2 * i] = 0;
    table[2 * i + 1] = 0;
  }

  /**
   * Stores a record, replacing any record of the same key, evicting as needed.
   * `value` is a Uint8Array (raw or encoded) or, for VALUE_UTF8, a string.
   */
  store(key, keyLength, keyKind, hash, valueKind, value, valueLength, expiresAt, size) {
    const meta = this.meta;
    const expected = ((keyLength << 16) | (keyKind << KEY_KIND_SHIFT) | TYPE_LIVE) >>> 0;
    const existing = this.findSlot(key, keyLength, expected, hash);
    if (existing >= 0) {
      const old = this.foundOffset;
      const o4 = old >>> 2;
      if (this.u32[o4 + 3] === size && (this.u32[o4] & HAS_TTL) === (expiresAt > 0 ? HAS_TTL : 0)) {
        // Same footprint and the key at the same place (a TTL field moves
        // it): rewrite the header and value in place. The record is in cache
        // (the lookup just read it) while the head of the ring usually is
        // not, and the entry keeps its dictionary slot. A set counts as a use.
        meta[M_LIVE_BYTES] += valueLength - this.u32[o4 + 1];
        this.writeHeader(old, keyLength, keyKind, hash, valueKind, valueLength, expiresAt, size);
        this.writeValue(old, keyLength, expiresAt > 0, value, valueLength);
        this.table[2 * existing + 1] = (hash & TAG_MASK) | 1;
        return;
      }
      this.killRecord(old);
      this.removeSlot(existing);
      meta[M_COUNT]--;
    }
    this.relocationBudget = RELOCATION_BUDGET;
    if (this.globalMax > 0) {
      // Evict until the insert leaves the cache at max: also takes back an
      // overshoot left by inserts that raced in other shards.
      for (let excess = this.totalEntries() - this.globalMax + 1; excess > 0 && meta[M_COUNT] > 0; excess--) this.evictOne();
    }
    while (meta[M_COUNT] >= this.maxEntries) this.reclaimTail(0, false);
    const offset = this.allocate(size);
    this.writeRecord(offset, key, keyLength, keyKind, hash, valueKind, value, valueLength, expiresAt, size);
    const head = offset + size;
    meta[M_HEAD] = head === this.regionBytes ? 0 : head;
    meta[M_USED] += size;
    meta[M_COUNT]++;
    meta[M_LIVE_BYTES] += keyLength + valueLength;
    meta[M_LIVE_RECORD_BYTES] += size;
    this.insertSlot(hash, offset);
  }

  writeRecord(offset, key, keyLength, keyKind, hash, valueKind, value, valueLength, expiresAt, size) {
    this.writeHeader(offset, keyLength, keyKind, hash, valueKind, valueLength, expiresAt, size);
    const u8 = this.u8;
    const keyStart = offset + RECORD_HEADER_BYTES + (expiresAt > 0 ? TTL_BYTES : 0);
    // `key` is the cache's own scratch buffer (see KeyEncoder), never a
    // user object whose methods could run under the lock.
    if (keyLength <= 64) {
      for (let j = 0; j < keyLength; j++) u8[keyStart + j] = key[j];
    } else {
      u8.set(key.subarray(0, keyLength), keyStart);
    }
    this.writeValue(offset, keyLength, expiresAt > 0, value, valueLength);
  }

  writeHeader(offset, keyLength, keyKind, hash, valueKind, valueLength, expiresAt, size) {
    const o4 = offset >>> 2;
    const u32 = this.u32;
    const hasTtl = expiresAt > 0;
    u32[o4] = (keyLength << 16) | (valueKind << VALUE_KIND_SHIFT) | (keyKind << KEY_KIND_SHIFT) | (hasTtl ? HAS_TTL : 0) | TYPE_LIVE;
    u32[o4 + 1] = valueLength;
    u32[o4 + 2] = hash;
    u32[o4 + 3] = size;
    if (hasTtl) this.f64[(offset >>> 3) + 2] = expiresAt;
  }

  writeValue(offset, keyLength, hasTtl, value, valueLength) {
    const valueStart = offset + RECORD_HEADER_BYTES + (hasTtl ? TTL_BYTES : 0) + ((keyLength + 3) & ~3);
    if (typeof value === 'string') this.bytes.utf8Write(value, valueStart, valueLength);
    else this.u8.set(value, valueStart);
  }

  /**
   * Entries in all shards. The other shards' counts are read without their
   * locks: with several threads inserting at once the cache can exceed
   * `max` by at most one entry per such thread, until the next insert.
   */
  totalEntries() {
    const all = this.allMeta;
    const stride = SHARD_META_BYTES / 4;
    let total = 0;
    for (let i = 0; i < this.shardCount; i++) total += all[i * stride + M_COUNT];
    return total;
  }

  /** Evicts one live entry from the tail (second chances allowed within the budget). */
  evictOne() {
    const meta = this.meta;
    const target = meta[M_COUNT] - 1;
    while (meta[M_COUNT] > target) this.reclaimTail(0, false);
  }

  /** Marks the live record at `offset` dead; its space is reclaimed at the tail. */
  killRecord(offset) {
    const o4 = offset >>> 2;
    const flags = this.u32[o4];
    this.u32[o4] = (flags & ~TYPE_MASK) | TYPE_DEAD;
    this.meta[M_LIVE_BYTES] -= (flags >>> 16) + this.u32[o4 + 1];
    this.meta[M_LIVE_RECORD_BYTES] -= this.u32[o4 + 3];
  }

  /** Removes the live record whose slot is `slot` (found by findSlot). */
  removeEntry(slot, offset) {
    this.killRecord(offset);
    this.removeSlot(slot);
    this.meta[M_COUNT]--;
  }

  /**
   * Returns the offset where `size` contiguous bytes start at the head,
   * reclaiming from the tail until they are free. Writes a PAD record when
   * the head has to wrap to the start of the region.
   */
  allocate(size) {
    const meta = this.meta;
    const regionBytes = this.regionBytes;
    for (;;) {
      const used = meta[M_USED];
      if (used === 0) return 0;
      const head = meta[M_HEAD];
      const tail = meta[M_TAIL];
      if (tail < head) {
        // Not wrapped: records fill [tail, head); free space is after head and before tail.
        if (regionBytes - head >= size) return head;
        if (tail >= size) {
          this.u32[head >>> 2] = TYPE_PAD;
          meta[M_USED] = used + (regionBytes - head);
          meta[M_HEAD] = 0;
          return 0;
        }
      } else if (tail - head >= size) {
        // Wrapped (or exactly full when head === tail): free space is [head, tail).
        return head;
      }
      this.reclaimTail(size, true);
    }
  }

  /**
   * Frees the record at the tail: skips dead and padding space, evicts a live
   * record, or gives it a second chance by moving it to the head.
   * @param {number} need bytes the caller is trying to free (for compaction)
   * @param {boolean} mayCompact whether an unmarked live record may be moved
   *   instead of evicted when the ring is mostly dead space
   */
  reclaimTail(need, mayCompact) {
    const meta = this.meta;
    const u32 = this.u32;
    const regionBytes = this.regionBytes;
    const tail = meta[M_TAIL];
    const o4 = tail >>> 2;
    const flags = u32[o4];
    const type = flags & TYPE_MASK;
    let size;
    if (type === TYPE_PAD) {
      size = regionBytes - tail;
    } else {
      size = u32[o4 + 3];
      if (type === 0 || size < RECORD_HEADER_BYTES || size % 8 !== 0 || tail + size > regionBytes) {
        throw corrupt(this.index, `bad record at offset ${tail} (flags 0x${flags.toString(16)}, size ${size})`);
      }
      if (type === TYPE_LIVE) {
        const slot = this.slotOfRecord(tail, u32[o4 + 2]);
        if (slot < 0) throw corrupt(this.index, `live record at offset ${tail} has no dictionary slot`);
        const expired = (flags & HAS_TTL) !== 0 && this.f64[(tail >>> 3) + 2] <= Date.now();
        if (!expired && this.relocationBudget > 0) {
          const marked = (this.table[2 * slot + 1] & 3) !== 0;
          if (marked || (mayCompact && meta[M_LIVE_RECORD_BYTES] + need <= this.compactionLimit)) {
            this.relocationBudget--;
            if (marked) Atomics.and(this.table, 2 * slot + 1, TAG_MASK);
            this.relocateTail(tail, size, slot);
            this.counters[STAT.relocations]++;
            return;
          }
        }
        this.removeEntry(slot, tail);
        this.counters[expired ? STAT.expirations : STAT.evictions]++;
      }
    }
    const used = meta[M_USED] - size;
    meta[M_USED] = used;
    if (used === 0) {
      meta[M_HEAD] = 0;
      meta[M_TAIL] = 0;
    } else {
      meta[M_TAIL] = tail + size === regionBytes ? 0 : tail + size;
    }
  }

  /** Moves the live record at the tail to the head (used stays the same). */
  relocateTail(tail, size, slot) {
    const meta = this.meta;
    const regionBytes = this.regionBytes;
    let head = meta[M_HEAD];
    if (tail < head && regionBytes - head < size) {
      // Not wrapped and no room before the end: pad the end and wrap the head.
      this.u32[head >>> 2] = TYPE_PAD;
      meta[M_USED] += regionBytes - head;
      head = 0;
    }
    // The destination is free space, possibly overlapping the record itself
    // (copyWithin moves like memmove); when head === tail it stays in place.
    if (head !== tail) this.u8.copyWithin(head, tail, tail + size);
    this.table[2 * slot] = head / 8 + 1;
    head += size;
    meta[M_HEAD] = head === regionBytes ? 0 : head;
    meta[M_TAIL] = tail + size === regionBytes ? 0 : tail + size;
  }

  /** Drops every entry of the shard (clear, or repair after a dead holder). */
  reset() {
    this.table.fill(0);
    const meta = this.meta;
    meta[M_COUNT] = 0;
    meta[M_HEAD] = 0;
    meta[M_TAIL] = 0;
    meta[M_USED] = 0;
    meta[M_LIVE_BYTES] = 0;
    meta[M_LIVE_RECORD_BYTES] = 0;
  }

  get sequence() {
    return Atomics.load(this.meta, M_SEQ);
  }
}

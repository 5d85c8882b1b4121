// Shard: one lock, one dictionary, one or two rings of records, and the
// shard's eviction policy.
//
// The dictionary is open addressing with linear probing. A slot is two u32
// words: the record's offset in the shard's region (in 8-byte units, plus
// one, so 0 means empty) and the key's hash with its low four bits replaced
// by the entry's frequency, which readers raise (see policies.js). Deletion
// shifts the following slots back instead of leaving tombstones, so probe
// chains never rot.
//
// Records live in rings (ring.js): the main ring, and for the hybrid policy a
// small ring at the start of the region. A record's offset tells its ring.
// Variable-length records mean a 64-byte value takes 64 bytes plus a
// 24-byte header and its key, not a whole block.
//
// Methods that change anything must be called with the shard's lock held.
// findSlot() and the record readers are also used by optimistic readers, who
// may see half-written data: they bound every index and let the sequence
// check throw the result away.
//
// What a lookup found reaches the caller in the FoundEntry it hands in
// (record-stamp.js), and a store returns the slot it wrote (Arena.set()
// describes that record in the caller's): never in fields of the shard
// read after the call.

import { ArenaCacheError, codes } from '../../errors.js';
import {
  ASCII_TEXT,
  HAS_STALE,
  HAS_TTL,
  KEY_MATCH_MASK,
  keyWord,
  paddedKeyBytes,
  recordFlags,
  recordKeyStart,
  recordTimeBytes,
  RECORD_HEADER_BYTES,
  REWRITING,
  sealRecord,
  STAMP_F64,
  textFlag,
  timeBytesFor,
  TYPE_DEAD,
  TYPE_MASK,
  writeTimes,
} from './record.js';
import { GHOST_SLOT_BYTES, H32_SHARD_COUNTS, PUBLISHED_COUNT_SHARDS, SHARD_META_BYTES, slotGroupsPerShard } from '../common/layout.js';
import { createPolicy, FREQUENCY_MASK, TAG_MASK } from './policies.js';
import { GhostTable } from './ghost-table.js';
import { Ring, RING_MAIN, RING_SMALL } from './ring.js';
import { M64_WRITE_STAMP, M_AGING_CURSOR, M_COUNT, M_LIVE_BYTES, M_MOVE_FROM, M_RANDOM, M_RESETTING, M_SWEEP_CURSOR, M_TTL_COUNT, M_UNDO_AT } from '../common/shard-meta.js';
import { rebuildShard } from './rebuild.js';
import { verifyShard } from './verify.js';
import { hashStart } from './hash.js';
import { STAT } from '../common/thread-stats.js';
import { isSoundWriteCount, MAX_WRITE_STAMP, restartedWriteCount } from './write-count.js';
import { publishRepair } from '../common/repair-channel.js';
import { FoundEntry } from './record-stamp.js';

/** Records moved per store at most: bounds the time a writer holds the lock. */
const RELOCATION_BUDGET = 64;
export { MAX_WRITE_STAMP };
/**
 * Bytes of records an insert may move round its rings (second chances,
 * compaction), in laps of the region: compaction frees an eighth of a ring
 * per lap (see policies.js) and second chances are bounded by the relocation
 * budget, so an insert needs about one lap. More means counts that no
 * longer match the rings (a ring's live bytes far below its records, say),
 * which would otherwise move records round the ring forever under the lock.
 */
const TAIL_LAPS = 4;

export class Shard {
  /**
   * @param {SharedArrayBuffer} buffer
   * @param {ReturnType<import('../common/layout.js').computeLayout>} layout the header
   * @param {number} index
   * @param {Float64Array} counters this thread's counter slot
   * @param {import('./clock.js').Clock} clock
   */
  constructor(buffer, layout, index, counters, clock) {
    const regionBytes = layout.regionBytes;
    const dataOffset = layout.dataOffset + index * regionBytes;
    this.index = index;
    /** A cache shard (not a block store stripe, which shares ShardLock): see repair-channel.js. */
    this.isCacheShard = true;
    this.counters = counters;
    /** The hash start states of string and byte keys (a rebuild checks every record's key against its hash). */
    this.hashStarts = [hashStart(layout.hashSeed, 0), hashStart(layout.hashSeed, 1)];
    this.clock = clock;
    this.meta = new Int32Array(buffer, layout.metaOffset + index * SHARD_META_BYTES, SHARD_META_BYTES / 4);
    this.meta64 = new Float64Array(buffer, layout.metaOffset + index * SHARD_META_BYTES, SHARD_META_BYTES / 8);
    this.slots = layout.slotsPerShard;
    this.table = new Uint32Array(buffer, layout.tablesOffset + index * layout.slotsPerShard * 8, layout.slotsPerShard * 2);
    // home(tag) = floor(tag * slots / 2^32): uses the high hash bits, while the
    // low bits chose the shard. Exact in float64 (see homeOf).
    this.homeScale = layout.slotsPerShard / 4294967296;
    /** The hybrid policy's ghosts and adaptive share (empty for the other policies). */
    this.ghosts = new GhostTable(buffer, layout.ghostsOffset + index * layout.ghostSlotsPerShard * GHOST_SLOT_BYTES, layout.ghostSlotsPerShard, layout.maxEntriesPerShard, layout.max > 0);
    // The slot groups' write counts (see slotChanged): one array over every
    // shard's, so that a near-cache entry finds its group's count with one
    // index, its `groupOf(slot)`.
    const groups = slotGroupsPerShard(layout.slotsPerShard);
    this.groupCount = groups;
    this.groupBase = index * groups;
    this.groupShift = Math.max(0, Math.ceil(Math.log2(layout.slotsPerShard / groups)));
    this.groupWrites = new Float64Array(buffer, layout.writeCountsOffset, layout.shardCount * groups);
    this.regionBytes = regionBytes;
    this.maxEntries = layout.maxEntriesPerShard;
    // `max` bounds the whole cache: inserting counts the entries of all shards.
    this.globalMax = layout.max;
    this.shardCount = layout.shardCount;
    this.allMeta = new Int32Array(buffer, layout.metaOffset, (layout.shardCount * SHARD_META_BYTES) / 4);
    /** Every shard's published count (see totalEntries), or null: no `max`, or too many shards. */
    this.counts = layout.max > 0 && layout.shardCount <= PUBLISHED_COUNT_SHARDS ? new Int32Array(buffer, H32_SHARD_COUNTS * 4, layout.shardCount) : null;
    /** Whether records end with a checksum (see recordChecksum): file-backed caches. */
    this.checksums = layout.recordChecksums === 1;
    this.u8 = new Uint8Array(buffer, dataOffset, regionBytes);
    this.u32 = new Uint32Array(buffer, dataOffset, regionBytes / 4);
    this.i32 = new Int32Array(buffer, dataOffset, regionBytes / 4);
    this.f64 = new Float64Array(buffer, dataOffset, regionBytes / 8);
    this.bytes = Buffer.from(buffer, dataOffset, regionBytes);
    this.small = new Ring(this, RING_SMALL, 0, layout.smallRingBytes);
    this.main = new Ring(this, RING_MAIN, layout.smallRingBytes, regionBytes - layout.smallRingBytes);
    this.policy = createPolicy(layout.policyName, this);
    /** Frequency readers may raise an entry to (0: readers never write). */
    this.maxFrequency = this.policy.maxFrequency;
    /** lru: a read counts only once the record is in the older half of the main ring (see policies.js). */
    this.marksOlderHalfOnly = this.policy.marksOlderHalfOnly === true;
    /** The key buffer findSlot() saw last, and a word view of it (see wordsOf). */
    this.keyBytes = null;
    this.keyWords = null;
    this.relocationBudget = 0;
    /** Bytes of records the current insert may still move round its rings (see TAIL_LAPS and Ring.recycleTail). */
    this.tailBudget = TAIL_LAPS * regionBytes;
    /**
     * The counter an eviction counts into: STAT.evictions (memory pressure)
     * or STAT.evictionsMax (the entry bound).
     * @type {number}
     */
    this.evictionCause = STAT.evictions;
  }

  get count() {
    return this.meta[M_COUNT];
  }

  /** Entries this shard holds when full by count: its share of `max`, or its dictionary bound. */
  entryCapacity() {
    return this.globalMax > 0 ? Math.min(this.maxEntries, this.globalMax / this.shardCount) : this.maxEntries;
  }

  corrupt(what) {
    return new ArenaCacheError(codes.ERR_ARENA_CORRUPT, `arena shard ${this.index} is corrupt: ${what}`);
  }

  /** The index in `groupWrites` of the write count of dictionary slot `slot`'s group. */
  groupOf(slot) {
    return this.groupBase + (slot >>> this.groupShift);
  }

  /**
   * Advances the write count of `slot`'s group: called, with the lock held,
   * whenever the slot's words or the record it points at change, so that a
   * near-cache entry of a key in the group checks its slot and record again
   * (see RecordStamp). The count only grows, so it cannot come back to a
   * value a reader noted.
   */
  slotChanged(slot) {
    this.groupWrites[this.groupOf(slot)]++;
  }

  homeOf(tag) {
    return Math.floor((tag >>> 0) * this.homeScale);
  }

  ringOf(offset) {
    return offset < this.small.end ? this.small : this.main;
  }

  /**
   * Finds the slot of the live record whose key is `key[0, keyLength)` with
   * word 0 matching `expectedWord` (see record.keyWord). Returns the slot
   * index, and puts its record's offset in `found.offset`; or returns -1.
   * Safe to call without the lock.
   * @param {FoundEntry} found the caller's
   */
  findSlot(key, keyLength, expectedWord, hash, found) {
    const table = this.table;
    const u32 = this.u32;
    const u8 = this.u8;
    const n = this.slots;
    const tag = hash & TAG_MASK;
    // Keys are compared four bytes at a time (a record's key starts 8-aligned).
    const words = key === this.keyBytes ? this.keyWords : this.wordsOf(key);
    const whole = words === null ? 0 : keyLength >>> 2;
    let i = Math.floor((tag >>> 0) * this.homeScale);
    for (let probes = 0; probes < n; probes++) {
      const w0 = table[2 * i];
      if (w0 === 0) return -1;
      if (((table[2 * i + 1] ^ tag) & TAG_MASK) === 0) {
        const offset = (w0 - 1) * 8;
        const flags = u32[offset >>> 2];
        if (((flags & KEY_MATCH_MASK) >>> 0) === expectedWord) {
          // recordKeyStart(offset, flags), written out: through the call,
          // gets measured 2-3% slower (this loop is every get's and set's).
          const keyStart = offset + RECORD_HEADER_BYTES + ((flags & HAS_TTL) << 1) + ((flags & HAS_STALE) >>> 4);
          const k4 = keyStart >>> 2;
          let w = 0;
          while (w < whole && u32[k4 + w] === words[w]) w++;
          let j = w << 2;
          if (w === whole) while (j < keyLength && u8[keyStart + j] === key[j]) j++;
          if (j === keyLength) {
            found.offset = offset;
            return i;
          }
        }
      }
      if (++i === n) i = 0;
    }
    return -1;
  }

  /**
   * A Uint32Array over the key bytes `key` (a KeyEncoder's scratch buffer,
   * the same one call after call), or null when they are not 4-aligned.
   */
  wordsOf(key) {
    this.keyBytes = key;
    this.keyWords = key.byteOffset % 4 === 0 ? new Uint32Array(key.buffer, key.byteOffset, key.length >>> 2) : null;
    return this.keyWords;
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

  /** Points a free slot at the new record at `offset`; returns the slot. */
  insertSlot(hash, offset, frequency) {
    const table = this.table;
    const n = this.slots;
    const tag = hash & TAG_MASK;
    let i = this.homeOf(tag);
    // The entry bound keeps a slot free; a full table means a damaged shard
    // (and must not become an endless loop).
    for (let probes = 0; table[2 * i] !== 0; probes++) {
      if (probes === n) throw this.corrupt('the dictionary has no free slot');
      if (++i === n) i = 0;
    }
    table[2 * i + 1] = tag | frequency;
    table[2 * i] = offset / 8 + 1;
    this.slotChanged(i);
    return i;
  }

  /** Empties slot `i` and shifts back the entries whose probe ran through it. */
  removeSlot(i) {
    const table = this.table;
    const n = this.slots;
    let j = i;
    for (let probes = 0; ; probes++) {
      if (probes === n) throw this.corrupt('the dictionary has no free slot');
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
        this.slotChanged(i);
        i = j;
      }
    }
    table[2 * i] = 0;
    table[2 * i + 1] = 0;
    this.slotChanged(i);
  }

  frequency(slot) {
    return this.table[2 * slot + 1] & FREQUENCY_MASK;
  }

  /**
   * Sets an entry's frequency; readers may raise it concurrently, so
   * compare-and-swap. A lowered frequency can count uses again: the group's
   * write count tells near caches, which stop marking uses of an entry at
   * its cap (see touchAt).
   */
  setFrequency(slot, frequency) {
    this.slotChanged(slot);
    const table = this.table;
    const word = 2 * slot + 1;
    for (let tries = 0; tries < 4; tries++) {
      const old = table[word];
      if (Atomics.compareExchange(table, word, old, ((old & TAG_MASK) | frequency) >>> 0) === old) return;
    }
  }

  /**
   * A use of the entry in `slot` whose record is at `offset`: raises its
   * frequency up to the policy's cap. Returns
   * false when another touch could not count until the slot's group is next
   * written (the frequency is at its cap; only setFrequency() and moves
   * lower it, and both advance the group's count): a near cache then spares
   * the slot's cache line until its stamp sees a write of the group.
   */
  touchAt(slot, offset) {
    const table = this.table;
    const word = 2 * slot + 1;
    const old = table[word];
    const frequency = old & FREQUENCY_MASK;
    if (frequency >= this.maxFrequency) return false;
    // Not counted yet, but it will be once the ring has moved on, which
    // writes to other groups do.
    if (this.marksOlderHalfOnly && !this.main.inOlderHalf(offset)) return true;
    return Atomics.compareExchange(table, word, old, old + 1) !== old || frequency + 1 < this.maxFrequency;
  }

  /**
   * Stores `entry` under `key` (see arena.js for both), replacing any record
   * of the same key, evicting as needed. Returns the slot of the record it
   * wrote.
   * @param {import('./arena.js').EncodedKey} key
   * @param {import('./arena.js').EntryToStore} entry
   * @param {FoundEntry} [probe] the caller's record for the key's lookup
   */
  store(key, entry, probe = new FoundEntry()) {
    const existing = this.findSlot(key.bytes, key.length, keyWord(key.length, key.kind), key.hash, probe);
    return this.storeFound(existing, probe.offset, key, entry);
  }

  /**
   * store() once the key's lookup is done: `existing` is its slot (-1: none)
   * and `old` its record's offset, from a lookup that no write of the shard
   * has followed. Returns the slot of the record it wrote.
   */
  storeFound(existing, old, key, entry) {
    if (existing < 0) return this.insert(null, 0, key, entry);
    const o4 = old >>> 2;
    const u32 = this.u32;
    if (u32[o4 + 3] === entry.size && recordTimeBytes(u32[o4]) === timeBytesFor(entry.expiresAt, entry.staleAt)) {
      return this.rewrite(existing, old, key, entry);
    }
    // A new version of an existing entry stays where the entry was, with
    // its frequency (plus this use).
    const ring = this.ringOf(old);
    const frequency = Math.min(this.frequency(existing) + 1, this.maxFrequency);
    this.removeEntry(existing, old);
    return this.insert(ring, frequency, key, entry);
  }

  /**
   * Rewrites the live record at `offset` (dictionary slot `slot`) in place:
   * the caller checked that the new version has the same size and the key at
   * the same place (a TTL field moves it). The record is in cache (the lookup
   * just read it) while the head of the ring usually is not, and the entry
   * keeps its slot; its key, hash and size stay as they are. A set counts as
   * a use.
   */
  rewrite(slot, offset, key, entry) {
    const u32 = this.u32;
    const o4 = offset >>> 2;
    const valueLength = entry.length;
    const expiresAt = entry.expiresAt;
    const staleAt = entry.staleAt;
    this.meta[M_LIVE_BYTES] += valueLength - u32[o4 + 1];
    const flags = recordFlags(key.length, key.kind, entry.kind, expiresAt, staleAt) | textFlag(entry.payload, valueLength);
    // Marked while the value is half old, half new: a holder that dies in
    // between leaves the mark, and the rebuild after it drops the record.
    u32[o4] = flags | REWRITING;
    u32[o4 + 1] = valueLength;
    // The new stamp goes in before the value: a near copy checked meanwhile no longer holds.
    const f64 = this.f64;
    f64[(offset >>> 3) + STAMP_F64] = this.nextWriteStamp();
    writeTimes(f64, offset, expiresAt, staleAt);
    this.writeValue(offset, key.length, flags, entry.payload, valueLength);
    // Sealed by the sizes this writer wrote, never by those read back (see writeRecord).
    if (this.checksums) sealRecord(u32, this.u8, offset, entry.size, recordKeyStart(offset, flags) + paddedKeyBytes(key.length) + valueLength);
    u32[o4] = flags;
    this.slotChanged(slot);
    this.touchAt(slot, offset);
    return slot;
  }

  /**
   * Inserts a new record (the key has none now): in `ring` with `frequency`
   * for a new version of an entry that was there, or (ring null) where the
   * policy places a new entry, after evicting for the entry bounds.
   */
  insert(ring, frequency, key, entry) {
    const meta = this.meta;
    const hash = key.hash;
    const size = entry.size;
    this.relocationBudget = RELOCATION_BUDGET;
    this.tailBudget = TAIL_LAPS * this.regionBytes;
    if (ring === null) {
      this.evictionCause = STAT.evictionsMax;
      let cacheFull = false;
      if (this.globalMax > 0) {
        // Evict until the insert leaves the cache at max: also takes back an
        // overshoot left by inserts that raced in other shards.
        const excess = this.totalEntries() - this.globalMax + 1;
        // Counts read back from shared memory (this shard's and the ones
        // published by the others) bound these loops, which must end even
        // when they no longer match the rings: each eviction frees a slot.
        for (let i = 0; i < excess && meta[M_COUNT] > 0; i++) {
          if (i === this.slots) throw this.countCorrupt();
          this.policy.evictForCount();
        }
        cacheFull = excess > 0;
      }
      for (let evictions = 0; meta[M_COUNT] >= this.maxEntries; evictions++) {
        if (evictions === this.slots) throw this.countCorrupt();
        this.policy.evictForCount();
        cacheFull = true;
      }
      this.evictionCause = STAT.evictions;
      ring = this.policy.place(size, hash, cacheFull, null);
    } else {
      ring = this.policy.place(size, hash, false, ring);
    }
    const offset = ring.allocate(size);
    this.writeRecord(offset, key, entry);
    ring.commit(offset, size);
    meta[M_COUNT]++;
    meta[M_LIVE_BYTES] += key.length + entry.length;
    if (entry.expiresAt > 0) meta[M_TTL_COUNT]++;
    const slot = this.insertSlot(hash, offset, frequency);
    this.publishCount();
    return slot;
  }

  /**
   * The ERR_ARENA_CORRUPT of an entry count that evictions cannot bring
   * down: damaged, or left behind by a writer that lost its lock, it counts
   * entries the rings do not hold.
   */
  countCorrupt() {
    return this.corrupt(`it counts ${this.meta[M_COUNT]} entries, more than evicting can remove (its dictionary has ${this.slots} slots)`);
  }

  writeRecord(offset, key, entry) {
    const flags = this.writeHeader(offset, key, entry);
    const u8 = this.u8;
    const keyStart = recordKeyStart(offset, flags);
    const keyLength = key.length;
    // `key.bytes` is the cache's own scratch buffer (see KeyEncoder), never
    // a user object whose methods could run under the lock.
    const bytes = key.bytes;
    if (keyLength <= 64) {
      for (let j = 0; j < keyLength; j++) u8[keyStart + j] = bytes[j];
    } else {
      u8.set(bytes.subarray(0, keyLength), keyStart);
    }
    this.writeValue(offset, keyLength, flags, entry.payload, entry.length);
    // Sealed by the sizes this writer wrote, not by the header read back: a
    // writer whose lock was taken over (judged dead while it was only
    // stalled) may find another holder's record there, whose lengths could
    // send the checksum up to 2^32 bytes past the region and its last word
    // into another record.
    if (this.checksums) sealRecord(this.u32, u8, offset, entry.size, keyStart + paddedKeyBytes(keyLength) + entry.length);
  }

  /** Writes the record header and time fields; returns word 0. */
  writeHeader(offset, key, entry) {
    const o4 = offset >>> 2;
    const u32 = this.u32;
    const flags = recordFlags(key.length, key.kind, entry.kind, entry.expiresAt, entry.staleAt) | textFlag(entry.payload, entry.length);
    u32[o4] = flags;
    u32[o4 + 1] = entry.length;
    u32[o4 + 2] = key.hash;
    u32[o4 + 3] = entry.size;
    const f64 = this.f64;
    f64[(offset >>> 3) + STAMP_F64] = this.nextWriteStamp();
    writeTimes(f64, offset, entry.expiresAt, entry.staleAt);
    return flags;
  }

  /** A stamp no record of this shard has had (see record.js). */
  nextWriteStamp() {
    const meta64 = this.meta64;
    let stamp = meta64[M64_WRITE_STAMP] + 1;
    // A whole number in range: one rounding and three comparisons, next to
    // the set's cost nothing; a damaged count would stamp every record with it.
    if (!(stamp >= 1 && stamp <= MAX_WRITE_STAMP && Math.floor(stamp) === stamp)) stamp = this.restartWriteStamp() + 1;
    meta64[M64_WRITE_STAMP] = stamp;
    return stamp;
  }

  /**
   * Restarts a damaged write stamp (see write-count.js) in place and
   * returns it: the shard's records keep theirs, which lie below it, so
   * nothing is lost. Counted as a repair of the shard.
   */
  restartWriteStamp() {
    const restarted = restartedWriteCount(this.meta64[M64_WRITE_STAMP]);
    this.meta64[M64_WRITE_STAMP] = restarted;
    this.counters[STAT.shardRepairs]++;
    publishRepair(this.index, 'corrupt', 0);
    return restarted;
  }

  writeValue(offset, keyLength, flags, value, valueLength) {
    const valueStart = recordKeyStart(offset, flags) + paddedKeyBytes(keyLength);
    if (typeof value !== 'string') {
      if (typeof value === 'number') this.f64[valueStart >>> 3] = value;
      else this.u8.set(value, valueStart);
    }
    // All ASCII (see textFlag): its UTF-8 bytes are its Latin-1 bytes, which
    // V8 writes faster.
    // @ts-expect-error latin1Write: Node's internal Buffer method (not in @types/node), write() without its argument checks
    else if ((flags & ASCII_TEXT) !== 0) this.bytes.latin1Write(value, valueStart, valueLength);
    // @ts-expect-error utf8Write: Node's internal Buffer method (not in @types/node), write() without its argument checks
    else this.bytes.utf8Write(value, valueStart, valueLength);
  }

  /**
   * Entries in all shards. The other shards' counts are read without their
   * locks: with several threads inserting at once the cache can exceed
   * `max` by at most one entry per such thread, until the next insert.
   */
  totalEntries() {
    const counts = this.counts;
    const n = this.shardCount;
    let total = 0;
    if (counts !== null) {
      // Other shards' meta lines hold their locks, which their writers keep
      // moving between cores; the published counts change only when a
      // shard's count does (an insert that evicts one entry changes none).
      for (let i = 0; i < n; i++) total += counts[i];
      return total - counts[this.index] + this.meta[M_COUNT];
    }
    const all = this.allMeta;
    const stride = SHARD_META_BYTES / 4;
    for (let i = 0; i < n; i++) total += all[i * stride + M_COUNT];
    return total;
  }

  /**
   * Publishes this shard's entry count for totalEntries(): at the end of
   * every write that can change it (insert, delete, sweep, reset), so that
   * it lags the count only while the shard's lock is held.
   */
  publishCount() {
    const counts = this.counts;
    if (counts !== null && counts[this.index] !== this.meta[M_COUNT]) counts[this.index] = this.meta[M_COUNT];
  }

  /**
   * Removes the live record at `offset` whose slot is `slot`: marks it dead
   * (its space is reclaimed when its ring's tail reaches it) and frees the slot.
   */
  removeEntry(slot, offset) {
    const o4 = offset >>> 2;
    const flags = this.u32[o4];
    const size = this.u32[o4 + 3];
    this.u32[o4] = (flags & ~TYPE_MASK) | TYPE_DEAD;
    const meta = this.meta;
    meta[M_LIVE_BYTES] -= (flags >>> 16) + this.u32[o4 + 1];
    if ((flags & HAS_TTL) !== 0) meta[M_TTL_COUNT]--;
    meta[M_COUNT]--;
    this.ringOf(offset).forget(size);
    this.removeSlot(slot);
  }

  /** A random dictionary slot (xorshift32 state in the meta line; writers only). */
  randomSlot() {
    let x = this.meta[M_RANDOM] || 0x9e3779b9;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.meta[M_RANDOM] = x;
    return Math.floor((x >>> 0) * this.homeScale);
  }

  /**
   * A lock holder died inside this shard, in the middle of whatever it was
   * changing: rebuild the shard from its rings, losing only that write
   * (rebuild.js), or reset it when the rings do not add up. With `rebuild`
   * false (after a restart, a file on disk whose records carry no checksums:
   * a machine crash may have written back its pages in part), reset it.
   */
  recoverFromDeadHolder(rebuild = true) {
    if (!rebuild) {
      this.resetDamaged();
      return;
    }
    this.counters[STAT.lostEntries] += rebuildShard(this);
  }

  /**
   * A shard found damaged (it fails verify()): rebuilt from its rings when
   * its records carry checksums, which tell the damaged ones, else reset.
   */
  recoverFromDamage() {
    this.recoverFromDeadHolder(this.checksums);
  }

  /**
   * The check a sole opener left for the shard's first use (see
   * leaveUnchecked in shard-lock.js), with its lock held: verify(), and a
   * shard that fails it repaired as at the opening (recoverFromDamage).
   * Returns whether it was repaired.
   */
  checkAfterRestart() {
    if (verifyShard(this).length === 0) return false;
    this.recoverFromDamage();
    return true;
  }

  /** Drops every entry of a shard found damaged, counting them as lost. */
  resetDamaged() {
    this.counters[STAT.lostEntries] += this.resetLosingAll();
  }

  /** reset(), returning the entries it dropped (as far as the shard's count can be believed). */
  resetLosingAll() {
    const count = this.meta[M_COUNT];
    this.reset();
    return count > 0 ? count : 0;
  }

  /** Advances every slot group's write count: every near-cache entry of the shard is checked again. */
  advanceAllGroups() {
    const groupWrites = this.groupWrites;
    for (let g = this.groupBase; g < this.groupBase + this.groupCount; g++) {
      const writes = groupWrites[g];
      // As verify() judges a count; a damaged one restarts past any count a
      // reader can hold (see write-count.js).
      groupWrites[g] = isSoundWriteCount(writes) && writes < MAX_WRITE_STAMP ? writes + 1 : restartedWriteCount(writes);
    }
  }

  /** Drops every entry of the shard (clear, or repair after damage). */
  reset() {
    // Marked until done: a holder that dies meanwhile leaves a clear that
    // the rebuild after it finishes (rebuild.js).
    this.meta[M_RESETTING] = 1;
    this.table.fill(0);
    this.ghosts.clear();
    const meta = this.meta;
    meta[M_COUNT] = 0;
    meta[M_LIVE_BYTES] = 0;
    meta[M_TTL_COUNT] = 0;
    meta[M_SWEEP_CURSOR] = 0;
    meta[M_AGING_CURSOR] = 0;
    // The write stamp goes on (stamps must stay unique), unless damaged:
    // then it restarts past any stamp a reader can hold (see write-count.js).
    const stamp = this.meta64[M64_WRITE_STAMP];
    if (!(isSoundWriteCount(stamp) && stamp < MAX_WRITE_STAMP)) this.meta64[M64_WRITE_STAMP] = restartedWriteCount(stamp);
    // Every group changed; a damaged count restarts the same way.
    this.advanceAllGroups();
    this.main.reset();
    this.small.reset();
    this.publishCount();
    this.meta[M_MOVE_FROM] = 0;
    this.meta[M_UNDO_AT] = 0;
    this.meta[M_RESETTING] = 0;
  }
}

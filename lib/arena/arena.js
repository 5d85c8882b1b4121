// Arena: the shards of one shared buffer, seen from one thread.
//
// Keys arrive here as bytes with their kind and hash (lib/cache does the
// encoding); values as raw bytes or a string. Readers never take a lock:
// they read a shard's sequence, look up and copy the value, and read the
// sequence again; if a writer came in between they retry, and after a few
// failed tries they read under the lock (so a reader always finishes).

import { ArenaCacheError, codes } from '../errors.js';
import { hashStart } from './hash.js';
import { HEADER_BYTES, readHeader, writeHeader } from './layout.js';
import {
  HAS_TTL,
  KEY_KIND_SHIFT,
  KEY_STRING,
  RECORD_HEADER_BYTES,
  TTL_BYTES,
  TYPE_LIVE,
  VALUE_KIND_SHIFT,
  VALUE_UTF8,
} from './record.js';
import { M_COUNT, M_LIVE_BYTES, M_USED, Shard } from './shard.js';
import { M_SEQ, ShardLock } from './shard-lock.js';
import { ValuePool } from './value-pool.js';
import { verifyShard } from './verify.js';
import { claimThreadSlot, STAT, sumThreadSlots } from './thread-stats.js';

/** Optimistic read attempts before a reader takes the lock. */
const OPTIMISTIC_ATTEMPTS = 4;

const EXPIRED = Symbol('expired');
const TORN = Symbol('torn');

export class Arena {
  /** Allocates a new arena in a SharedArrayBuffer. */
  static create(layout, settings) {
    let buffer;
    try {
      buffer = new SharedArrayBuffer(layout.memoryBytes);
    } catch (cause) {
      throw new ArenaCacheError(
        codes.ERR_ARENA_ALLOC,
        `could not allocate ${layout.memoryBytes} bytes of shared memory (${cause.message}); lower options.memoryBytes`,
        { cause },
      );
    }
    writeHeader(buffer, layout, settings);
    return new Arena(buffer, readHeader(buffer));
  }

  /** Attaches to an existing arena buffer after validating its header. */
  static attach(buffer) {
    return new Arena(buffer, readHeader(buffer));
  }

  constructor(buffer, header) {
    this.buffer = buffer;
    this.header = header;
    const claim = claimThreadSlot(buffer, header);
    this.counters = claim.counters;
    this.sharedStatsSlot = claim.shared;
    this.lock = new ShardLock({ leaseMs: header.lockLeaseMs, counters: claim.counters, tid: claim.tid });
    this.shards = [];
    for (let i = 0; i < header.shardCount; i++) this.shards.push(new Shard(buffer, header, i, claim.counters));
    this.shardMask = header.shardCount - 1;
    this.stringHashStart = hashStart(header.hashSeed, 0);
    this.bytesHashStart = hashStart(header.hashSeed, 1);
    /** Kind of the value get() returned last (VALUE_RAW, VALUE_UTF8 or VALUE_CODEC). */
    this.valueKind = 0;
    this.values = new ValuePool();
  }

  /**
   * Looks up a key. Returns the value as a Buffer copy or a string (see
   * `valueKind`), or undefined on a miss or an expired entry.
   */
  get(key, keyLength, keyKind, hash) {
    const shard = this.shards[hash & this.shardMask];
    const meta = shard.meta;
    const expected = ((keyLength << 16) | (keyKind << KEY_KIND_SHIFT) | TYPE_LIVE) >>> 0;
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      // A plain read suffices here: a stale (older) value can only cause a
      // needless retry. The second read must be ordered after the copy.
      const seq = meta[M_SEQ];
      if ((seq & 1) !== 0) {
        this.lock.waitWhileHeld(shard, seq);
        continue;
      }
      const slot = shard.findSlot(key, keyLength, expected, hash);
      const value = slot < 0 ? undefined : this.readValue(shard, shard.foundOffset);
      if (Atomics.load(meta, M_SEQ) !== seq) {
        this.counters[STAT.readRetries]++;
        continue;
      }
      return this.finishRead(shard, slot, value, key, keyLength, keyKind, hash);
    }
    const held = this.lock.acquire(shard);
    let slot;
    let value;
    try {
      slot = shard.findSlot(key, keyLength, expected, hash);
      value = slot < 0 ? undefined : this.readValue(shard, shard.foundOffset);
    } finally {
      this.lock.releaseUnchanged(shard, held);
    }
    return this.finishRead(shard, slot, value, key, keyLength, keyKind, hash);
  }

  finishRead(shard, slot, value, key, keyLength, keyKind, hash) {
    if (slot < 0) {
      this.counters[STAT.misses]++;
      return undefined;
    }
    if (value === EXPIRED) {
      this.counters[STAT.misses]++;
      this.removeIfExpired(key, keyLength, keyKind, hash);
      return undefined;
    }
    if (value === TORN) throw this.corruptRecord(shard);
    // Mark the entry as recently used; skip the atomic when it already is.
    const word = 2 * slot + 1;
    if ((shard.table[word] & 1) === 0) Atomics.or(shard.table, word, 1);
    this.counters[STAT.hits]++;
    return value;
  }

  /** Reads the value of the record at `offset`: a Buffer copy, a string, EXPIRED or TORN. */
  readValue(shard, offset) {
    const u32 = shard.u32;
    const o4 = offset >>> 2;
    const flags = u32[o4];
    const valueLength = u32[o4 + 1];
    let valueStart = offset + RECORD_HEADER_BYTES + (((flags >>> 16) + 3) & ~3);
    if ((flags & HAS_TTL) !== 0) {
      if (shard.f64[(offset >>> 3) + 2] <= Date.now()) return EXPIRED;
      valueStart += TTL_BYTES;
    }
    // Only a torn read (or a damaged arena) can point outside the region.
    if (!(valueStart + valueLength <= shard.regionBytes)) return TORN;
    const kind = (flags >>> VALUE_KIND_SHIFT) & 3;
    this.valueKind = kind;
    if (kind === VALUE_UTF8) return shard.bytes.utf8Slice(valueStart, valueStart + valueLength);
    return this.copyOut(shard, valueStart, valueLength);
  }

  /** A private Buffer copy of `length` bytes at word-aligned `start`. */
  copyOut(shard, start, length) {
    return this.values.copy(shard.i32, shard.u8, start, length);
  }

  /** Whether a live, unexpired entry exists (does not mark it as used). */
  has(key, keyLength, keyKind, hash) {
    const shard = this.shards[hash & this.shardMask];
    const meta = shard.meta;
    const expected = ((keyLength << 16) | (keyKind << KEY_KIND_SHIFT) | TYPE_LIVE) >>> 0;
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const seq = meta[M_SEQ];
      if ((seq & 1) !== 0) {
        this.lock.waitWhileHeld(shard, seq);
        continue;
      }
      const slot = shard.findSlot(key, keyLength, expected, hash);
      const found = slot >= 0 && !this.isExpired(shard, shard.foundOffset);
      if (Atomics.load(meta, M_SEQ) === seq) return found;
      this.counters[STAT.readRetries]++;
    }
    const held = this.lock.acquire(shard);
    const slot = shard.findSlot(key, keyLength, expected, hash);
    const found = slot >= 0 && !this.isExpired(shard, shard.foundOffset);
    this.lock.releaseUnchanged(shard, held);
    return found;
  }

  isExpired(shard, offset) {
    return (shard.u32[offset >>> 2] & HAS_TTL) !== 0 && shard.f64[(offset >>> 3) + 2] <= Date.now();
  }

  /**
   * Stores a value. `value` is a Uint8Array, or a string when valueKind is
   * VALUE_UTF8 (then `valueLength` is its UTF-8 length). `size` is
   * recordSize(...) and must not exceed the region (the cache checks).
   */
  set(key, keyLength, keyKind, hash, valueKind, value, valueLength, expiresAt, size) {
    const shard = this.shards[hash & this.shardMask];
    const held = this.lock.acquire(shard);
    try {
      shard.store(key, keyLength, keyKind, hash, valueKind, value, valueLength, expiresAt, size);
    } catch (error) {
      // The shard contradicted itself (see Shard.reclaimTail). Its entries
      // cannot be trusted: drop them, and store into the now empty shard.
      if (error?.code !== codes.ERR_ARENA_CORRUPT) throw error;
      shard.reset();
      this.counters[STAT.shardRepairs]++;
      shard.store(key, keyLength, keyKind, hash, valueKind, value, valueLength, expiresAt, size);
    } finally {
      this.lock.release(shard, held);
    }
    this.counters[STAT.sets]++;
  }

  /** Removes a key; true when a live, unexpired entry was removed. */
  delete(key, keyLength, keyKind, hash) {
    const shard = this.shards[hash & this.shardMask];
    const expected = ((keyLength << 16) | (keyKind << KEY_KIND_SHIFT) | TYPE_LIVE) >>> 0;
    const held = this.lock.acquire(shard);
    const slot = shard.findSlot(key, keyLength, expected, hash);
    if (slot < 0) {
      this.lock.releaseUnchanged(shard, held);
      return false;
    }
    const offset = shard.foundOffset;
    const expired = this.isExpired(shard, offset);
    shard.removeEntry(slot, offset);
    this.lock.release(shard, held);
    this.counters[expired ? STAT.expirations : STAT.deletes]++;
    return !expired;
  }

  /** Removes the entry if it is (still) expired; called after a read found it so. */
  removeIfExpired(key, keyLength, keyKind, hash) {
    const shard = this.shards[hash & this.shardMask];
    const expected = ((keyLength << 16) | (keyKind << KEY_KIND_SHIFT) | TYPE_LIVE) >>> 0;
    const held = this.lock.acquire(shard);
    const slot = shard.findSlot(key, keyLength, expected, hash);
    if (slot >= 0 && this.isExpired(shard, shard.foundOffset)) {
      shard.removeEntry(slot, shard.foundOffset);
      this.counters[STAT.expirations]++;
      this.lock.release(shard, held);
    } else {
      this.lock.releaseUnchanged(shard, held);
    }
  }

  /** Empties every shard, one at a time. */
  clear() {
    for (const shard of this.shards) {
      const held = this.lock.acquire(shard);
      shard.reset();
      this.lock.release(shard, held);
    }
  }

  /** Checks every shard's invariants, one shard lock at a time; returns the problems found. */
  verify() {
    const problems = [];
    for (const shard of this.shards) {
      const held = this.lock.acquire(shard);
      try {
        for (const problem of verifyShard(shard)) problems.push(`shard ${shard.index}: ${problem}`);
      } finally {
        this.lock.releaseUnchanged(shard, held);
      }
    }
    return problems;
  }

  /** Entries currently stored (expired ones not yet reclaimed included). */
  get size() {
    let count = 0;
    for (const shard of this.shards) count += shard.meta[M_COUNT];
    return count;
  }

  /**
   * A consistent copy of one shard's live entries: each as
   * { keyKind, key: Uint8Array, valueKind, value } (value only if wanted).
   */
  snapshotShard(index, withValues) {
    const shard = this.shards[index];
    const meta = shard.meta;
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const seq = meta[M_SEQ];
      if ((seq & 1) !== 0) {
        this.lock.waitWhileHeld(shard, seq);
        continue;
      }
      const entries = this.collect(shard, withValues);
      if (Atomics.load(meta, M_SEQ) === seq && entries !== null) return entries;
      this.counters[STAT.readRetries]++;
    }
    const held = this.lock.acquire(shard);
    try {
      const entries = this.collect(shard, withValues);
      if (entries === null) throw this.corruptRecord(shard);
      return entries;
    } finally {
      this.lock.releaseUnchanged(shard, held);
    }
  }

  collect(shard, withValues) {
    const entries = [];
    const table = shard.table;
    const u32 = shard.u32;
    const now = Date.now();
    for (let i = 0; i < shard.slots; i++) {
      const w0 = table[2 * i];
      if (w0 === 0) continue;
      const offset = (w0 - 1) * 8;
      const o4 = offset >>> 2;
      const flags = u32[o4];
      const keyLength = flags >>> 16;
      const hasTtl = (flags & HAS_TTL) !== 0;
      if (hasTtl && shard.f64[(offset >>> 3) + 2] <= now) continue;
      const keyStart = offset + RECORD_HEADER_BYTES + (hasTtl ? TTL_BYTES : 0);
      const valueStart = keyStart + ((keyLength + 3) & ~3);
      const valueLength = u32[o4 + 1];
      if (!(valueStart + valueLength <= shard.regionBytes)) return null;
      const entry = {
        keyKind: (flags >>> KEY_KIND_SHIFT) & 1,
        key: shard.u8.slice(keyStart, keyStart + keyLength),
        valueKind: (flags >>> VALUE_KIND_SHIFT) & 3,
        value: undefined,
      };
      if (withValues) {
        entry.value =
          entry.valueKind === VALUE_UTF8
            ? shard.bytes.utf8Slice(valueStart, valueStart + valueLength)
            : Buffer.from(shard.u8.slice(valueStart, valueStart + valueLength).buffer);
      }
      entries.push(entry);
    }
    return entries;
  }

  corruptRecord(shard) {
    return new ArenaCacheError(
      codes.ERR_ARENA_CORRUPT,
      `arena shard ${shard.index} is corrupt: a record points outside its region (was the buffer written to directly?)`,
    );
  }

  /** Arena-wide counters and sizes. */
  stats() {
    const totals = sumThreadSlots(this.buffer, this.header);
    let entries = 0;
    let liveBytes = 0;
    let usedBytes = 0;
    for (const shard of this.shards) {
      entries += shard.meta[M_COUNT];
      liveBytes += shard.meta[M_LIVE_BYTES];
      usedBytes += shard.meta[M_USED];
    }
    return { totals, entries, liveBytes, usedBytes };
  }

  hashStartFor(keyKind) {
    return keyKind === KEY_STRING ? this.stringHashStart : this.bytesHashStart;
  }
}

export { HEADER_BYTES };

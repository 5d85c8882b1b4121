// Arena: the shards of one shared buffer, seen from one thread.
//
// Keys arrive here encoded (an EncodedKey, below: lib/cache does the
// encoding); values as an EntryToStore. Readers never take a lock:
// they read a shard's sequence, look up and copy the value, and read the
// sequence again; if a writer came in between they retry, and after a few
// failed tries they read under the lock (so a reader always finishes).
//
// What a lookup found besides the value (the entry's place, its record's
// stamp, freshness and value kind), and what a set() wrote, goes into the
// FoundEntry the caller hands the call (record-stamp.js): the arena keeps
// no "last lookup" for callers to read afterwards.

import { constants } from 'node:buffer';
import { codes } from '../../errors.js';
import { allocateSharedMemory } from '../common/shared-memory.js';
import { hashStart } from './hash.js';
import { H32_VERSION, LAYOUT_VERSION, readHeader, writeHeader } from '../common/layout.js';
import {
  ASCII_TEXT,
  CHECKSUM_BYTES,
  EXPIRY_F64,
  HAS_STALE,
  HAS_TTL,
  KEY_KIND_SHIFT,
  KEY_STRING,
  keyWord,
  paddedKeyBytes,
  recordKeyStart,
  recordSize,
  recordTimeBytes,
  RECORD_HEADER_BYTES,
  STALE_F64,
  STAMP_F64,
  timeBytesFor,
  VALUE_KIND_SHIFT,
  VALUE_NUMBER,
  VALUE_UTF8,
} from './record.js';
import { Clock } from './clock.js';
import { FoundEntry } from './record-stamp.js';
import { Shard } from './shard.js';
import { countUnchecked, isUnchecked, leaveUnchecked, releaseAbandonedLock, sequenceAfter, sequenceBefore, ShardLock } from '../common/shard-lock.js';
import { M_COUNT, M_LIVE_BYTES, M_SEQ } from '../common/shard-meta.js';
import { ValuePool } from './value-pool.js';
import { verifyShard } from './verify.js';
import { claimThreadSlot, releaseThreadSlots, STAT, sumThreadSlots, threadSlotProblems } from '../common/thread-stats.js';
import { publishRepair } from '../common/repair-channel.js';
import { releaseSweeperLease } from './sweep.js';
import { memoryWaiting } from '../common/waiting.js';
import { recoverStructures, structureProblems } from './structures.js';

/**
 * A key as the cache encoded it: the cache's KeyEncoder (see
 * lib/cache/key-encoder.js), one object reused call after call.
 * @typedef {object} EncodedKey
 * @property {Uint8Array} bytes the key is bytes[0, length)
 * @property {number} length
 * @property {number} kind KEY_STRING or KEY_BYTES
 * @property {number} hash
 */

/**
 * A value ready to store: the cache's one reused entry (see SharedCache#prepare).
 * @typedef {object} EntryToStore
 * @property {number} kind VALUE_RAW, VALUE_UTF8 or VALUE_CODEC
 * @property {Uint8Array | string | null} payload the bytes, or for VALUE_UTF8 the string
 * @property {number} length the payload's byte length (UTF-8 for a string)
 * @property {number} expiresAt 0: none
 * @property {number} staleAt 0: none
 * @property {number} size recordSize(...) of the record
 */

/** Strings up to this many bytes are decoded from a reused scratch buffer, longer ones from a copy of their own. */
const TEXT_SCRATCH_MAX = 64 * 1024;
/** Strings up to this many bytes are copied word by word (cheaper than a native call). */
const WORD_COPY_MAX = 128;
/**
 * The longest string V8 makes: an ASCII value (one character per byte) is
 * never longer, so a longer length is a torn read, which latin1Slice would
 * throw at rather than return for the sequence check to discard.
 */
const MAX_TEXT_BYTES = constants.MAX_STRING_LENGTH;
/** Optimistic read attempts before a reader takes the lock. */
const OPTIMISTIC_ATTEMPTS = 4;

// What a lookup found, besides a value.
const MISS = Symbol('miss');
const EXPIRED = Symbol('expired');
const TORN = Symbol('torn');
const FOUND = Symbol('found');
/** The shard's lock was held by a live thread past lockWaitMs (see shard-lock.js): answered as a miss. */
const BUSY = Symbol('busy');
/** Past its stale time, within its expiry time (see record.js): served only to callers that allow stale values. */
const STALE = Symbol('stale');
// What lookup() reads: whether the entry is there (FOUND), its value, or its value even when stale.
const READ_PRESENCE = 0;
const READ_VALUE = 1;
const READ_STALE_VALUE = 2;
// What remove() removes: any entry, only an expired one, or only a stale or expired one.
export const REMOVE_ANY = 0;
const REMOVE_EXPIRED = 1;
export const REMOVE_LAPSED = 2;
// What remove() did.
const NOT_FOUND = 0;
const REMOVED_LIVE = 1;
const REMOVED_EXPIRED = 2;
/** storeLocked(): the key is still to be looked up. */
const NOT_LOOKED_UP = -2;

export class Arena {
  /** Allocates a new arena in a SharedArrayBuffer. */
  static create(layout, settings) {
    return Arena.initialize(allocateSharedMemory(layout.memoryBytes), layout, settings);
  }

  /**
   * Writes a new, empty arena into `buffer` (zeroed memory of at least
   * layout.memoryBytes bytes: a new SharedArrayBuffer or a new mapped file).
   * @param {{ waiting?: object }} [options] see the constructor
   */
  static initialize(buffer, layout, settings, options) {
    writeHeader(buffer, layout, settings);
    const arena = new Arena(buffer, readHeader(buffer), options);
    // Rings start at their base (the main ring does not start at 0 when a
    // small ring precedes it); everything else starts zeroed.
    for (const shard of arena.shards) {
      shard.main.reset();
      shard.small.reset();
    }
    return arena;
  }

  /** Attaches to an existing arena buffer after validating its header. */
  static attach(buffer, options) {
    return new Arena(buffer, readHeader(buffer), options);
  }

  /**
   * @param {SharedArrayBuffer} buffer
   * @param {object} header from readHeader(buffer)
   * @param {{ waiting?: typeof memoryWaiting, truncation?: object, liveness?: object }} [options]
   *   how lock waiters sleep: fileWaiting for a mapped file (shared with
   *   other processes); and for a mapped file, its truncation watch and its
   *   threads' liveness locks (see mapped-options.js)
   */
  constructor(buffer, header, { waiting = memoryWaiting, truncation = null, liveness = null } = {}) {
    this.buffer = buffer;
    this.header = header;
    const claim = claimThreadSlot(buffer, header, liveness);
    /** For a mapped file: the liveness lock of this thread's slot (given back by file-backing.js's releaseMappedArena). */
    this.liveness = liveness;
    this.counters = claim.counters;
    this.threadSlot = claim.slot;
    /** This thread's identity in the arena (for leases and flights). */
    this.owner = claim.owner;
    this.lock = new ShardLock({
      leaseMs: header.lockLeaseMs,
      waitMs: header.lockWaitMs,
      counters: claim.counters,
      ownerId: claim.owner,
      waiting,
      truncation,
      liveness,
    });
    this.clock = new Clock(header.ttlResolution);
    this.shards = [];
    for (let i = 0; i < header.shardCount; i++) this.shards.push(new Shard(buffer, header, i, claim.counters, this.clock));
    this.shardMask = header.shardCount - 1;
    this.stringHashStart = hashStart(header.hashSeed, 0);
    this.bytesHashStart = hashStart(header.hashSeed, 1);
    /**
     * The record of the arena's own lookups, whose findings no caller asks
     * for (has(), inspect(), remove(), a set() without a record): filled
     * and read within one call, which runs no user code.
     */
    this.probe = new FoundEntry();
    this.values = new ValuePool();
    /** Private memory that strings are decoded from (see readUtf8()). */
    this.textScratch = Buffer.allocUnsafeSlow(1024);
    this.textWords = new Int32Array(this.textScratch.buffer, 0, 256);
    /** A private word for the read fence on weakly ordered CPUs (see sequenceAfter). */
    this.fence = new Int32Array(new SharedArrayBuffer(4));
  }

  /**
   * Called by the only process that has a mapped arena open, before anyone
   * else can attach: every lock, lease, flight and thread slot in it belongs
   * to a process that has exited (a restart, or a crash), and damaged
   * counter slots are reset. Shards left locked mid-write are rebuilt from
   * their rings (see rebuild.js) where their damage can be told: with
   * record checksums, or with `rebuildLocked`; otherwise reset. Unless
   * `trustPages`, every other shard is checked too (verify(), and with
   * record checksums every live record's): a machine crash can write back
   * some pages of a shard and not others, so a shard failing the check is
   * repaired the same way. See restart.js for when pages can be trusted.
   * @param {{ rebuildLocked?: boolean, trustPages?: boolean, checkBudgetMs?: number }} [options]
   *   `rebuildLocked` true only where no machine crash can have come
   *   between (a file in memory, or pages trusted); `trustPages` skips the
   *   check of shards not left locked; past `checkBudgetMs` of checking,
   *   the shards left are checked at their first use (see leaveUnchecked)
   * @returns {{ repaired: number, lost: number, checked: number, pending: number }}
   *   shards repaired, entries they lost, shards checked, shards left to check
   */
  recoverAfterRestart({ rebuildLocked = false, trustPages = false, checkBudgetMs = Infinity } = {}) {
    // No process of an older arenacache has the file open now: mark it
    // with this version, which they refuse, before writing what they would misread.
    if (this.header.layoutVersion < LAYOUT_VERSION) {
      new Uint32Array(this.buffer, 0, 4)[H32_VERSION] = LAYOUT_VERSION;
      this.header.layoutVersion = LAYOUT_VERSION;
    }
    const lostAtStart = this.counters[STAT.lostEntries];
    const started = performance.now();
    let repaired = 0;
    let checked = 0;
    let pending = 0;
    for (const shard of this.shards) {
      const lostBefore = this.counters[STAT.lostEntries];
      if (releaseAbandonedLock(shard, rebuildLocked || trustPages || shard.checksums)) {
        this.counters[STAT.lockRecoveries]++;
        repaired++;
        publishRepair(shard.index, 'restart-locked', this.counters[STAT.lostEntries] - lostBefore);
        continue;
      }
      // A machine crash may have written back the meta line and not the
      // header page with the published counts: the meta line decides.
      shard.publishCount();
      if (trustPages) continue;
      if (performance.now() - started > checkBudgetMs) {
        // Checked at its first use, or by the sweeper (see leaveUnchecked):
        // open() does not block the event loop for every shard of a large file.
        leaveUnchecked(shard.meta);
        pending++;
        continue;
      }
      checked++;
      if (verifyShard(shard).length > 0) {
        shard.recoverFromDamage();
        this.counters[STAT.shardRepairs]++;
        repaired++;
        publishRepair(shard.index, 'restart-damaged', this.counters[STAT.lostEntries] - lostBefore);
      }
    }
    releaseThreadSlots(this.buffer, this.header, this.threadSlot);
    // Damaged counter slots are found (and reset) by a sum, as stats() would.
    sumThreadSlots(this.buffer, this.header, this.counters);
    recoverStructures(this.buffer, this.header);
    releaseSweeperLease(this.buffer);
    return { repaired, lost: this.counters[STAT.lostEntries] - lostAtStart, checked, pending };
  }

  /**
   * Checks the first shard a sole opener left to be checked (see
   * leaveUnchecked), if one is left: the sweeper's share of that work, one
   * shard per tick, so that every shard is checked in time even if nothing
   * uses it. Returns whether there was one.
   */
  checkPendingShard() {
    for (const shard of this.shards) {
      const seq = Atomics.load(shard.meta, M_SEQ);
      if ((seq & 1) !== 0 && isUnchecked(shard.meta, seq)) {
        this.lock.checkUnchecked(shard, seq);
        return true;
      }
    }
    return false;
  }

  /** How many shards are still left to be checked (see leaveUnchecked). */
  pendingChecks() {
    return countUnchecked(this.shards);
  }

  /**
   * Looks up a key. Returns the value as a Buffer copy or a string (see
   * `found.valueKind`), or undefined on a miss or an expired or stale
   * entry. With `allowStale`, a stale value too (see record.js): then
   * `found.stale` is true, and the answer counts as a hit and a use. On a
   * hit, `found` holds what the lookup found (its stamp: see
   * FoundEntry.toRecordStamp).
   * @param {EncodedKey} key
   * @param {boolean} allowStale
   * @param {FoundEntry} found the caller's
   */
  get(key, allowStale, found) {
    const shard = this.shards[key.hash & this.shardMask];
    const value = this.lookup(shard, key, allowStale === true ? READ_STALE_VALUE : READ_VALUE, found);
    if (value === MISS || value === STALE || value === BUSY) {
      this.counters[STAT.misses]++;
      return undefined;
    }
    if (value === EXPIRED || value === TORN) {
      this.counters[STAT.misses]++;
      if (value === EXPIRED) this.removeExpired(key);
      else this.repair(shard);
      return undefined;
    }
    // A use for the policy (one compareExchange, only below the policy's cap).
    shard.touchAt(found.slot, found.offset);
    this.counters[STAT.hits]++;
    return value;
  }

  /**
   * The value of a live entry like get(), but neither counted nor marked as
   * used: for peek() and the invalidation bus, which reads version markers
   * to send them. With `allowStale`, also a stale value (`found.stale` says).
   * @param {FoundEntry} found the caller's, filled as by get()
   */
  peek(key, allowStale, found) {
    const value = this.lookup(this.shards[key.hash & this.shardMask], key, allowStale ? READ_STALE_VALUE : READ_VALUE, found);
    return value === MISS || value === EXPIRED || value === TORN || value === STALE || value === BUSY ? undefined : value;
  }

  /** Whether a live, unexpired, not stale entry exists (does not mark it as used). */
  has(key) {
    return this.lookup(this.shards[key.hash & this.shardMask], key, READ_PRESENCE, this.probe) === FOUND;
  }

  /**
   * The facts of a live entry (stale included, expired not) read under its
   * shard's lock, for info(), or null: its value and `valueKind`, its
   * expiry and stale times (0: none), record and value bytes, and where the
   * eviction policy has it (ring and frequency).
   */
  inspect(key) {
    const shard = this.shards[key.hash & this.shardMask];
    const held = this.acquireToRead(shard);
    if (held === BUSY) return null;
    try {
      const found = this.probe;
      const slot = shard.findSlot(key.bytes, key.length, keyWord(key.length, key.kind), key.hash, found);
      if (slot < 0) return null;
      const offset = found.offset;
      const value = this.readValue(shard, offset, READ_STALE_VALUE, found);
      if (value === EXPIRED || value === TORN) return null;
      const o4 = offset >>> 2;
      const flags = shard.u32[o4];
      const f64 = shard.f64;
      return {
        value,
        valueKind: found.valueKind,
        stale: found.stale,
        expiresAt: (flags & HAS_TTL) !== 0 ? f64[(offset >>> 3) + EXPIRY_F64] : 0,
        staleAt: (flags & HAS_STALE) !== 0 ? f64[(offset >>> 3) + STALE_F64] : 0,
        version: f64[(offset >>> 3) + STAMP_F64],
        recordBytes: shard.u32[o4 + 3],
        valueBytes: shard.u32[o4 + 1],
        ring: shard.small.size > 0 && offset < shard.small.end ? 'small' : 'main',
        frequency: shard.frequency(slot),
      };
    } finally {
      this.lock.release(shard, held, false);
    }
  }

  /**
   * Reads an entry without a lock: read the shard's sequence, look up and
   * copy, and read the sequence again; if a writer came in between, retry.
   * After a few failed tries, read under the lock so that a reader always
   * finishes. Returns MISS, EXPIRED, STALE, TORN, FOUND (for `mode`
   * READ_PRESENCE), BUSY (a live thread held the lock past lockWaitMs) or
   * the value; `found` (the caller's) says where the entry is.
   */
  lookup(shard, key, mode, found) {
    const meta = shard.meta;
    const expected = keyWord(key.length, key.kind);
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const seq = sequenceBefore(meta);
      if ((seq & 1) !== 0) {
        if (!this.lock.waitWhileHeld(shard, seq)) return BUSY;
        continue;
      }
      const result = this.readEntry(shard, key, expected, mode, found);
      if (sequenceAfter(meta, this.fence) === seq) return result;
      this.counters[STAT.readRetries]++;
    }
    const held = this.acquireToRead(shard);
    if (held === BUSY) return BUSY;
    try {
      return this.readEntry(shard, key, expected, mode, found);
    } finally {
      this.lock.release(shard, held, false);
    }
  }

  /**
   * The shard's lock for a read, or BUSY where a live holder keeps it past
   * lockWaitMs: a read then answers as a miss rather than throw.
   */
  acquireToRead(shard) {
    try {
      return this.lock.acquire(shard);
    } catch (error) {
      if (error?.code === codes.ERR_ARENA_BUSY) return BUSY;
      throw error;
    }
  }

  /** Removes the key if it is (still) expired; a read's housekeeping, skipped while a live holder keeps the lock. */
  removeExpired(key) {
    try {
      this.remove(key, REMOVE_EXPIRED);
    } catch (error) {
      if (error?.code !== codes.ERR_ARENA_BUSY) throw error;
    }
  }

  readEntry(shard, key, expected, mode, found) {
    const slot = shard.findSlot(key.bytes, key.length, expected, key.hash, found);
    found.shard = shard;
    found.slot = slot;
    if (slot < 0) return MISS;
    if (mode !== READ_PRESENCE) return this.readValue(shard, found.offset, mode, found);
    const offset = found.offset;
    return this.isExpired(shard, offset) ? EXPIRED : this.isStale(shard, offset) ? STALE : FOUND;
  }

  /**
   * Reads the value of the record at `offset`: a Buffer copy, a string,
   * EXPIRED, STALE (unless `mode` is READ_STALE_VALUE: then the value, and
   * `found.stale` is true) or TORN. Fills `found`'s stamp, freshness and
   * value kind (the caller filled its place).
   */
  readValue(shard, offset, mode, found) {
    const u32 = shard.u32;
    const o4 = offset >>> 2;
    const flags = u32[o4];
    const valueLength = u32[o4 + 1];
    let valueStart = offset + RECORD_HEADER_BYTES + paddedKeyBytes(flags >>> 16);
    const f64 = shard.f64;
    let expiresAt = 0;
    let stale = false;
    if ((flags & HAS_TTL) !== 0) {
      expiresAt = f64[(offset >>> 3) + EXPIRY_F64];
      const now = this.clock.now();
      if (expiresAt <= now) return EXPIRED;
      valueStart += recordTimeBytes(flags);
      if ((flags & HAS_STALE) !== 0) {
        // A private copy holds only while the value is fresh.
        expiresAt = f64[(offset >>> 3) + STALE_F64];
        if (expiresAt <= now) {
          if (mode !== READ_STALE_VALUE) return STALE;
          stale = true;
        }
      }
    }
    found.offset = offset;
    found.stamp = f64[(offset >>> 3) + STAMP_F64];
    found.expiresAt = expiresAt;
    found.stale = stale;
    // Only a torn read (or a damaged arena) can point outside the region.
    if (!(valueStart + valueLength <= shard.regionBytes)) return TORN;
    const kind = (flags >>> VALUE_KIND_SHIFT) & 3;
    found.valueKind = kind;
    if (kind === VALUE_UTF8) {
      // One copy, straight from shared memory, and no decoder that sizes its
      // output by the bytes (see readUtf8): a torn read is a string of the
      // right length and wrong content, which the caller's sequence check
      // discards.
      if ((flags & ASCII_TEXT) !== 0) return valueLength <= MAX_TEXT_BYTES ? shard.bytes.latin1Slice(valueStart, valueStart + valueLength) : TORN;
      return this.readUtf8(shard, valueStart, valueLength);
    }
    // 8-byte aligned (see record.js); a torn read is some number, which the caller's sequence check discards.
    if (kind === VALUE_NUMBER) return f64[valueStart >>> 3];
    return this.copyOut(shard, valueStart, valueLength);
  }

  /**
   * The string of the UTF-8 bytes at word-aligned `start`, decoded from a
   * private copy: V8's decoder reads its input twice (to size the string,
   * then to fill it) and writes past the string's end when the bytes change
   * in between, as a writer in another thread may make them do under an
   * optimistic read (that crashed the process: a torn read must only be a
   * retry). Values marked ASCII_TEXT skip it (see readValue): Latin-1
   * decoding makes one character of each byte, whatever the bytes.
   */
  readUtf8(shard, start, length) {
    if (length > TEXT_SCRATCH_MAX) {
      const copy = Buffer.allocUnsafe(length);
      shard.bytes.copy(copy, 0, start, start + length);
      // @ts-expect-error utf8Slice: Node's internal Buffer method (not in @types/node), the decoder without toString's checks
      return copy.utf8Slice(0, length);
    }
    let scratch = this.textScratch;
    if (scratch.length < length) {
      scratch = Buffer.allocUnsafeSlow(Math.min(TEXT_SCRATCH_MAX, Math.max(length, 2 * scratch.length)));
      this.textScratch = scratch;
      this.textWords = new Int32Array(scratch.buffer, 0, scratch.length >>> 2);
    }
    if (length <= WORD_COPY_MAX) {
      // Whole words: a record's value is word-aligned and padded to 8 bytes.
      const words = this.textWords;
      const i32 = shard.i32;
      const from = start >>> 2;
      const count = (length + 3) >>> 2;
      for (let i = 0; i < count; i++) words[i] = i32[from + i];
    } else {
      shard.bytes.copy(scratch, 0, start, start + length);
    }
    // @ts-expect-error utf8Slice: Node's internal Buffer method (not in @types/node), the decoder without toString's checks
    return scratch.utf8Slice(0, length);
  }

  /**
   * The value of the record at `offset` in stored form (see readValue), or
   * undefined when it is expired, stale (unless `allowStale`) or torn: for
   * atomic-ops.js, with the shard's lock held.
   */
  readStored(shard, offset, allowStale, found) {
    const value = this.readValue(shard, offset, allowStale ? READ_STALE_VALUE : READ_VALUE, found);
    return value === EXPIRED || value === STALE || value === TORN ? undefined : value;
  }

  /**
   * Fills `entry` to write the value of the record at `offset` again with
   * the times `expiresAt` and `staleAt` (0: none): its kind, its value in
   * stored form, lengths and record size. False when that record would not
   * fit one of the shard's rings (the lock is held: see atomic-ops.js).
   */
  entryFromRecord(shard, offset, expiresAt, staleAt, entry, found) {
    const payload = this.readStored(shard, offset, true, found);
    if (payload === undefined) return false;
    const o4 = offset >>> 2;
    const length = shard.u32[o4 + 1];
    const size = recordSize(shard.u32[o4] >>> 16, length + (shard.checksums ? CHECKSUM_BYTES : 0), timeBytesFor(expiresAt, staleAt));
    if (size > this.header.regionBytes - this.header.smallRingBytes) return false;
    entry.kind = found.valueKind;
    entry.payload = payload;
    entry.length = length;
    entry.expiresAt = expiresAt;
    entry.staleAt = staleAt;
    entry.size = size;
    return true;
  }

  /** A private Buffer copy of `length` bytes at word-aligned `start`. */
  copyOut(shard, start, length) {
    return this.values.copy(shard.i32, shard.u8, start, length);
  }

  isExpired(shard, offset) {
    return (shard.u32[offset >>> 2] & HAS_TTL) !== 0 && shard.f64[(offset >>> 3) + EXPIRY_F64] <= this.clock.now();
  }

  /** Whether the record at `offset` is past its stale time (see record.js). */
  isStale(shard, offset) {
    return (shard.u32[offset >>> 2] & HAS_STALE) !== 0 && shard.f64[(offset >>> 3) + STALE_F64] <= this.clock.now();
  }

  /**
   * Stores `entry` under `key` (see the types at the top of this file).
   * `entry.size` must not exceed the region (the cache checks). Fills
   * `written`, when given, with the record as this holding of the lock left
   * it (its stamp lets a near cache keep the value: see record-stamp.js).
   * @param {EncodedKey} key
   * @param {EntryToStore} entry
   * @param {FoundEntry | null} [written] the caller's, or null: nobody keeps the value
   */
  set(key, entry, written = null) {
    const shard = this.shards[key.hash & this.shardMask];
    const found = written === null ? this.probe : written;
    // The key is looked up before the lock is taken, as a reader would: the
    // cache misses of the lookup (and, with threads setting the same keys,
    // the moves of the record's lines from another core) then fall outside
    // the critical section, which other writers and readers of the shard
    // wait for. The lookup holds if the lock is taken at the very next
    // sequence value: no write came in between.
    const seq = sequenceBefore(shard.meta);
    const slot = (seq & 1) === 0 ? shard.findSlot(key.bytes, key.length, keyWord(key.length, key.kind), key.hash, found) : -1;
    const offset = found.offset;
    const held = this.lock.acquire(shard);
    try {
      const stored = this.storeLocked(shard, held === ((seq + 1) | 0) ? slot : NOT_LOOKED_UP, offset, key, entry, found);
      // The record as this holding of the lock leaves it (the next holder
      // may change it): its place, stamp and freshness. Written out here, not
      // called: in a call, its size kept findSlot above from being inlined.
      // Skipped when no near cache keeps the value.
      if (written !== null) {
        const at = (shard.table[2 * stored] - 1) * 8;
        written.shard = shard;
        written.slot = stored;
        written.offset = at;
        written.stamp = shard.f64[(at >>> 3) + STAMP_F64];
        written.expiresAt = entry.staleAt > 0 ? entry.staleAt : entry.expiresAt;
      }
    } finally {
      this.lock.release(shard, held);
    }
    this.counters[STAT.sets]++;
  }

  /**
   * shard.store() under the shard's lock, which the caller holds; with
   * `slot` other than NOT_LOOKED_UP, the key's lookup is done (see
   * shard.storeFound). Returns the slot of the record written; `probe` is
   * the record for the key's lookup.
   */
  storeLocked(shard, slot, offset, key, entry, probe) {
    try {
      if (slot === NOT_LOOKED_UP) return shard.store(key, entry, probe);
      return shard.storeFound(slot, offset, key, entry);
    } catch (error) {
      // The shard is empty now: store into it again.
      this.resetAfter(shard, error);
      try {
        return shard.store(key, entry, probe);
      } catch (again) {
        shard.reset();
        throw again;
      }
    }
  }

  /**
   * Stores the entry `produce()` returns (or nothing for null), calling it
   * while the key's shard lock is held: no other write of the shard comes between.
   */
  fill(key, produce) {
    const shard = this.shards[key.hash & this.shardMask];
    const held = this.lock.acquire(shard);
    try {
      const entry = produce();
      if (entry === null) return;
      // After produce(), which runs user code: the arena's record is filled only now.
      this.storeLocked(shard, NOT_LOOKED_UP, 0, key, entry, this.probe);
      this.counters[STAT.sets]++;
    } finally {
      this.lock.release(shard, held);
    }
  }

  /** Removes a key; true when a live, unexpired entry was removed. */
  delete(key) {
    const removed = this.remove(key, REMOVE_ANY);
    if (removed === REMOVED_LIVE) this.counters[STAT.deletes]++;
    return removed === REMOVED_LIVE;
  }

  /**
   * Removes a key under the shard lock; with `only` REMOVE_EXPIRED, only if
   * it has expired (a read found it expired, but a writer may have renewed
   * it since), with REMOVE_LAPSED only if it is stale or expired (fetch()
   * drops a stale value its refresh failed for, not a newer one). Returns
   * NOT_FOUND, REMOVED_LIVE or REMOVED_EXPIRED.
   */
  remove(key, only) {
    const shard = this.shards[key.hash & this.shardMask];
    const held = this.lock.acquire(shard);
    let removed = NOT_FOUND;
    let changed = false;
    try {
      const found = this.probe;
      const slot = shard.findSlot(key.bytes, key.length, keyWord(key.length, key.kind), key.hash, found);
      if (slot >= 0) {
        const offset = found.offset;
        const expired = this.isExpired(shard, offset);
        if (expired || only === REMOVE_ANY || (only === REMOVE_LAPSED && this.isStale(shard, offset))) {
          changed = true;
          shard.removeEntry(slot, offset);
          removed = expired ? REMOVED_EXPIRED : REMOVED_LIVE;
          if (expired) this.counters[STAT.expirations]++;
        }
      }
      shard.publishCount();
    } catch (error) {
      changed = true;
      this.resetAfter(shard, error);
      removed = NOT_FOUND;
    } finally {
      this.lock.release(shard, held, changed);
    }
    return removed;
  }

  /**
   * Called with the lock held when an operation on `shard` threw. A writer
   * that stopped half-way leaves the shard inconsistent, so its entries are
   * dropped whatever the error. A shard that contradicted itself
   * (ERR_ARENA_CORRUPT) is thereby repaired and the caller carries on; any
   * other error is a bug and is rethrown.
   */
  resetAfter(shard, error) {
    const lostBefore = this.counters[STAT.lostEntries];
    shard.resetDamaged();
    this.counters[STAT.shardRepairs]++;
    publishRepair(shard.index, 'corrupt', this.counters[STAT.lostEntries] - lostBefore);
    if (error?.code !== codes.ERR_ARENA_CORRUPT) throw error;
  }

  /** A reader found the shard damaged (a record pointing outside its region): reset it. */
  repair(shard) {
    const held = this.acquireToRead(shard);
    // Held on by a live thread: the next reader after it repairs.
    if (held === BUSY) return;
    const lostBefore = this.counters[STAT.lostEntries];
    shard.resetDamaged();
    this.counters[STAT.shardRepairs]++;
    publishRepair(shard.index, 'damaged', this.counters[STAT.lostEntries] - lostBefore);
    this.lock.release(shard, held);
  }

  /**
   * Empties every shard, one at a time. A shard whose lock a live thread
   * keeps past lockWaitMs is left as it is, the others are emptied, and then
   * the first such shard's ERR_ARENA_BUSY is thrown.
   */
  clear() {
    let busy = null;
    for (const shard of this.shards) {
      let held;
      try {
        held = this.lock.acquire(shard);
      } catch (error) {
        if (error?.code !== codes.ERR_ARENA_BUSY) throw error;
        busy ??= error;
        continue;
      }
      shard.reset();
      this.lock.release(shard, held);
    }
    if (busy !== null) throw busy;
  }

  /** Checks every shard's invariants, one shard lock at a time; returns the problems found. */
  verify() {
    const problems = [...threadSlotProblems(this.buffer, this.header), ...structureProblems(this.buffer, this.header)];
    for (const shard of this.shards) {
      const held = this.acquireToRead(shard);
      if (held === BUSY) {
        problems.push(`shard ${shard.index}: not checked: its lock is held by a live thread past lockWaitMs (${this.lock.waitMs} ms)`);
        continue;
      }
      try {
        for (const problem of verifyShard(shard)) {
          problems.push(`shard ${shard.index}: ${problem}`);
        }
      } finally {
        this.lock.release(shard, held, false);
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
   * A copy of one shard's live entries, read at one instant (for keys() and
   * entries()): each as { keyKind, key: Uint8Array, valueKind, value }
   * (value only if wanted).
   */
  copyShardEntries(index, withValues) {
    const shard = this.shards[index];
    const meta = shard.meta;
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const seq = sequenceBefore(meta);
      if ((seq & 1) !== 0) {
        if (!this.lock.waitWhileHeld(shard, seq)) throw this.lock.busyError(shard, seq, 'its entries were not read');
        continue;
      }
      const entries = this.collect(shard, withValues);
      if (sequenceAfter(meta, this.fence) === seq && entries !== null) return entries;
      this.counters[STAT.readRetries]++;
    }
    const held = this.lock.acquire(shard);
    const entries = this.collect(shard, withValues);
    if (entries === null) {
      const lost = shard.meta[M_COUNT];
      shard.reset();
      this.counters[STAT.shardRepairs]++;
      publishRepair(shard.index, 'damaged', lost);
    }
    this.lock.release(shard, held, entries === null);
    return entries ?? [];
  }

  collect(shard, withValues) {
    return collectEntries(shard, withValues, this.clock.now(), (start, length) => this.readUtf8(shard, start, length));
  }

  /** Arena-wide counters and sizes. */
  stats() {
    return { totals: sumThreadSlots(this.buffer, this.header, this.counters), ...shardSizes(this.shards) };
  }

  hashStartFor(keyKind) {
    return keyKind === KEY_STRING ? this.stringHashStart : this.bytesHashStart;
  }
}

/** The entries, live bytes, used bytes and small-ring entries of `shards`, summed (read as they are, without a lock). */
export function shardSizes(shards) {
  let entries = 0;
  let liveBytes = 0;
  let usedBytes = 0;
  let smallEntries = 0;
  let smallShare = 0;
  for (const shard of shards) {
    entries += shard.meta[M_COUNT];
    liveBytes += shard.meta[M_LIVE_BYTES];
    usedBytes += shard.main.used + shard.small.used;
    smallEntries += shard.small.count;
    smallShare += shard.ghosts.shareOfEntries;
  }
  return { entries, liveBytes, usedBytes, smallEntries, smallShare: smallShare / shards.length };
}

/**
 * The live entries of `shard` (expired and stale ones left out, as get()
 * misses them), as { keyKind, key: Uint8Array, valueKind, value } with
 * private copies of the key and (if `withValues`) the value, a Buffer or,
 * through `readText(start, length)`, a string; null when a record points
 * outside the region (a torn read, or damage). Reads only: the caller makes
 * it one instant of the shard (a lock, or a sequence check).
 */
export function collectEntries(shard, withValues, now, readText) {
  const entries = [];
  const table = shard.table;
  const u32 = shard.u32;
  for (let i = 0; i < shard.slots; i++) {
    const w0 = table[2 * i];
    if (w0 === 0) continue;
    const offset = (w0 - 1) * 8;
    const o4 = offset >>> 2;
    const flags = u32[o4];
    const keyLength = flags >>> 16;
    // Expired and stale entries are left out, as get() misses them.
    if ((flags & HAS_TTL) !== 0 && shard.f64[(offset >>> 3) + EXPIRY_F64] <= now) continue;
    if ((flags & HAS_STALE) !== 0 && shard.f64[(offset >>> 3) + STALE_F64] <= now) continue;
    const keyStart = recordKeyStart(offset, flags);
    const valueStart = keyStart + paddedKeyBytes(keyLength);
    const valueLength = u32[o4 + 1];
    if (!(valueStart + valueLength <= shard.regionBytes)) return null;
    const entry = {
      keyKind: (flags >>> KEY_KIND_SHIFT) & 1,
      key: shard.u8.slice(keyStart, keyStart + keyLength),
      valueKind: (flags >>> VALUE_KIND_SHIFT) & 3,
      value: undefined,
    };
    if (withValues) {
      const kind = entry.valueKind;
      entry.value =
        kind === VALUE_UTF8
          ? readText(valueStart, valueLength)
          : kind === VALUE_NUMBER
            ? shard.f64[valueStart >>> 3]
            : Buffer.from(shard.u8.slice(valueStart, valueStart + valueLength).buffer);
    }
    entries.push(entry);
  }
  return entries;
}

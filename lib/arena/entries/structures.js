// The codec structure region: msgpackr's record structures (the key names of
// an object shape), shared by every thread and process attached to the
// arena, so that objects are stored without their own definition and decoded
// with readers compiled once per shape and instance.
//
//   [region header 64 B: head, used][record][record]...
//
//   record  u32 length (bytes, header included, a multiple of 8)
//           u32 prev (offset of the record published before it; 0: none)
//           u32 first (how many structures come before it)
//           u32 count (structures in it)
//           u32 checksum (FNV-1a of the record without this word)
//           u32 payload bytes
//           payload: per structure u16 key count, then per key u16 byte
//           length and its UTF-8
//
// Append-only and without a lock: an appender reserves space by moving
// `used` forward (compareExchange), writes its record there, and publishes it
// by moving `head` from the record it read last to the new one
// (compareExchange). Records are immutable once published, and a record is
// reachable only after all its bytes are written. A lost race (another
// record was published meanwhile) leaves the reservation unused: the
// appender reloads and tries again (msgpackr's saveStructures protocol). An
// appender that dies or stalls anywhere in between holds nothing that others
// wait for, and cannot overwrite anything but its own reservation, so there
// is no lock to recover and no holder to fence. Unused reservations are
// lost space; they happen only when two appenders race.
//
// Readers load `head` and follow `prev` back to the record they read last,
// checking every record's bounds, order and checksum before taking any of
// its structures: a damaged region (a stray write, a torn page after a
// machine crash) is noticed, never read as other structures.

import { fnv1aRange, FNV_OFFSET, FNV_PRIME } from './hash.js';

export const STRUCTURES_HEADER_BYTES = 64;
const W_HEAD = 0;
const W_USED = 1;
const RECORD_HEADER_BYTES = 24;
const R_LENGTH = 0;
const R_PREV = 1;
const R_FIRST = 2;
const R_COUNT = 3;
const R_CHECKSUM = 4;
const R_PAYLOAD = 5;
const CHECKSUM_BYTE = R_CHECKSUM * 4;
/** msgpackr's limit for shared record ids (maxSharedStructures). */
export const MAX_STRUCTURES = 8160;
/**
 * The largest structure shared (encoded): an object with more key bytes is
 * more likely a map than a record, and would crowd the region.
 */
const MAX_STRUCTURE_BYTES = 2048;
/** The identity of an empty list of structures (see hashes). */
export const EMPTY_STRUCTURES_HASH = FNV_OFFSET;

// What append() did.
export const APPENDED = 0;
/** Another record was published since this instance read the region last. */
export const STALE = 1;
export const FULL = 2;
export const DAMAGED = 3;

/** A canonical array index: V8 lists such keys first, so an object with one is seen by its first key. */
const ARRAY_INDEX = /^(?:0|[1-9]\d*)$/;

function align8(n) {
  return (n + 7) & ~7;
}

export class StructureRegion {
  /**
   * @param {SharedArrayBuffer} buffer
   * @param {{ structuresOffset: number, structuresBytes: number }} header
   */
  constructor(buffer, { structuresOffset, structuresBytes }) {
    this.bytes = structuresBytes;
    this.u8 = new Uint8Array(buffer, structuresOffset, structuresBytes);
    this.u32 = new Uint32Array(buffer, structuresOffset, structuresBytes >>> 2);
    this.words = new Int32Array(buffer, structuresOffset, STRUCTURES_HEADER_BYTES >>> 2);
    this.text = Buffer.from(buffer, structuresOffset, structuresBytes);
    /** The structures read so far (arrays of key names), in record id order. */
    this.structures = [];
    /**
     * hashes[n] identifies the first n structures (FNV-1a over their encoded
     * form): a value records the one it was encoded with, so that it is never
     * decoded with other structures under the same ids.
     */
    this.hashes = [EMPTY_STRUCTURES_HASH];
    /** The newest record read, and where it ends. */
    this.head = 0;
    this.headEnd = STRUCTURES_HEADER_BYTES;
    /** Why the region cannot be read (null while it can); appends stop, what was read stays valid. */
    this.damaged = null;
    /** Set when an append did not fit: no more structures are offered. */
    this.full = false;
    /** Where the structure #parse() read last ends. */
    this.parsedEnd = 0;
  }

  get count() {
    return this.structures.length;
  }

  /**
   * Reads the records published since the last call. Returns false (and
   * sets `damaged`) when the region is damaged; the structures read before
   * stay as they were.
   */
  refresh() {
    if (this.damaged !== null) return false;
    const head = Atomics.load(this.words, W_HEAD);
    if (head === this.head) return true;
    const problem = this.#read(head);
    if (problem === null) return true;
    this.damaged = problem;
    return false;
  }

  /** Follows the chain from `head` back to the newest record read, then takes the new records in order, all or none. */
  #read(head) {
    const u32 = this.u32;
    const chain = [];
    for (let at = head; at !== this.head; ) {
      if (at < this.head) return `record at ${at} precedes the newest record read (${this.head})`;
      if (at < STRUCTURES_HEADER_BYTES || at % 8 !== 0 || at + RECORD_HEADER_BYTES > this.bytes) return `record offset ${at} is out of place`;
      const length = u32[(at >>> 2) + R_LENGTH];
      if (length % 8 !== 0 || length < RECORD_HEADER_BYTES || at + length > this.bytes) return `record at ${at} has a length of ${length}`;
      const prev = u32[(at >>> 2) + R_PREV];
      if (prev >= at) return `record at ${at} names record ${prev} as its predecessor`;
      chain.push(at);
      at = prev;
    }
    const structures = [];
    const hashes = [];
    let count = this.count;
    let hash = this.hashes[count];
    let end = this.headEnd;
    for (let i = chain.length - 1; i >= 0; i--) {
      const at = chain[i];
      const w = at >>> 2;
      const length = u32[w + R_LENGTH];
      if (at < end) return `record at ${at} overlaps the record before it`;
      if (u32[w + R_FIRST] !== count) return `record at ${at} starts at structure ${u32[w + R_FIRST]}, expected ${count}`;
      if (u32[w + R_CHECKSUM] !== recordChecksum(this.u8, at, length)) return `record at ${at} fails its checksum`;
      const recordCount = u32[w + R_COUNT];
      const payloadEnd = at + RECORD_HEADER_BYTES + u32[w + R_PAYLOAD];
      if (recordCount === 0 || count + recordCount > MAX_STRUCTURES || payloadEnd > at + length) {
        return `record at ${at} holds ${recordCount} structures in ${u32[w + R_PAYLOAD]} bytes`;
      }
      let p = at + RECORD_HEADER_BYTES;
      for (let s = 0; s < recordCount; s++) {
        const start = p;
        const names = this.#parse(p, payloadEnd);
        if (names === null) return `record at ${at} has a malformed structure`;
        p = this.parsedEnd;
        hash = fnv1aRange(hash, this.u8, start, p);
        structures.push(names);
        hashes.push(hash);
      }
      if (p !== payloadEnd) return `record at ${at} has bytes after its structures (${payloadEnd - p})`;
      count += recordCount;
      end = at + length;
    }
    for (let i = 0; i < structures.length; i++) {
      this.structures.push(structures[i]);
      this.hashes.push(hashes[i]);
    }
    this.head = head;
    this.headEnd = end;
    return null;
  }

  /** The key names of the structure encoded at `p` (it ends at `parsedEnd`); null if it runs past `limit`. */
  #parse(p, limit) {
    const u8 = this.u8;
    if (p + 2 > limit) return null;
    const keyCount = u8[p] | (u8[p + 1] << 8);
    p += 2;
    const names = new Array(keyCount);
    for (let k = 0; k < keyCount; k++) {
      if (p + 2 > limit) return null;
      const length = u8[p] | (u8[p + 1] << 8);
      p += 2;
      if (p + length > limit) return null;
      // Decoded from a copy: UTF-8 decoding of memory another thread may be writing can crash (see Arena#readUtf8).
      // @ts-expect-error utf8Slice: Node's internal Buffer method (not in @types/node), the decoder without toString's checks
      names[k] = Buffer.from(this.text.subarray(p, p + length)).utf8Slice(0, length);
      p += length;
    }
    this.parsedEnd = p;
    return names;
  }

  /**
   * Whether a new structure of these keys may be offered for sharing: it
   * fits (roughly; append() decides), the region is sound, and the keys look
   * like a record's rather than a map's.
   */
  canShare(keys) {
    if (this.full || this.damaged !== null || keys.length === 0 || ARRAY_INDEX.test(keys[0])) return false;
    let size = 2;
    for (let i = 0; i < keys.length; i++) {
      if (typeof keys[i] !== 'string') return false;
      size += 2 + Buffer.byteLength(keys[i]);
      if (size > MAX_STRUCTURE_BYTES) return false;
    }
    return STRUCTURES_HEADER_BYTES + Atomics.load(this.words, W_USED) + RECORD_HEADER_BYTES + size <= this.bytes;
  }

  /**
   * Appends `added` (arrays of key names) after the structures read so far,
   * which must still be all the region holds: they get the ids that follow
   * them. Returns APPENDED, STALE (another record was published since the
   * last refresh(): the ids are taken; refresh and decide again), FULL or
   * DAMAGED.
   */
  append(added) {
    const record = this.write(added);
    return typeof record === 'number' ? record : this.publish(record);
  }

  /**
   * The first half of append(): reserves space and writes the record there,
   * unpublished. Returns it for publish(), or STALE, FULL or DAMAGED.
   */
  write(added) {
    if (this.damaged !== null) return DAMAGED;
    if (Atomics.load(this.words, W_HEAD) !== this.head) return STALE;
    if (this.count + added.length > MAX_STRUCTURES) {
      this.full = true;
      return FULL;
    }
    const encoded = added.map((keys) => keys.map((key) => Buffer.from(key, 'utf8')));
    let payloadBytes = 0;
    for (const keys of encoded) {
      payloadBytes += 2;
      for (const key of keys) payloadBytes += 2 + key.length;
    }
    const length = align8(RECORD_HEADER_BYTES + payloadBytes);
    const at = this.#reserve(length);
    if (at < 0) return at === -1 ? FULL : DAMAGED;
    const u8 = this.u8;
    const w = at >>> 2;
    const u32 = this.u32;
    u32[w + R_LENGTH] = length;
    u32[w + R_PREV] = this.head;
    u32[w + R_FIRST] = this.count;
    u32[w + R_COUNT] = added.length;
    u32[w + R_PAYLOAD] = payloadBytes;
    let p = at + RECORD_HEADER_BYTES;
    let hash = this.hashes[this.count];
    const hashes = [];
    for (const keys of encoded) {
      const start = p;
      u8[p++] = keys.length & 0xff;
      u8[p++] = keys.length >>> 8;
      for (const key of keys) {
        u8[p++] = key.length & 0xff;
        u8[p++] = key.length >>> 8;
        u8.set(key, p);
        p += key.length;
      }
      hash = fnv1aRange(hash, u8, start, p);
      hashes.push(hash);
    }
    u8.fill(0, p, at + length);
    u32[w + R_CHECKSUM] = recordChecksum(u8, at, length);
    return { at, length, prev: this.head, added, hashes };
  }

  /** The second half of append(): makes a written record the newest; APPENDED, or STALE if another came first. */
  publish(record) {
    // The record's bytes are all written before `head` names it.
    if (Atomics.compareExchange(this.words, W_HEAD, record.prev, record.at) !== record.prev) return STALE;
    for (let i = 0; i < record.added.length; i++) {
      this.structures.push(record.added[i]);
      this.hashes.push(record.hashes[i]);
    }
    this.head = record.at;
    this.headEnd = record.at + record.length;
    return APPENDED;
  }

  /** Reserves `length` bytes for a record: their offset, -1 when they do not fit, -2 when `used` is damaged. */
  #reserve(length) {
    const words = this.words;
    for (;;) {
      const used = Atomics.load(words, W_USED);
      const at = STRUCTURES_HEADER_BYTES + used;
      // Every published record was reserved before it was published, so
      // `used` reaches past the newest one read.
      if (used < 0 || used % 8 !== 0 || at < this.headEnd) {
        this.damaged = `the space in use (${used} bytes) does not reach past the newest record (which ends at ${this.headEnd})`;
        return -2;
      }
      if (at + length > this.bytes) {
        this.full = true;
        return -1;
      }
      if (Atomics.compareExchange(words, W_USED, used, used + length) === used) return at;
    }
  }

  /** What is wrong with the region as a whole (null: nothing), reading all of it. */
  problem() {
    if (!this.refresh()) return this.damaged;
    const used = Atomics.load(this.words, W_USED);
    if (used < 0 || used % 8 !== 0 || STRUCTURES_HEADER_BYTES + used > this.bytes || STRUCTURES_HEADER_BYTES + used < this.headEnd) {
      return `the space in use (${used} bytes) does not agree with the records (which end at ${this.headEnd} of ${this.bytes})`;
    }
    return null;
  }

  /** Empties the region. Only for a sole user: others would keep structures under ids handed out again. */
  reset() {
    Atomics.store(this.words, W_HEAD, 0);
    Atomics.store(this.words, W_USED, 0);
  }
}

/** The checksum of the record of `length` bytes at `at` (exported for tests that forge records). */
export function recordChecksum(u8, at, length) {
  let h = fnv1aRange(FNV_OFFSET, u8, at, at + CHECKSUM_BYTE);
  h = fnv1aRange(h, u8, at + CHECKSUM_BYTE + 4, at + length);
  return Math.imul(h ^ length, FNV_PRIME) >>> 0;
}

/** The region's problems for verify(): at most one. */
export function structureProblems(buffer, header) {
  const problem = new StructureRegion(buffer, header).problem();
  return problem === null ? [] : [`codec structures: ${problem}`];
}

/**
 * After a restart, for the only process with the arena open: empties a
 * damaged region. Values encoded with its structures then decode as misses
 * (their structure hash no longer matches). Returns whether it was reset.
 */
export function recoverStructures(buffer, header) {
  const region = new StructureRegion(buffer, header);
  if (region.problem() === null) return false;
  region.reset();
  return true;
}

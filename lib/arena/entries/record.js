// The record format of a shard's data region (a circular log).
//
// Every record starts 8-byte aligned:
//
//   word 0  flags: bits 0-1 type (LIVE/DEAD/PAD), bit 2 HAS_TTL, bit 3 key
//           kind, bits 4-5 value kind, bit 6 REWRITING, bit 7 HAS_STALE,
//           bit 8 ASCII_TEXT, bits 16-31 key length
//   word 1  value length in bytes
//   word 2  hash of the key (finds the dictionary slot when evicting)
//   word 3  record size in bytes (header + key + value, rounded up to 8)
//   f64     write stamp: the shard's count of writes when this record was
//           written (or rewritten in place). Unique within the shard for the
//           life of the arena, so a reader's private copy of a value holds
//           exactly while its dictionary slot still points at a record with
//           the same stamp (see near-cache.js).
//   [f64    expiry time in ms since the epoch, only when HAS_TTL: when
//           the record stops being served at all]
//   [f64    stale time, only when HAS_STALE (which comes with HAS_TTL):
//           when the entry's ttl ran out. Between it and the expiry time the
//           value is stale: fetch() may serve it while one loader refreshes
//           it (options.staleWhileRevalidate), get() only with allowStale]
//   key bytes, padded to 8 so the value starts 8-byte aligned (see
//           paddedKeyBytes)
//   value bytes
//
// A PAD record fills the end of the region when the next record does not fit
// before the end; its size is implicit (up to the end of the region).
//
// In an arena whose header says recordChecksums (file-backed caches), every
// record ends with a u32 checksum in its last 4 bytes (see recordChecksum):
// its size is that of a value CHECKSUM_BYTES longer.

import { hashFinish } from './hash.js';

export const RECORD_HEADER_BYTES = 24;
/** Float64 index, from the record's offset / 8, of the write stamp, the expiry time and the stale time. */
export const STAMP_F64 = 2;
export const EXPIRY_F64 = 3;
export const STALE_F64 = 4;
/** Bytes of each of the two optional time fields. */
export const TTL_BYTES = 8;

export const TYPE_MASK = 3;
export const TYPE_LIVE = 1;
export const TYPE_DEAD = 2;
export const TYPE_PAD = 3;
export const HAS_TTL = 4;
/**
 * Set while a rewrite in place changes the record's value (see
 * Shard.rewrite): a record found with it after its writer died is that
 * write in flight, torn, and is dropped (see rebuild.js).
 */
export const REWRITING = 64;
/** The record has a stale time after its expiry time (see the layout above). */
export const HAS_STALE = 128;
export const KEY_KIND_SHIFT = 3;
export const VALUE_KIND_SHIFT = 4;

/** Key kinds: a string key and a Buffer key with the same bytes are different keys. */
export const KEY_STRING = 0;
export const KEY_BYTES = 1;

/** Value kinds: how the stored bytes turn back into a value. */
export const VALUE_RAW = 0; // Buffer/Uint8Array, returned as a Buffer copy
export const VALUE_UTF8 = 1; // string
export const VALUE_CODEC = 2; // anything else, through the cache's codec
/**
 * A number, as a float64 in the 8 bytes of the value (which starts on an
 * 8-byte boundary: see the layout above): stored and read without the codec,
 * and changed in place by SharedCache.incr() (see atomic-ops.js). Since
 * layout version 6.
 */
export const VALUE_NUMBER = 3;
/** The value bytes of a VALUE_NUMBER record. */
export const NUMBER_BYTES = 8;

/**
 * Marks a VALUE_UTF8 value whose bytes are all ASCII (as many UTF-8 bytes as
 * UTF-16 units), which are also its Latin-1 bytes: a reader turns them into
 * the string with one latin1Slice straight from shared memory, whose output
 * length is the input's whatever the bytes (see Arena#readValue), where
 * other UTF-8 is decoded from a private copy. The bytes are UTF-8 either
 * way, so a reader that ignores the mark (an older arenacache, rebuild.js,
 * the inspector) reads the same string: no layout version change.
 */
export const ASCII_TEXT = 256;

/** ASCII_TEXT for a value `payload` of `length` bytes that is an ASCII string, else 0. */
export function textFlag(payload, length) {
  // A string's UTF-8 length equals its count of UTF-16 units exactly when
  // all are below 0x80: any other unit, a lone surrogate included (U+FFFD,
  // 3 bytes), takes more bytes than units.
  return typeof payload === 'string' && payload.length === length ? ASCII_TEXT : 0;
}

/** The bits of word 0 that identify a live record of a given key. */
export const KEY_MATCH_MASK = (0xffff0000 | (1 << KEY_KIND_SHIFT) | TYPE_MASK) >>> 0;

/** Word 0 as findSlot expects it for a live record of this key length and kind. */
export function keyWord(keyLength, keyKind) {
  return ((keyLength << 16) | (keyKind << KEY_KIND_SHIFT) | TYPE_LIVE) >>> 0;
}

/**
 * Bytes the key takes in a record: padded to 8, so that the value starts
 * 8-byte aligned. V8 copies between shared memory and a Buffer (TypedArray#set,
 * the copy of a read) word by word only when both ends are equally aligned
 * modulo 8, and byte by byte otherwise: a 64-byte value copies 2x faster, a
 * 4 KiB one 5x, for the usual 8-aligned Buffer. Padding to 8 rather than 4
 * makes a record at most 8 bytes longer, and for values whose length is a
 * multiple of 8 never.
 */
export function paddedKeyBytes(keyLength) {
  return (keyLength + 7) & ~7;
}

/** Word 0 of a live record of this shape. */
export function recordFlags(keyLength, keyKind, valueKind, expiresAt, staleAt) {
  const times = expiresAt > 0 ? (staleAt > 0 ? HAS_TTL | HAS_STALE : HAS_TTL) : 0;
  return ((keyLength << 16) | (valueKind << VALUE_KIND_SHIFT) | (keyKind << KEY_KIND_SHIFT) | times | TYPE_LIVE) >>> 0;
}

/** Writes the time fields of the record at `offset` (see recordFlags for which it has). */
export function writeTimes(f64, offset, expiresAt, staleAt) {
  if (expiresAt > 0) {
    f64[(offset >>> 3) + EXPIRY_F64] = expiresAt;
    if (staleAt > 0) f64[(offset >>> 3) + STALE_F64] = staleAt;
  }
}

/** Bytes of the time fields in a record with word 0 `flags`: 0, 8 (HAS_TTL) or 16 (and HAS_STALE). */
export function recordTimeBytes(flags) {
  return ((flags & HAS_TTL) << 1) + ((flags & HAS_STALE) >>> 4);
}

/** Time field bytes for a record written with this expiry and stale time (0: none). */
export function timeBytesFor(expiresAt, staleAt) {
  return expiresAt > 0 ? (staleAt > 0 ? 2 * TTL_BYTES : TTL_BYTES) : 0;
}

/** Where the key of the record at `offset`, with word 0 `flags`, starts. */
export function recordKeyStart(offset, flags) {
  return offset + RECORD_HEADER_BYTES + recordTimeBytes(flags);
}

/** Bytes a record of this shape occupies in the log (`timeBytes`: see timeBytesFor). */
export function recordSize(keyLength, valueLength, timeBytes) {
  // Plain arithmetic, not `& ~7`: a huge value length must not wrap to int32.
  const raw = RECORD_HEADER_BYTES + timeBytes + paddedKeyBytes(keyLength) + valueLength + 7;
  return raw - (raw % 8);
}

/**
 * The largest value a region of `regionBytes` can hold under a key of
 * `keyLength` bytes in a record with `timeBytes` of time fields.
 */
export function maxValueBytes(regionBytes, keyLength, timeBytes) {
  return regionBytes - RECORD_HEADER_BYTES - timeBytes - paddedKeyBytes(keyLength);
}

/** Bytes a checksummed record needs beyond its value (see recordChecksum). */
export const CHECKSUM_BYTES = 4;
/** The bits of word 0 a checksum covers: all but the type and REWRITING, which change in place. */
const CHECKSUMMED_FLAGS = ~(TYPE_MASK | REWRITING) >>> 0;
const LANE_A = 0xcc9e2d51;
const LANE_B = 0x1b873593;

/**
 * The checksum of the record at `offset` whose value ends at `end`: word 0
 * (less its type and REWRITING bits), the rest of the header, the key and
 * the value. Two multiply-rotate lanes over 32-bit words (as in MurmurHash3)
 * and a final avalanche. Each step is a bijection of its lane's state for a
 * given word and of the word for a given state, so a change confined to one
 * aligned word (every flipped bit, every single changed byte) always changes
 * the result; wider damage, such as a page written back from an older
 * version, goes unnoticed with probability 2^-32. It runs at about 4 GB/s in
 * V8: a little faster than Node's zlib.crc32 (SIMD) on 4 KiB values, and 14
 * times faster on 64-byte ones, where crc32's call into C++ and the view it
 * needs dominate (see bench/repair.js).
 */
export function recordChecksum(u32, u8, offset, end) {
  let i = offset >>> 2;
  let a = (u32[i] & CHECKSUMMED_FLAGS) ^ 0x9e3779b9;
  let b = end - offset;
  const words = end >>> 2;
  for (i++; i + 1 < words; i += 2) {
    a = Math.imul(a ^ u32[i], LANE_A);
    a = (a << 15) | (a >>> 17);
    b = Math.imul(b ^ u32[i + 1], LANE_B);
    b = (b << 13) | (b >>> 19);
  }
  if (i < words) a = Math.imul(a ^ u32[i], LANE_B);
  for (let k = words << 2; k < end; k++) b = Math.imul(b ^ u8[k], LANE_A);
  return hashFinish(a ^ ((b << 16) | (b >>> 16)));
}

/** Where the value of the record at `offset` ends (from its header). */
export function recordValueEnd(u32, offset) {
  const o4 = offset >>> 2;
  const flags = u32[o4];
  return recordKeyStart(offset, flags) + paddedKeyBytes(flags >>> 16) + u32[o4 + 1];
}

/**
 * Stores the checksum of the (wholly written) record at `offset` in its
 * last word. `size` and `valueEnd` are the record's size and where its value
 * ends, as the writer wrote them: never read back from shared memory, where
 * another writer may have put other lengths meanwhile (see Shard.writeRecord).
 */
export function sealRecord(u32, u8, offset, size, valueEnd) {
  u32[(offset + size - CHECKSUM_BYTES) >>> 2] = recordChecksum(u32, u8, offset, valueEnd);
}

/**
 * Whether the record at `offset` matches its checksum. Its lengths are read
 * from its header, so they are bounded first: the record must lie inside
 * the region and its value end inside the record, before anything is summed.
 */
export function recordChecksumHolds(u32, u8, offset) {
  const o4 = offset >>> 2;
  const size = u32[o4 + 3];
  if (!(offset + size <= u8.length)) return false;
  const end = recordValueEnd(u32, offset);
  if (end + CHECKSUM_BYTES > offset + size) return false;
  return u32[(offset + size - CHECKSUM_BYTES) >>> 2] === recordChecksum(u32, u8, offset, end);
}

// The record format of a shard's data region (a circular log).
//
// Every record starts 8-byte aligned:
//
//   word 0  flags: bits 0-1 type (LIVE/DEAD/PAD), bit 2 HAS_TTL, bit 3 key
//           kind, bits 4-5 value kind, bit 6 REWRITING, bits 16-31 key length
//   word 1  value length in bytes
//   word 2  hash of the key (finds the dictionary slot when evicting)
//   word 3  record size in bytes (header + key + value, rounded up to 8)
//   f64     write stamp: the shard's count of writes when this record was
//           written (or rewritten in place). Unique within the shard for the
//           life of the arena, so a reader's private copy of a value holds
//           exactly while its dictionary slot still points at a record with
//           the same stamp (see near-cache.js).
//   [f64    expiry time in ms since the epoch, only when HAS_TTL]
//   key bytes, padded to 8 so the value starts 8-byte aligned (see
//           paddedKeyBytes)
//   value bytes
//
// A PAD record fills the end of the region when the next record does not fit
// before the end; its size is implicit (up to the end of the region).

export const RECORD_HEADER_BYTES = 24;
/** Float64 index, from the record's offset / 8, of the write stamp and of the expiry time. */
export const STAMP_F64 = 2;
export const EXPIRY_F64 = 3;
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
export const KEY_KIND_SHIFT = 3;
export const VALUE_KIND_SHIFT = 4;

/** Key kinds: a string key and a Buffer key with the same bytes are different keys. */
export const KEY_STRING = 0;
export const KEY_BYTES = 1;

/** Value kinds: how the stored bytes turn back into a value. */
export const VALUE_RAW = 0; // Buffer/Uint8Array, returned as a Buffer copy
export const VALUE_UTF8 = 1; // string
export const VALUE_CODEC = 2; // anything else, through the cache's codec

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

/** Bytes a record of this shape occupies in the log. */
export function recordSize(keyLength, valueLength, hasTtl) {
  // Plain arithmetic, not `& ~7`: a huge value length must not wrap to int32.
  const raw = RECORD_HEADER_BYTES + (hasTtl ? TTL_BYTES : 0) + paddedKeyBytes(keyLength) + valueLength + 7;
  return raw - (raw % 8);
}

/**
 * The largest value a region of `regionBytes` can hold under a key of
 * `keyLength` bytes (with a TTL, the worst case).
 */
export function maxValueBytes(regionBytes, keyLength) {
  return regionBytes - RECORD_HEADER_BYTES - TTL_BYTES - paddedKeyBytes(keyLength);
}

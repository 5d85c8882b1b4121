// Values that carry their own key and checksum, so a reader can tell a whole
// value of its own key from a torn value or another key's value.
//
//   u32 length of the whole value
//   u32 FNV-1a of the key
//   u32 writer id
//   u32 sequence number of the write
//   payload bytes (pseudo-random, derived from writer and sequence)
//   u32 FNV-1a of everything before it

import { fillRandom } from './seeded-random.js';

function fnv(bytes, from, to) {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

export function keyHash(key) {
  const bytes = Buffer.from(key);
  return fnv(bytes, 0, bytes.length);
}

/** A checked value of `length` bytes (at least 20) for `key`. */
export function makeValue(key, writer, sequence, length) {
  const size = Math.max(20, length);
  const value = Buffer.allocUnsafe(size);
  value.writeUInt32LE(size, 0);
  value.writeUInt32LE(keyHash(key), 4);
  value.writeUInt32LE(writer, 8);
  value.writeUInt32LE(sequence, 12);
  fillRandom(value, (writer * 2654435761 + sequence) >>> 0, 16, size - 4);
  value.writeUInt32LE(fnv(value, 0, size - 4), size - 4);
  return value;
}

/** A checked value as a string (one char per byte), which the near cache keeps, unlike a Buffer. */
export function asText(value) {
  return value.toString('latin1');
}

/**
 * Checks a value read for `key` (a Buffer, or a string from asText()): 'ok',
 * 'torn' (length or checksum wrong) or 'foreign' (a whole value, but of
 * another key).
 */
export function checkValue(key, stored) {
  const value = typeof stored === 'string' ? Buffer.from(stored, 'latin1') : stored;
  if (!Buffer.isBuffer(value) || value.length < 20 || value.readUInt32LE(0) !== value.length) return 'torn';
  if (value.readUInt32LE(value.length - 4) !== fnv(value, 0, value.length - 4)) return 'torn';
  if (value.readUInt32LE(4) !== keyHash(key)) return 'foreign';
  return 'ok';
}

/** Counts one cache read of `key`: a miss, or a hit and its checkValue() verdict. */
export function countRead(counts, key, value) {
  if (value === undefined) {
    counts.misses++;
    return;
  }
  counts.hits++;
  counts[checkValue(key, value)]++;
}

/** { writer, sequence } of a checked value. */
export function valueOrigin(value) {
  return { writer: value.readUInt32LE(8), sequence: value.readUInt32LE(12) };
}

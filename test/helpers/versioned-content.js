// File contents that say which version of which file they are, so a reader
// can tell a whole version from a torn mix of two: every 4 KiB page starts
// with the file's index and the version, and the rest is a pseudo-random
// fill of both, so that any two versions differ on every page.

import { seededRandom } from './seeded-random.js';

const PAGE = 4096;

/** The bytes of version `version` of file `file`, `size` bytes (a multiple of 4). */
export function versionContent(file, version, size) {
  const bytes = Buffer.allocUnsafe(size);
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, size / 4);
  const random = seededRandom((Math.imul(file + 1, 0x9e3779b1) ^ Math.imul(version + 1, 0x85ebca77)) >>> 0);
  for (let i = 0; i < words.length; i++) {
    if ((i * 4) % PAGE === 0) {
      words[i] = file;
      words[++i] = version;
      continue;
    }
    words[i] = random.word();
  }
  return bytes;
}

/**
 * Checks contents read for file `file`: the version they are, wholly, or
 * -1 for a torn mix (or anything else that no version of the file is).
 * `expected` caches the versions met, by version.
 */
export function versionOf(file, bytes, size, expected = new Map()) {
  if (bytes.length !== size) return -1;
  if (bytes.readUInt32LE(0) !== file) return -1;
  const version = bytes.readUInt32LE(4);
  let whole = expected.get(version);
  if (whole === undefined) {
    whole = versionContent(file, version, size);
    if (expected.size > 64) expected.clear();
    expected.set(version, whole);
  }
  return bytes.equals(whole) ? version : -1;
}

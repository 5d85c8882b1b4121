// A snapshot's manifest: one entry per directory, file and symbolic link of
// the tree, in canonical order (depth first, children sorted by name bytes,
// the order scanTree gives).
//
//   directory  [path, 'd', mode, mtimeSec, mtimeNsec]
//   symlink    [path, 'l', target, mtimeSec, mtimeNsec]
//   file       [path, 'f', mode, size, mtimeSec, mtimeNsec, sha256, where, engine, key]
//
// and `root` = [mode, mtimeSec, mtimeNsec] of the tree's root directory.
//
// `where` is 'o' (objects/<hh>/<sha256>) or [packId, offset]. `key` is the
// source file's identity when it was read (dev:ino:size:mtime:ctime), or
// null when it may have changed unseen (written during the read, or within
// the filesystem clock's tick of the snapshot): a file whose key still
// matches is not read again by the next snapshot.
import { createHash } from 'node:crypto';
import { ArenaCacheError, codes } from '../errors.js';
import { META_NAME } from './repository-layout.js';
import { isSnapshotId } from './names.js';

/**
 * A file's manifest entry (see above); while a snapshot is taken, sha256,
 * where, engine and key are null until its job has run.
 * @typedef {[path: string, type: 'f', mode: number, size: number, mtimeSec: number, mtimeNsec: number,
 *   sha256: string | null, where: 'o' | [packId: string, offset: number] | null, engine: string | null, key: string | null]} FileEntry
 */

export const MANIFEST_FORMAT = 'arenacache-manifest/1';
export const ENGINES = ['reflink', 'copy_file_range', 'copy', 'pack'];
const HASH_PATTERN = /^[0-9a-f]{64}$/;
// Paths whose characters all sort above '/' (0x2f) apart from '/' itself:
// for these, comparing whole strings is comparing segment by segment.
const ASCII_SIMPLE = /^[/0-9A-Za-z_~^`{|}:;<=>?@[\]]*$/;

export function statKey(dev, ino, size, mtimeSec, mtimeNsec, ctimeSec, ctimeNsec) {
  return `${dev}:${ino}:${size}:${mtimeSec}.${mtimeNsec}:${ctimeSec}.${ctimeNsec}`;
}

/**
 * SHA-256 over the root's mode and the entries' type, path, mode, size and
 * content hash (or link target): what the tree holds, not when it was touched.
 */
export function payloadChecksum(manifest) {
  const hash = createHash('sha256');
  hash.update(`r\0${manifest.root[0]}\n`);
  // Lines in batches: one update per line costs more than the hashing.
  let batch = '';
  for (const entry of manifest.entries) {
    batch += canonicalLine(entry);
    if (batch.length > 65536) {
      hash.update(batch);
      batch = '';
    }
  }
  hash.update(batch);
  return hash.digest('hex');
}

function canonicalLine(entry) {
  switch (entry[1]) {
    case 'd':
      return `d\0${entry[0]}\0${entry[2]}\n`;
    case 'l':
      return `l\0${entry[0]}\0${entry[2]}\n`;
    default:
      return `f\0${entry[0]}\0${entry[2]}\0${entry[3]}\0${entry[6]}\n`;
  }
}

/** Compares two relative paths in canonical order (segment by segment, by UTF-8 bytes). */
export function comparePaths(a, b) {
  // Plain ASCII (nearly every path): UTF-16 order is byte order, and '/'
  // sorts below every other character allowed in a name but the 46 that
  // come before it ('!' to '.'), hence the segment split for those.
  if (ASCII_SIMPLE.test(a) && ASCII_SIMPLE.test(b)) return a < b ? -1 : a > b ? 1 : 0;
  const left = a.split('/');
  const right = b.split('/');
  const length = Math.min(left.length, right.length);
  for (let i = 0; i < length; i++) {
    if (left[i] === right[i]) continue;
    return Buffer.compare(Buffer.from(left[i]), Buffer.from(right[i]));
  }
  return left.length - right.length;
}

function corrupt(id, detail) {
  return new ArenaCacheError(codes.ERR_SNAPSHOT_CORRUPT, `snapshot ${id}: manifest ${detail}`);
}

const isTime = (sec, nsec) => Number.isSafeInteger(sec) && Number.isInteger(nsec) && nsec >= 0 && nsec < 1e9;
const isMode = (mode) => Number.isInteger(mode) && mode >= 0 && mode <= 0o7777;

/**
 * Throws ERR_SNAPSHOT_CORRUPT unless `manifest` is well formed: every path
 * relative and inside the tree (no '..', no absolute path, not the metadata
 * entry), strictly in canonical order, and every entry's parent a directory
 * entry before it, so that restoring never writes through a symbolic link.
 */
export function checkManifest(id, manifest) {
  if (manifest === null || typeof manifest !== 'object' || manifest.format !== MANIFEST_FORMAT || !Array.isArray(manifest.entries)) {
    throw corrupt(id, `is not an ${MANIFEST_FORMAT} document`);
  }
  const root = manifest.root;
  if (!Array.isArray(root) || root.length !== 3 || !isMode(root[0]) || !isTime(root[1], root[2])) throw corrupt(id, 'has no valid root [mode, mtimeSec, mtimeNsec]');
  const directories = new Set(['']);
  const packs = new Set();
  let previous = null;
  for (const entry of manifest.entries) {
    if (!Array.isArray(entry) || typeof entry[0] !== 'string') throw corrupt(id, 'has an entry that is not [path, type, ...]');
    const where = entry[0];
    if (where === '' || where.includes('\0') || BAD_SEGMENT.test(where) || where === META_NAME || where.startsWith(`${META_NAME}/`)) {
      throw corrupt(id, `names a path outside the tree: ${JSON.stringify(where)}`);
    }
    if (previous !== null && comparePaths(previous, where) >= 0) throw corrupt(id, `is out of order at ${JSON.stringify(where)}`);
    const slash = where.lastIndexOf('/');
    if (!directories.has(slash === -1 ? '' : where.slice(0, slash))) throw corrupt(id, `has ${JSON.stringify(where)} outside any directory entry`);
    previous = where;
    if (!checkEntry(entry, packs)) throw corrupt(id, `has a malformed entry for ${JSON.stringify(where)}`);
    if (entry[1] === 'd') directories.add(where);
  }
}

// An empty, '.' or '..' segment, or a leading or trailing '/'.
const BAD_SEGMENT = /(?:^|\/)(?:\.{1,2})?(?:\/|$)/;

/** `packs` remembers the pack ids already seen valid (one test per pack, not per file). */
function checkEntry(entry, packs) {
  switch (entry[1]) {
    case 'd':
      return entry.length === 5 && isMode(entry[2]) && isTime(entry[3], entry[4]);
    case 'l':
      return entry.length === 5 && typeof entry[2] === 'string' && entry[2].length > 0 && !entry[2].includes('\0') && isTime(entry[3], entry[4]);
    case 'f': {
      const [, , mode, size, sec, nsec, hash, where, engine, key] = entry;
      const placed =
        where === 'o' ||
        (Array.isArray(where) && where.length === 2 && (packs.has(where[0]) || (isSnapshotId(where[0]) && packs.add(where[0]))) && Number.isSafeInteger(where[1]) && where[1] >= 0);
      return (
        entry.length === 10 && isMode(mode) && Number.isSafeInteger(size) && size >= 0 && isTime(sec, nsec) && HASH_PATTERN.test(hash) &&
        placed && ENGINES.includes(engine) && (key === null || typeof key === 'string')
      );
    }
    default:
      return false;
  }
}

/** Where the bytes of file entry `entry` are stored: { file, offset, length } (length -1: the whole file). */
export function locate(layout, entry) {
  const where = entry[7];
  return where === 'o' ? { file: layout.object(entry[6]), offset: 0, length: -1 } : { file: layout.pack(where[0]), offset: where[1], length: entry[3] };
}

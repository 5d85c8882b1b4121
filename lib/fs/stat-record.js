// What CacheFS keeps of a stat: the fields of node:fs Stats as a plain
// record (it is stored in the shared cache, so every thread sees it). The
// Stats-shaped object that stat() returns is lib/fs-compat/stats.js's.

import { S_IFDIR, S_IFMT, S_IFREG } from '../fs-compat/stats.js';

const FIELDS = Object.freeze(['dev', 'ino', 'mode', 'nlink', 'uid', 'gid', 'rdev', 'size', 'blksize', 'blocks', 'atimeMs', 'mtimeMs', 'ctimeMs', 'birthtimeMs']);

/**
 * A plain record of a node:fs Stats (the FIELDS), with when it was read
 * (and, once its data is cached, the nonce that names it).
 * @typedef {{ checkedAt: number, nonce: number | undefined, dev: number, ino: number, mode: number, nlink: number,
 *   uid: number, gid: number, rdev: number, size: number, blksize: number, blocks: number, atimeMs: number,
 *   mtimeMs: number, ctimeMs: number, birthtimeMs: number }} StatRecord
 */

/**
 * The StatRecord of `stats`, read at `checkedAt`.
 * @param {Omit<StatRecord, 'checkedAt' | 'nonce'>} stats a node:fs Stats, or anything with its FIELDS
 * @param {number} checkedAt
 * @returns {StatRecord}
 */
export function statRecord(stats, checkedAt) {
  const record = /** @type {StatRecord} */ ({ checkedAt, nonce: undefined });
  for (const field of FIELDS) record[field] = stats[field];
  return record;
}

// In the cache a record is 16 float64s (checkedAt, the fields, the nonce or
// NaN): decoding raw numbers costs a fraction of a codec's object decoding,
// and a cache hit reads one record per call.
const RECORD_DOUBLES = FIELDS.length + 2;
const RECORD_BYTES = RECORD_DOUBLES * 8;

/** The bytes a record is stored as. */
export function encodeRecord(record) {
  const bytes = Buffer.allocUnsafe(RECORD_BYTES);
  bytes.writeDoubleLE(record.checkedAt, 0);
  for (let i = 0; i < FIELDS.length; i++) bytes.writeDoubleLE(record[FIELDS[i]], 8 + 8 * i);
  bytes.writeDoubleLE(record.nonce ?? Number.NaN, RECORD_BYTES - 8);
  return bytes;
}

/** The record stored as `bytes`, or undefined for anything else under its key. */
export function decodeRecord(bytes) {
  if (!Buffer.isBuffer(bytes) || bytes.length !== RECORD_BYTES) return undefined;
  // Buffers from the cache are 8-byte aligned; a copy makes any other one so.
  const aligned = bytes.byteOffset % 8 === 0 ? bytes : Buffer.from(bytes);
  const d = new Float64Array(aligned.buffer, aligned.byteOffset, RECORD_DOUBLES);
  // One object literal in FIELDS order: every record has the same shape.
  return {
    checkedAt: d[0],
    nonce: Number.isNaN(d[15]) ? undefined : d[15],
    dev: d[1],
    ino: d[2],
    mode: d[3],
    nlink: d[4],
    uid: d[5],
    gid: d[6],
    rdev: d[7],
    size: d[8],
    blksize: d[9],
    blocks: d[10],
    atimeMs: d[11],
    mtimeMs: d[12],
    ctimeMs: d[13],
    birthtimeMs: d[14],
  };
}
if (FIELDS.join() !== 'dev,ino,mode,nlink,uid,gid,rdev,size,blksize,blocks,atimeMs,mtimeMs,ctimeMs,birthtimeMs') {
  throw new Error('stat-record.js: decodeRecord no longer follows FIELDS');
}

/**
 * The record of a dirty (write-back) version of the file `base` describes:
 * its inode and mode with the dirty size and write time, naming no data yet.
 */
export function dirtyVersion(base, size, mtimeMs, checkedAt) {
  return { ...base, size, mtimeMs, ctimeMs: mtimeMs, checkedAt, nonce: undefined };
}

/** Whether two records describe the same version of a file: same inode, size and modification time. */
export function sameVersion(a, b) {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

export function isFileRecord(record) {
  return (record.mode & S_IFMT) === S_IFREG;
}

export function isDirectoryRecord(record) {
  return (record.mode & S_IFMT) === S_IFDIR;
}

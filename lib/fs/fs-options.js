// CacheFS options: one object of defaults and the checks that name the option.

import { kBacking } from '../internal-symbols.js';
import { describe } from '../errors.js';
import { SharedCache } from '../cache/shared-cache.js';
import { BlockStore } from '../arena/blocks/block-store.js';
import { checkInteger, withDefaults } from '../validate.js';

export const WRITE_MODES = Object.freeze(['write-through', 'write-back', 'write-around']);

/** Every option of `new CacheFS(options)` with its default. */
export const DEFAULTS = Object.freeze({
  /** What CacheFS serves (required): the path of a directory on disk (every path is confined to it), or an InodeFS (its whole tree). */
  root: undefined,
  /** The SharedCache holding file data and metadata (required). */
  cache: undefined,
  /**
   * How writes reach the disk and the cache: 'write-through' (both before the
   * call resolves), 'write-back' (the cache and options.blocks now, the disk
   * on the next flush) or 'write-around' (the disk; the cache forgets the file).
   */
  writeMode: 'write-through',
  /**
   * The BlockStore that holds dirty files until they are flushed: required
   * for 'write-back'. Give the same store to every CacheFS of the root, in
   * every mode, so that all of them see (and flush) each other's dirty files.
   */
  blocks: undefined,
  /** How often write-back flushes dirty files in the background (ms; 0: only on flush(), close() and process exit). */
  flushIntervalMs: 1000,
  /** How long cached metadata is trusted before it is checked against the disk again (ms; 0: every call). */
  validateMs: 1000,
  /**
   * The coarsest timestamp granularity to assume for the files served (ms).
   * A file changed less than its granularity (and a margin) before a read is
   * read from the disk and not cached (the racily clean rule, see racy.js).
   * CacheFS judges each file by its ctime: 2000 for whole-second stamps
   * (ext2, ext3, ext4 with 128-byte inodes, FAT), 20 for finer ones; raise it
   * for a file system stamped by another machine's clock (NFS, SMB, FUSE) by
   * that clock's skew. 0: CacheFS's own judgement only.
   */
  timestampGranularityMs: 0,
  /** File data is cached in blocks of this many bytes, so large files need not fit whole. */
  blockBytes: 256 * 1024,
  /** Files larger than this are read from disk and not cached. */
  maxFileBytes: 64 * 2 ** 20,
  /**
   * Bytes of this instance's private copies of the files it just read from
   * the cache (the near cache: a repeated readFile of a hot file then costs
   * what a private Map costs). Copies never outlive a change to the file's
   * cache entries by any thread, nor validateMs. Files above 1/16 of it are
   * not copied; 0 turns it off (or when the cache has a default ttl).
   */
  nearCacheBytes: 2 ** 20,
  /**
   * A file where this instance's per-path read counts are saved (on close(),
   * process exit and saveAccessStats()), for warmFromStats() in the next run.
   */
  accessStatsPath: undefined,
  /** Paths kept in the access statistics, most-read first. */
  accessStatsLimit: 10_000,
});

export function resolveOptions(options) {
  if (options === undefined) throw new TypeError('options.root and options.cache are required: new CacheFS({ root, cache })');
  const resolved = withDefaults(options, DEFAULTS, 'options');
  if (!(typeof resolved.root === 'string' && resolved.root.length > 0) && typeof resolved.root?.[kBacking] !== 'function') {
    throw new TypeError(`options.root must be the path of a directory or an InodeFS (got ${describe(resolved.root)})`);
  }
  if (!(resolved.cache instanceof SharedCache)) throw new TypeError(`options.cache must be a SharedCache (got ${describe(resolved.cache)})`);
  if (!WRITE_MODES.includes(resolved.writeMode)) {
    const valid = WRITE_MODES.map((mode) => `'${mode}'`).join(', ');
    const error = typeof resolved.writeMode === 'string' ? RangeError : TypeError;
    throw new error(`options.writeMode must be one of ${valid} (got ${describe(resolved.writeMode)})`);
  }
  if (resolved.blocks !== undefined && !(resolved.blocks instanceof BlockStore)) {
    throw new TypeError(`options.blocks must be a BlockStore (got ${describe(resolved.blocks)})`);
  }
  if (resolved.writeMode === 'write-back' && resolved.blocks === undefined) {
    throw new TypeError("options.blocks must be a BlockStore when writeMode is 'write-back': it holds the dirty files until they are flushed");
  }
  if (resolved.accessStatsPath !== undefined && (typeof resolved.accessStatsPath !== 'string' || resolved.accessStatsPath.length === 0)) {
    throw new TypeError(`options.accessStatsPath must be a file path (got ${describe(resolved.accessStatsPath)})`);
  }
  checkInteger(resolved.nearCacheBytes, 'options.nearCacheBytes', 0, 2 ** 30, { from: '0 (off)' });
  checkInteger(resolved.accessStatsLimit, 'options.accessStatsLimit', 1, 10_000_000);
  checkInteger(resolved.flushIntervalMs, 'options.flushIntervalMs', 0, 86_400_000, { from: '0 (no background flush)', unit: 'milliseconds' });
  checkInteger(resolved.validateMs, 'options.validateMs', 0, 86_400_000, { from: '0 (check every call)', unit: 'milliseconds' });
  checkInteger(resolved.timestampGranularityMs, 'options.timestampGranularityMs', 0, 86_400_000, { from: "0 (CacheFS's own judgement)", unit: 'milliseconds' });
  checkInteger(resolved.blockBytes, 'options.blockBytes', 4096, 64 * 2 ** 20);
  checkInteger(resolved.maxFileBytes, 'options.maxFileBytes', 0, Number.MAX_SAFE_INTEGER, { to: null });
  const maxValue = resolved.cache.stats().maxEntryBytes - 256;
  if (resolved.blockBytes > maxValue) {
    throw new RangeError(`options.blockBytes (${resolved.blockBytes}) must fit in one entry of the cache (at most ${maxValue} bytes); lower it or give the cache more memory`);
  }
  return resolved;
}

// CacheFS: a directory served through a SharedCache. File data and metadata
// are cached in the shared arena, so every thread (and, with a file-backed
// cache, every process) that serves the same root shares one cache.
//
// A file's metadata record names its cached data, and every new version of
// the file gets data under a new name (the keys are in cache-keys.js).
// Metadata is trusted for `validateMs`, then compared with a fresh stat
// (inode, size, mtime, ctime): a file changed behind the cache's back gets a
// record without data, and is read from disk again. Stats tell versions
// apart only once their stamps are older than the file system's timestamp
// granularity: a version changed more recently than that is read from disk
// and not cached, and cached data of one is not trusted past validateMs
// (the racily clean rule, racy.js).
//
// Write-back (see write-back.js) keeps written files dirty in a BlockStore
// that every thread shares, and publishes their records and data in the
// cache as a write-through would, so hits serve them; the disk gets them on
// the next flush (flusher.js: flushIntervalMs, flush(), close(), process exit). Paths
// still exist on disk from the first write (so readdir() lists them), and
// anything else that touches a dirty file on disk (a write in another mode,
// a handle, unlink, rm, rename) first flushes it, so a deferred write never
// lands on top of a later change.

import { EventEmitter } from 'node:events';
import path from 'node:path';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { minimatch } from 'minimatch';
import { registerFsMetrics } from './fs-metrics.js';
import { CacheFileHandle } from './cache-file-handle.js';
import { listFiles, readPathList, warmDirOptions, warmFromStatsOptions, warmOptions, WarmJob } from './warming.js';
import { runAsync, runSync } from './io.js';
import { CREATE, parseFlags } from '../fs-compat/open-flags.js';
import { resolveOptions } from './fs-options.js';
import { backingFor } from './backing.js';
import { decodeRecord, dirtyVersion, encodeRecord, isDirectoryRecord, isFileRecord, sameVersion, statRecord } from './stat-record.js';
import { CachedStats } from '../fs-compat/stats.js';
import { WriteBack } from './write-back.js';
import { Flusher } from './flusher.js';
import { cancelAtExit, runAtExit } from './exit-work.js';
import { AccessStats, requireAccessStats } from './access-stats.js';
import { dataKey, dataKeyPrefix, listingKey, newNonce, RootKeys } from './cache-keys.js';
import { checkMode, decode, mkdirOptions, readEncoding, rmOptions, toBytes, writeOptions } from '../fs-compat/fs-arguments.js';
import { NearFileCache } from './near-file-cache.js';
import { FoundEntry } from '../cache/found-entry.js';
import { fullyWaiting } from '../cache/fully-waiting.js';
import { isRacy } from './racy.js';

/** Disk reads overlapped by a flush are repeated this often before one is made under the file's lock. */
const LOAD_ATTEMPTS = 4;

const NOTHING = Buffer.alloc(0);

function closedError() {
  return new ArenaCacheError(codes.ERR_FS_CLOSED, 'the CacheFS is closed: close() was called on this instance');
}

function checkPathList(paths) {
  if (!Array.isArray(paths) || !paths.every((p) => typeof p === 'string')) {
    throw new TypeError(`paths must be an array of path strings (got ${describe(paths)})`);
  }
}

export class CacheFS extends EventEmitter {
  #root;
  #cache;
  /** The cache's get, set, delete and keys, waiting for a stopped lock holder rather than give up (see fully-waiting.js). */
  #store;
  #writeMode;
  #validateMs;
  /** options.timestampGranularityMs, or null when the backing's times tell every change (an InodeFS): no racily clean rule. */
  #minGranularityMs;
  #blockBytes;
  #maxFileBytes;
  /** @type {RootKeys} */
  #keys;
  /** The root's dirty files (with options.blocks), else null. */
  #writeBack = null;
  /** Writes them to disk (with options.blocks), else null. */
  #flusher = null;
  /** Per-path read counts (with options.accessStatsPath), else null. */
  #access = null;
  /** Saves them at process exit, unless close() does. */
  #saveAccessAtExit = null;
  /** @type {NearFileCache | null} */
  #near = null;
  /** The record #sharedHit's get of a file's record fills: read right after it, before any other get. */
  #found = new FoundEntry();
  #closed = false;
  #counters = {
    reads: 0,
    readHits: 0,
    nearHits: 0,
    readMisses: 0,
    bytesRead: 0,
    writes: 0,
    bytesWritten: 0,
    stats: 0,
    statHits: 0,
    validations: 0,
    staleFiles: 0,
    racyReads: 0,
    handleReadHits: 0,
    writeBacks: 0,
    spilledWrites: 0,
    flushedFiles: 0,
    flushedBytes: 0,
    flushErrors: 0,
    lostWrites: 0,
  };

  /**
   * @param {import('./fs-options.js').DEFAULTS} options
   */
  constructor(options) {
    super();
    const resolved = resolveOptions(options);
    try {
      this.#root = backingFor(resolved.root);
    } catch (cause) {
      if (cause.code === codes.ERR_NATIVE_UNAVAILABLE) throw cause;
      throw new ArenaCacheError(codes.ERR_FS_ROOT, `options.root ${typeof resolved.root === 'string' ? resolved.root : describe(resolved.root)} cannot be served: ${cause.message}`, { cause });
    }
    this.#cache = resolved.cache;
    this.#store = fullyWaiting(resolved.cache);
    this.#writeMode = resolved.writeMode;
    this.#validateMs = resolved.validateMs;
    this.#minGranularityMs = this.#root.coarseTimes === true ? resolved.timestampGranularityMs : null;
    this.#blockBytes = resolved.blockBytes;
    this.#maxFileBytes = resolved.maxFileBytes;
    this.#keys = new RootKeys(this.#store, this.#root.id);
    if (resolved.nearCacheBytes > 0) this.#near = new NearFileCache(this.#cache, resolved.nearCacheBytes);
    if (resolved.blocks !== undefined) this.#writeBack = new WriteBack(resolved.blocks, this.#keys.rootId, this.#counters, this.#root.sync.rewrite);
    if (resolved.accessStatsPath !== undefined) {
      const access = new AccessStats(resolved.accessStatsPath, this.#root.id, resolved.accessStatsLimit);
      this.#access = access;
      this.#saveAccessAtExit = () => access.saveAtExit();
      runAtExit(this.#saveAccessAtExit);
    }
    if (this.#writeBack !== null) {
      this.#flusher = new Flusher(this.#writeBack, {
        background: this.#writeMode === 'write-back',
        intervalMs: resolved.flushIntervalMs,
        events: this,
        counters: this.#counters,
        flushed: (key, stats, content) => this.#remember(key, statRecord(stats, Date.now()), content),
      });
    }
  }

  /** The real path of the root directory ("/" for an InodeFS). */
  get root() {
    return this.#root.path;
  }

  /** 'write-through', 'write-back' or 'write-around'. */
  get writeMode() {
    return this.#writeMode;
  }

  /**
   * Counters of this instance (reads, hits, misses, bytes, writes, stats,
   * validations, files found changed, reads not cached because the file
   * changed too recently, handle reads from the cache, write-back: writes kept dirty,
   * files and bytes flushed, flush errors, writes spilled to disk, lost
   * writes) and `dirtyBytes`, the dirty bytes of its block store (0 without one).
   */
  stats() {
    return { ...this.#counters, dirtyBytes: this.#writeBack?.dirtyBytes() ?? 0 };
  }

  #check() {
    if (this.#closed) throw closedError();
  }

  /** Runs an operation's flow with node:fs/promises, unless closed (then rejects). */
  #runAsync(flow) {
    return this.#closed ? Promise.reject(closedError()) : runAsync(flow, this.#root.async);
  }

  #runSync(flow) {
    this.#check();
    return runSync(flow, this.#root.sync);
  }

  /**
   * Exposes this instance's counters in a prom-client registry
   * (arenacache_fs_reads_total, ..._read_hits_total, ...; label fs=`name`),
   * read at scrape time. Returns a function that removes them. The cache's
   * own metrics come from cache.registerMetrics().
   * @param {import('prom-client').Registry} registry
   * @param {{ name?: string, prefix?: string }} [options]
   */
  registerMetrics(registry, options) {
    return registerFsMetrics(this, registry, options);
  }

  /** The contents of `path`: a Buffer, or a string with an encoding. */
  async readFile(path, options) {
    // Argument errors reject, as with node:fs/promises.
    this.#check();
    const encoding = options === undefined ? null : readEncoding(options, 'readFile');
    if (this.#access !== null) this.#access.record(this.#root.key(path));
    const hit = this.#readHit(path);
    return decode(hit ?? (await runAsync(this.#readFlow(path), this.#root.async)), encoding);
  }

  readFileSync(path, options) {
    this.#check();
    const encoding = options === undefined ? null : readEncoding(options, 'readFileSync');
    if (this.#access !== null) this.#access.record(this.#root.key(path));
    return decode(this.#readHit(path) ?? runSync(this.#readFlow(path), this.#root.sync), encoding);
  }

  /** A read served from fresh metadata and cached data without any I/O, or null (then #readFlow runs). */
  #readHit(given) {
    const { key, target } = this.#root.resolve(given);
    // "a.txt/" is not "a.txt": only the disk answers a path that asks for a directory.
    if (target !== key) return null;
    const counters = this.#counters;
    let bytes = this.#near?.get(key);
    if (bytes !== undefined) {
      counters.nearHits++;
    } else {
      bytes = this.#sharedHit(key);
      if (bytes === null) return null;
    }
    counters.reads++;
    counters.readHits++;
    counters.bytesRead += bytes.length;
    return bytes;
  }

  /**
   * #readHit from the shared cache (copied near when the near cache is on):
   * the generation (a check of its stamp while it holds, see
   * RootKeys#current), one get of the record, one of each data block.
   */
  #sharedHit(key) {
    const near = this.#near;
    const keys = this.#keys;
    const generation = keys.current();
    const metaKey = keys.recordKey(key, generation.token);
    if (metaKey === null) return null;
    const found = this.#found;
    const record = decodeRecord(this.#store.getFound(metaKey, found));
    if (record === undefined || Date.now() - record.checkedAt >= this.#validateMs || !isFileRecord(record)) return null;
    // Taken before the data's gets.
    const recordStamp = near === null ? null : found.toRecordStamp();
    const bytes = this.#cachedContent(record);
    if (bytes !== null) near?.keep(key, bytes, record.checkedAt + this.#validateMs, generation.stamp, recordStamp);
    return bytes;
  }

  /** Stats of `path` (node:fs Stats-shaped), from the cache while they are fresh. */
  stat(path) {
    return this.#runAsync(this.#statFlow(path));
  }

  statSync(path) {
    return this.#runSync(this.#statFlow(path));
  }

  /** The names in directory `path`. */
  readdir(path) {
    return this.#runAsync(this.#readdirFlow(path));
  }

  readdirSync(path) {
    return this.#runSync(this.#readdirFlow(path));
  }

  /** Writes `data` as the whole contents of `path` (see writeMode). */
  writeFile(path, data, options) {
    return this.#runAsync(this.#writeFlow(path, data, options, false));
  }

  /** Appends `data` to `path`, creating it if needed. */
  appendFile(path, data, options) {
    return this.#runAsync(this.#writeFlow(path, data, options, true));
  }

  /**
   * Creates directory `path` (`{ recursive }` as in node:fs; then resolves
   * to the first directory created, relative to the root, or undefined).
   */
  mkdir(path, options) {
    return this.#runAsync(this.#structureFlow('mkdir', path, options));
  }

  /** Removes file `path`. */
  unlink(path) {
    return this.#runAsync(this.#structureFlow('unlink', path));
  }

  /** Removes `path` (`{ recursive, force }` as in node:fs). */
  rm(path, options) {
    return this.#runAsync(this.#structureFlow('rm', path, options));
  }

  /**
   * Opens `path` with node:fs flags ('r', 'r+', 'w', 'a', 'wx', ...) and
   * resolves to a CacheFileHandle (read, write, truncate, stat, close).
   */
  async open(path, flags = 'r', mode = 0o666) {
    this.#check();
    const { key, target } = this.#root.resolve(path);
    parseFlags(flags);
    checkMode(mode, 'mode');
    // The descriptor must see what the cache serves: a dirty version goes to disk first.
    this.#flusher?.flushKey(key);
    const handle = await this.#root.async.open(target, flags, mode);
    const files = {
      key,
      validateMs: this.#validateMs,
      // A write-back write since the handle was opened must be on disk before
      // the descriptor is used. The handle's file may be dirty under another
      // path by now (renamed since, or a hard link): every dirty file of the root goes.
      beforeAccess: () => this.#flusher?.flushUnder(''),
      contentOf: (fileKey, version) => this.#contentOfVersion(fileKey, version),
      // The file a handle changed may be known under another path by now
      // (renamed since it was opened, or a hard link): drop every metadata
      // record of the root, as a rename does.
      afterWrite: () => this.#keys.newGeneration(),
    };
    // 'w', 'a' and 'x' flags may create or truncate the file.
    if (/[wax]/.test(flags)) this.#keys.newGeneration();
    return new CacheFileHandle(handle, path, flags, files);
  }

  /**
   * Reads `paths` into the cache in the background; see WarmJob ('progress'
   * and 'failed' events, `finished`).
   * @param {string[]} paths
   * @param {{ concurrency?: number, signal?: AbortSignal }} [options]
   */
  warm(paths, options) {
    this.#check();
    checkPathList(paths);
    return new WarmJob((p) => this.#warmRead(p), paths, warmOptions(options));
  }

  /**
   * Warms the files of directory `dir` (with `recursive`, of its
   * subdirectories too), those whose path relative to `dir` matches the glob
   * `pattern` (minimatch syntax, e.g. '**\/*.css') if one is given.
   * @param {string} dir
   * @param {{ recursive?: boolean, pattern?: string, concurrency?: number, signal?: AbortSignal }} [options]
   */
  warmDir(dir, options) {
    this.#check();
    const { recursive, pattern, ...settings } = warmDirOptions(options);
    const { key } = this.#root.resolve(dir, 'dir');
    return new WarmJob((p) => this.#warmRead(p), listFiles(this, key, recursive, pattern), settings);
  }

  /**
   * Warms the files named in the text file `listFile` (a path on the host, one
   * root-relative path a line; empty lines and lines starting with # are skipped).
   */
  warmFromList(listFile, options) {
    this.#check();
    if (typeof listFile !== 'string') throw new TypeError(`listFile must be a string (got ${describe(listFile)})`);
    const settings = warmOptions(options);
    return new WarmJob((p) => this.#warmRead(p), readPathList(listFile), settings);
  }

  /**
   * Warms the files the previous run read most: the first `limit` paths of
   * the access statistics saved at options.accessStatsPath (none yet: an
   * empty job). Warming reads are not counted as accesses.
   * @param {{ limit?: number, concurrency?: number, signal?: AbortSignal }} [options]
   */
  warmFromStats(options) {
    this.#check();
    const { limit, ...settings } = warmFromStatsOptions(options);
    const access = requireAccessStats(this.#access, 'warmFromStats');
    return new WarmJob((p) => this.#warmRead(p), AccessStats.load(access.path, this.#root.id, limit), settings);
  }

  /** Saves the access statistics now (they are also saved by close() and at process exit). */
  async saveAccessStats() {
    this.#check();
    await requireAccessStats(this.#access, 'saveAccessStats').save();
  }

  #warmRead(given) {
    if (this.#closed) return Promise.reject(closedError());
    return this.#readHit(given) ?? runAsync(this.#readFlow(given), this.#root.async);
  }

  /**
   * Drops what the cache knows of some files, so the next access reads the
   * disk: `paths` (an array), or every cached path under `{ prefix }` or
   * matching `{ pattern }` (a glob, minimatch syntax). Returns how many
   * cached records were dropped.
   * @param {string[] | { prefix?: string, pattern?: string }} target
   */
  invalidate(target) {
    this.#check();
    if (Array.isArray(target)) {
      let dropped = 0;
      for (const given of target) {
        if (this.#dropRecord(this.#keys.recordKey(this.#root.resolve(given).key))) dropped++;
      }
      return dropped;
    }
    if (target === null || typeof target !== 'object') {
      throw new TypeError(`target must be an array of paths, { prefix } or { pattern } (got ${describe(target)})`);
    }
    const { prefix, pattern } = target;
    if ((prefix === undefined) === (pattern === undefined) || Object.keys(target).some((name) => name !== 'prefix' && name !== 'pattern')) {
      throw new TypeError('target must have exactly one of prefix and pattern');
    }
    if (prefix !== undefined && typeof prefix !== 'string') throw new TypeError(`target.prefix must be a string (got ${describe(prefix)})`);
    if (pattern !== undefined && typeof pattern !== 'string') throw new TypeError(`target.pattern must be a glob string (got ${describe(pattern)})`);
    const under = prefix === undefined ? null : this.#root.resolve(prefix, 'target.prefix').key;
    const doomed = [];
    // Walks the cache's keys (O(entries)): a batch operation, not a hot path.
    for (const [key, file] of this.#keys.currentRecords(this.#store.keys())) {
      const match = under !== null ? under === '' || file === under || file.startsWith(`${under}/`) : minimatch(file, pattern, { dot: true });
      if (match) doomed.push(key);
    }
    let dropped = 0;
    for (const key of doomed) if (this.#store.delete(key)) dropped++;
    return dropped;
  }

  /**
   * The stats of many paths at once: [{ path, stats }] or [{ path, error }]
   * (a missing file is an entry with its error, not a rejection).
   */
  async batchStats(paths) {
    this.#check();
    checkPathList(paths);
    return Promise.all(
      paths.map((p) =>
        this.stat(p).then(
          (stats) => ({ path: p, stats }),
          (error) => ({ path: p, error }),
        ),
      ),
    );
  }

  /** Renames `from` to `to`, both inside the root. */
  rename(from, to) {
    return this.#runAsync(this.#renameFlow(from, to));
  }

  /**
   * Writes dirty files to disk: those of `paths` (root-relative), or every
   * dirty file of the root (whoever wrote it). Resolves to how many were
   * written. Files that fail stay dirty, are reported by 'flushError'
   * events ({ path, error }) and reject the call with ERR_FLUSH_FAILED
   * (error.failures lists them); the others are flushed all the same.
   * @param {string[]} [paths]
   */
  async flush(paths) {
    this.#check();
    let keys;
    if (paths !== undefined) {
      checkPathList(paths);
      keys = paths.map((p) => this.#root.key(p));
    }
    if (this.#flusher === null) return 0;
    return this.#flusher.flush(keys);
  }

  /**
   * Stops background flushing and, in write-back mode, flushes every dirty
   * file of the root; rejects as flush() does if some cannot be written
   * (they stay dirty in the block store, for another CacheFS or a later
   * run). Every later call fails with ERR_FS_CLOSED.
   */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#near?.clear();
    cancelAtExit(this.#saveAccessAtExit);
    if (this.#flusher !== null) await this.#flusher.stop();
    if (this.#access !== null) await this.#access.save();
    try {
      if (this.#writeMode === 'write-back') await this.#flusher.flush();
    } finally {
      this.#root.close?.();
    }
  }

  // --- the operations, written once for both forms (see io.js)

  *#readFlow(given) {
    const { key, target } = this.#root.resolve(given);
    const counters = this.#counters;
    counters.reads++;
    if (target !== key) {
      // "x/" or "x/." never names a file: the disk fails it as node:fs does (ENOTDIR, EISDIR).
      counters.readMisses++;
      return (yield ['load', target]).data;
    }
    const record = yield* this.#freshRecord(key);
    if (record !== undefined && isFileRecord(record)) {
      const bytes = this.#cachedContent(record);
      if (bytes !== null) {
        counters.readHits++;
        counters.bytesRead += bytes.length;
        return bytes;
      }
    }
    if (record !== undefined && this.#writeBack?.anyDirty()) {
      const dirty = this.#readDirty(key, record);
      if (dirty !== null) {
        counters.readHits++;
        counters.bytesRead += dirty.length;
        return dirty;
      }
    }
    counters.readMisses++;
    // Taken before the read: the racily clean rule judges the stamps against the earliest moment the bytes may be from.
    const readAt = Date.now();
    const { before, data, after } = yield* this.#load(key);
    // Cache only what was read from one unchanging version of the file (not a dirty version from the store).
    if (after !== undefined) {
      const loaded = statRecord(after, Date.now());
      if (sameVersion(statRecord(before, 0), loaded) && data.length === loaded.size) {
        if (!this.#racy(loaded, readAt)) {
          this.#remember(key, loaded, data);
        } else {
          // Changed too recently for its stats to show the next change, and
          // maybe read in the middle of an in-place write: served, not kept.
          counters.racyReads++;
          this.#setRecord(this.#keys.recordKey(key), loaded);
        }
      }
    }
    counters.bytesRead += data.length;
    return data;
  }

  /**
   * Reads `key` from disk: { before, data, after } (stats around the read).
   * With a block store, a flush may be writing the file in place meanwhile
   * (in another thread or process): the file's lock sequence (a seqlock)
   * tells whether one overlapped the read, which is then repeated, or
   * answered from the store ({ data }) if the file is dirty again.
   */
  *#load(key) {
    const writeBack = this.#writeBack;
    if (writeBack === null) return yield ['load', key];
    const fromStore = (name, content) => ({ data: content });
    for (let attempt = 0; attempt < LOAD_ATTEMPTS; attempt++) {
      const sequence = writeBack.sequence(key);
      const loaded = yield ['load', key];
      if (sequence % 2 === 0 && writeBack.sequence(key) === sequence) return loaded;
      const dirty = writeBack.read(key, fromStore);
      if (dirty !== null) return dirty;
    }
    // Flushes keep overlapping: read under the lock, where none can.
    return writeBack.read(key, fromStore, () => this.#root.sync.load(key));
  }

  *#statFlow(given) {
    const { key, target } = this.#root.resolve(given);
    this.#counters.stats++;
    let record = yield* this.#freshRecord(key);
    // "a.txt/" asks for a directory: a file's record does not answer it (the disk says ENOTDIR).
    if (record !== undefined && target !== key && !isDirectoryRecord(record)) record = undefined;
    if (record === undefined) {
      record = statRecord(yield ['stat', target], Date.now());
      this.#setRecord(this.#keys.recordKey(key), record);
    } else {
      this.#counters.statHits++;
    }
    return new CachedStats(record);
  }

  *#readdirFlow(given) {
    const { key, target } = this.#root.resolve(given);
    let record = yield* this.#freshRecord(key);
    if (record === undefined) {
      let stats;
      try {
        stats = yield ['stat', target];
      } catch {
        // As node:fs words it: the listing failed (scandir), not a stat.
        return yield ['readdir', target];
      }
      record = statRecord(stats, Date.now());
      this.#setRecord(this.#keys.recordKey(key), record);
    }
    // A file: node:fs gives ENOTDIR.
    if (!isDirectoryRecord(record)) return yield ['readdir', target];
    if (record.nonce !== undefined) {
      const cached = this.#store.get(listingKey(record.nonce));
      // A copy: the caller may sort it, and the cache may hand out its value frozen (options.nearCache).
      if (cached !== undefined) return cached.slice();
    }
    const listedAt = Date.now();
    const names = yield ['readdir', target];
    const after = statRecord(yield ['stat', target], Date.now());
    // A directory changed within its stamps' granularity may change again unseen (racy.js): its listing is not kept.
    if (sameVersion(record, after) && !this.#racy(after, listedAt)) {
      // Like file data, a listing is named by a nonce in the directory's record.
      after.nonce = newNonce();
      this.#store.set(listingKey(after.nonce), names);
      this.#setRecord(this.#keys.recordKey(key), after);
    }
    return names;
  }

  *#writeFlow(given, data, options, append) {
    const { key, target } = this.#root.resolve(given);
    const { encoding, mode } = writeOptions(options, append ? 'appendFile' : 'writeFile');
    const bytes = toBytes(data, encoding);
    if (target !== key) {
      // "x/" or "x/." names a directory, which the disk refuses to write as node:fs does (EISDIR, ENOTDIR, ENOENT).
      yield ['store', target, bytes, append ? 'a' : 'w', mode ?? 0o666];
      this.#dropRecord(this.#keys.recordKey(key));
      return;
    }
    if (this.#writeMode === 'write-back' && bytes.length <= this.#maxFileBytes && this.#writeBack.fits(key)) {
      if (yield* this.#writeBackFlow(key, bytes, append, mode ?? 0o666)) return;
    }
    // A dirty version must not land on top of this write later.
    this.#flusher?.flushKey(key);
    const stats = yield ['store', key, bytes, append ? 'a' : 'w', mode ?? 0o666];
    this.#counters.writes++;
    this.#counters.bytesWritten += bytes.length;
    this.#forgetParent(key);
    if (this.#writeMode === 'write-around') {
      this.#dropRecord(this.#keys.recordKey(key));
      return;
    }
    // write-through (and write-back's large files): the cache holds what the disk holds before the call returns.
    // An append is not: what the cache held before it may not be what the
    // disk held (another program may have rewritten the file at the same
    // size since it was cached), and cached bytes plus the appended ones
    // would then be a version that never existed, with the stats of the
    // disk's, trusted from then on. The next read loads the file.
    const record = statRecord(stats, Date.now());
    if (!append && bytes.length === record.size) this.#remember(key, record, bytes);
    else this.#setRecord(this.#keys.recordKey(key), record);
  }

  /**
   * A write kept dirty in the block store; false when it must go to disk
   * instead (the file would outgrow maxFileBytes).
   */
  *#writeBackFlow(key, bytes, append, mode) {
    let base = this.#getRecord(this.#keys.recordKey(key));
    if (base === undefined || !isFileRecord(base)) {
      // The path exists on disk from the first write on (readdir lists it);
      // a directory or a missing parent fails here as node:fs would.
      base = statRecord(yield ['store', key, NOTHING, CREATE, mode], Date.now());
      this.#forgetParent(key);
    }
    const outcome = this.#writeBack.write(key, bytes, {
      append,
      mode,
      limit: this.#maxFileBytes,
      base: () => this.#root.sync.readFile(key),
      publish: (size, mtimeMs, stats, whole) => {
        // Spilled: written to disk, as write-through would have.
        if (stats !== undefined) return this.#remember(key, statRecord(stats, Date.now()), whole);
        const record = dirtyVersion(base, size, mtimeMs, Date.now());
        if (append) this.#setRecord(this.#keys.recordKey(key), record);
        else this.#remember(key, record, bytes);
      },
    });
    if (outcome === 'too-large') return false;
    const counters = this.#counters;
    counters.writes++;
    counters.bytesWritten += bytes.length;
    if (outcome === 'dirty') counters.writeBacks++;
    return true;
  }

  /** The dirty contents of `key` from the block store (cached on the way, under the file's lock), or null when it is clean. */
  #readDirty(key, base) {
    return this.#writeBack.read(key, (name, content) => {
      this.#remember(key, dirtyVersion(base, name.size, name.mtimeMs, Date.now()), content);
      return content;
    });
  }

  *#structureFlow(operation, given, options) {
    const { key, target } = this.#root.resolve(given);
    if (key === '' && operation !== 'mkdir') throw new ArenaCacheError(codes.ERR_PATH_OUTSIDE_ROOT, `path ${describe(given)} is the root itself, which CacheFS does not remove`);
    const settings = operation === 'mkdir' ? mkdirOptions(options) : operation === 'rm' ? rmOptions(options) : undefined;
    if (operation !== 'mkdir') this.#flusher?.flushUnder(key);
    const result = yield [operation, target, settings];
    this.#dropRecord(this.#keys.recordKey(key));
    this.#forgetParent(key);
    // A removed directory takes its descendants' paths with it.
    if (operation === 'rm') this.#keys.newGeneration();
    if (typeof result !== 'string') return undefined;
    // mkdir({ recursive: true }) gives the first directory it created
    // (relative to the root): it and every directory below it are new, so
    // their parents' listings changed, up to the one that already existed.
    const first = result;
    for (let created = key; created !== first && created !== '.'; created = path.posix.dirname(created)) this.#forgetParent(created);
    this.#forgetParent(first);
    return first;
  }

  *#renameFlow(from, to) {
    const source = this.#root.resolve(from, 'from');
    const destination = this.#root.resolve(to, 'to');
    this.#flusher?.flushUnder(source.key);
    this.#flusher?.flushUnder(destination.key);
    yield ['rename', source.target, destination.target];
    // Every path under a renamed directory changed: start a new generation.
    this.#keys.newGeneration();
  }

  // --- metadata and data in the cache

  /**
   * The cached record of `key` if it is fresh, or was checked against a
   * stat just now and still names the same version; undefined otherwise
   * (also when the file is gone: the caller's disk call then fails as
   * node:fs does).
   */
  *#freshRecord(key) {
    const metaKey = this.#keys.recordKey(key);
    const record = this.#getRecord(metaKey);
    const now = Date.now();
    if (record !== undefined && now - record.checkedAt < this.#validateMs) return record;
    // A dirty file's disk version is behind: its record comes from the block store.
    if (this.#writeBack?.isDirty(key)) return yield* this.#dirtyRecord(key, record);
    if (record === undefined) return undefined;
    this.#counters.validations++;
    let fresh;
    try {
      fresh = statRecord(yield ['stat', key], now);
    } catch (error) {
      this.#dropRecord(metaKey);
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
      throw error;
    }
    // Unchanged: the record keeps naming its data. Changed behind the
    // cache's back: the fresh record names none, so the file is read again.
    // So is a version that was racy when its data was cached (written or
    // flushed here within its stamps' granularity, racy.js): matching stats
    // do not prove it unchanged. A record that kept its data here was not
    // racy when checked, so neither is it at its new, later checkedAt.
    if (!sameVersion(record, fresh)) this.#counters.staleFiles++;
    else if (!this.#racy(record, record.checkedAt)) fresh.nonce = record.nonce;
    this.#setRecord(metaKey, fresh);
    return fresh;
  }

  /**
   * The record of dirty `key`: the disk's stats with the dirty size and
   * mtime (keeping the cached data's nonce if the cached record names the
   * same dirty version), cached under the file's lock. Undefined if it was
   * flushed meanwhile (the disk is then current).
   */
  *#dirtyRecord(key, cached) {
    this.#counters.validations++;
    const disk = statRecord(yield ['stat', key], Date.now());
    return this.#writeBack.state(key, (name) => {
      if (name === null) return undefined;
      const record = dirtyVersion(disk, name.size, name.mtimeMs, disk.checkedAt);
      // A dirty version is stamped with the millisecond of its write (Date.now()
      // under the file's lock): another write of the same size in the same
      // millisecond has the same name, so the cached data is trusted only if
      // it was cached in a later millisecond than its version's stamp, when
      // any later write is stamped later (the racily clean rule, racy.js, at
      // a clock of 1 ms). Otherwise it is read again from the store.
      if (cached !== undefined && cached.size === record.size && cached.mtimeMs === record.mtimeMs && cached.ino === record.ino && cached.checkedAt > cached.mtimeMs) {
        record.nonce = cached.nonce;
      }
      this.#setRecord(this.#keys.recordKey(key), record);
      return record;
    });
  }

  /**
   * The cached bytes of `key` if the cache holds exactly the file version
   * `version` (inode included), else null. Cached data of a racy version
   * (racy.js) is trusted within validateMs only, as on the read path.
   */
  #contentOfVersion(key, version) {
    const record = this.#getRecord(this.#keys.recordKey(key));
    if (record === undefined || !sameVersion(record, version) || !isFileRecord(record)) return null;
    if (Date.now() - record.checkedAt >= this.#validateMs && this.#racy(record, record.checkedAt)) return null;
    const content = this.#cachedContent(record);
    if (content !== null) this.#counters.handleReadHits++;
    return content;
  }

  /**
   * Whether the version `record` describes may change without its stats
   * changing, judged at `at` (the racily clean rule, racy.js); never over
   * a backing whose times tell every change.
   */
  #racy(record, at) {
    return this.#minGranularityMs !== null && isRacy(record, at, this.#minGranularityMs);
  }

  /** Stores a file's data (in blocks) and then its record, so a reader that finds the record usually finds the data. */
  #remember(key, record, data) {
    const metaKey = this.#keys.recordKey(key);
    // A path too long for a record key is served from the disk: its data would never be found.
    if (metaKey === null) return;
    if (data.length <= this.#maxFileBytes) {
      record.nonce = newNonce();
      const blockBytes = this.#blockBytes;
      const prefix = dataKeyPrefix(record.nonce);
      for (let block = 0, start = 0; start < data.length; block++, start += blockBytes) {
        this.#store.set(dataKey(prefix, block), data.subarray(start, Math.min(data.length, start + blockBytes)));
      }
    }
    this.#setRecord(metaKey, record);
  }

  /** The file's bytes from the cache, or null when any block is missing (evicted, or never cached). */
  #cachedContent(record) {
    const size = record.size;
    if (size === 0) return Buffer.alloc(0);
    if (record.nonce === undefined) return null;
    const prefix = dataKeyPrefix(record.nonce);
    const blockBytes = this.#blockBytes;
    if (size <= blockBytes) {
      const only = this.#store.get(dataKey(prefix, 0));
      return only !== undefined && only.length === size ? only : null;
    }
    const out = Buffer.allocUnsafe(size);
    for (let block = 0, start = 0; start < size; block++, start += blockBytes) {
      const part = this.#store.get(dataKey(prefix, block));
      if (part === undefined || part.length !== Math.min(blockBytes, size - start)) return null;
      part.copy(out, start);
    }
    return out;
  }

  // A null record key (a path too long for the cache, see RootKeys#recordKey) holds nothing.
  #getRecord(metaKey) {
    return metaKey === null ? undefined : decodeRecord(this.#store.get(metaKey));
  }

  #setRecord(metaKey, record) {
    if (metaKey !== null) this.#store.set(metaKey, encodeRecord(record));
  }

  #dropRecord(metaKey) {
    return metaKey !== null && this.#store.delete(metaKey);
  }

  /** A directory's entries changed: its record (and so the listing it names) must be read again. */
  #forgetParent(key) {
    const parent = path.posix.dirname(key);
    this.#dropRecord(this.#keys.recordKey(parent === '.' ? '' : parent));
  }
}

// The lmdb side of InodeFS: one environment, four databases, and the
// transactions every operation runs in.
//
//   meta       'format' -> { magic, version }, 'nextIno' -> number,
//              'owner' -> { pid, start, opens, privateOpens, locked } (the
//              process that has it open; `locked`: it holds the owner lock,
//              see #claimOwnership), 'id' -> a random name of the store and
//              'generation' -> a count of owner processes (together, the
//              prefix of the store's keys in a shared inode cache),
//              'epoch' -> the current epoch
//   inodes     ino -> inode record (type, mode, size, times, nlink, and the
//              content: inline `data`, a list of blob `chunks`, or `target`;
//              `e`: the epoch it was last written in). A chunk list holds
//              the hash of each stored chunk, or a number n for n chunks
//              of a hole (zeros, nothing stored): a file written far past
//              its end, or truncated up, stores only what was written
//   dirents    [parentIno, name] -> { ino, type, e }: ordered keys, so
//              readdir is one range scan and lists names in byte order
//   blobs      sha256 (hex) -> bytes: content-addressed chunks of large
//              files, shared by every file holding them
//   refs       sha256 (hex) -> how many chunk lists (current and history
//              records) hold the blob; it is deleted with its last reference
//   snapshots  name -> { name, epoch, createdAt }: persistent snapshots
//   inodeHistory   [ino, lastEpoch] -> an inode record some persistent
//                  snapshot still needs (current from epoch `e` to lastEpoch)
//   direntHistory  [parentIno, name, lastEpoch] -> likewise, a dirent
//   handles    ino -> how many open file handles (in the owner process's
//              threads) hold the file: a file (or directory) removed while
//              open lives on with nlink 0 until its last handle closes, as
//              on POSIX; a new owner process removes such files left by a
//              dead one
//
// Persistent snapshots cost O(changes), not O(tree): taking one records
// the current epoch and starts the next. A record is copied to history only
// when it is first changed (or removed) in a later epoch and a snapshot lies
// within the epochs it was current for; a snapshot reads a current record
// whose epoch is not after its own, else the history version that covers
// its epoch (see history.js).
//
// Every change runs in one synchronous lmdb transaction (atomic: a process
// killed mid-write leaves the store as it was before). The inode cache hears
// of a change only once its transaction has committed.

import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'lmdb';
import { ArenaCacheError, codes } from '../errors.js';
import { fileTooLarge, fsError, storeError } from './errors.js';
import { checkSameFiles, prepareStoreFiles, warnReadable } from './store-files.js';
import { fileLock, isProcessAlive, LOCK_EXCLUSIVE, LOCK_SHARED, nativeAvailable } from '../native.js';

export const ROOT_INO = 1;
const MAGIC = 'arenacache-inodefs';
const VERSION = 1;
/** LMDB's meta page magic, where lmdb-js's format has it (page 0, byte 24). */
const LMDB_MAGIC = 0xbeefc0de;
const LMDB_MAGIC_OFFSET = 24;
/** @type {Set<import('lmdb').Key>} */
const OUR_DATABASES = new Set(['meta', 'inodes', 'dirents', 'blobs', 'refs', 'snapshots', 'inodeHistory', 'direntHistory', 'handles']);

export const S_IFMT = 0o170000;
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;

/**
 * A time (ms) after `previous`: now, or just after `previous` if the clock
 * has not moved past it, so every change gives a file new times (CacheFS
 * over an InodeFS tells versions apart by them, as it does on disk).
 */
export function after(previous) {
  return Math.max(performance.timeOrigin + performance.now(), previous + 0.001);
}

/** The content (or a directory's entries) changed: new modification and change times. */
export function touch(inode) {
  inode.mtimeMs = inode.ctimeMs = after(Math.max(inode.mtimeMs, inode.ctimeMs));
}

/** The largest file an InodeFS holds (16 GiB): a chunk list beyond it would make one inode record megabytes long. */
export const MAX_FILE_BYTES = 2 ** 34;

/** EFBIG (for `syscall` on `path`) if a file would grow to `size` bytes, past MAX_FILE_BYTES. */
export function checkFileSize(size, syscall, path) {
  if (size > MAX_FILE_BYTES) throw fsError('EFBIG', syscall, path);
}

/** The most bytes one read of a whole file gives, as node:fs's readFile (its kIoMaxLength). */
const MAX_READ_BYTES = 2 ** 31 - 1;

/** The hashes of the chunks `record` stores (holes store none). */
export function chunkHashes(record) {
  return (record.chunks ?? []).filter((entry) => typeof entry === 'string');
}

/**
 * The stored chunks of chunk list `chunks` (`count` chunks long) with
 * indexes from `first` to `last`, as [index, hash] pairs. A list without
 * holes longer than one chunk is indexed directly.
 * @returns {[number, string][]}
 */
function storedIn(chunks, count, first, last) {
  /** @type {[number, string][]} */
  const found = [];
  if (chunks.length === count) {
    for (let i = first; i <= last && i < count; i++) if (typeof chunks[i] === 'string') found.push([i, chunks[i]]);
    return found;
  }
  let index = 0;
  for (const entry of chunks) {
    if (index > last) break;
    if (typeof entry === 'number') {
      index += entry;
      continue;
    }
    if (index >= first) found.push([index, entry]);
    index++;
  }
  return found;
}

/** The byte ranges [start, end) of `inode`'s content that are stored, in order; the rest of its size is holes. */
export function dataRanges(inode) {
  if (inode.chunks === undefined) return inode.size > 0 ? [[0, inode.size]] : [];
  const { chunkBytes, size } = inode;
  const ranges = [];
  for (const [index] of storedIn(inode.chunks, Math.ceil(size / chunkBytes), 0, Infinity)) {
    const start = index * chunkBytes;
    const end = Math.min(size, start + chunkBytes);
    if (ranges.length > 0 && ranges.at(-1)[1] === start) ranges.at(-1)[1] = end;
    else ranges.push([start, end]);
  }
  return ranges;
}

/** stat's `blocks` (512-byte units) for what a chunk list of a `size`-byte file stores. */
function storedBlocks(chunks, size, chunkBytes) {
  let stored = 0;
  for (const entry of chunks) if (typeof entry === 'string') stored++;
  let bytes = stored * chunkBytes;
  // The last chunk is short when the size is not a multiple of chunkBytes.
  if (typeof chunks.at(-1) === 'string') bytes -= Math.ceil(size / chunkBytes) * chunkBytes - size;
  return Math.ceil(bytes / 512);
}

/**
 * Chunk list `old` made `count` chunks long (cut, or extended with a hole),
 * with the chunks at the indexes of `updates` (all below `count`) replaced
 * by a hash, or by a hole (null). Returns the new list, with its holes
 * merged, and the hashes it no longer holds.
 */
function spliceChunks(old, count, updates) {
  const chunks = [];
  const released = [];
  const hole = (n) => {
    if (n === 0) return;
    if (typeof chunks.at(-1) === 'number') chunks[chunks.length - 1] += n;
    else chunks.push(n);
  };
  const put = (hash) => (hash === null ? hole(1) : chunks.push(hash));
  const changed = [...updates.keys()].sort((a, b) => a - b);
  let next = 0;
  // Chunks [from, to) of a hole, with the updates among them.
  const holeTo = (from, to) => {
    let at = from;
    for (; next < changed.length && changed[next] < to; next++) {
      hole(changed[next] - at);
      put(updates.get(changed[next]));
      at = changed[next] + 1;
    }
    hole(to - at);
  };
  let index = 0;
  for (const entry of old) {
    if (typeof entry === 'number') {
      if (index < count) holeTo(index, Math.min(count, index + entry));
      index += entry;
      continue;
    }
    if (index >= count || updates.has(index)) released.push(entry);
    if (index < count && updates.has(index)) {
      put(updates.get(index));
      next++;
    } else if (index < count) {
      chunks.push(entry);
    }
    index++;
  }
  if (index < count) holeTo(index, count);
  return { chunks, released };
}

/** A new inode record of `type` ('file', 'dir', 'symlink'). */
export function newInode(ino, type, mode, now) {
  const typeBits = type === 'dir' ? S_IFDIR : type === 'symlink' ? S_IFLNK : S_IFREG;
  return {
    ino,
    type,
    dev: 0,
    rdev: 0,
    blksize: 4096,
    blocks: 0,
    mode: typeBits | (mode & 0o7777),
    nlink: type === 'dir' ? 2 : 1,
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    size: 0,
    atimeMs: now,
    mtimeMs: now,
    ctimeMs: now,
    birthtimeMs: now,
  };
}

/**
 * Process `pid` as /proc shows it: its state (field 3: "R", "S", ..., "Z"
 * for a zombie) and when it started (field 22, clock ticks since boot), or
 * null where that cannot be read.
 */
function processStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // Fields after the command name (which may hold spaces and parentheses).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], start: fields[19] ?? null };
  } catch {
    return null;
  }
}

/**
 * Whether the owner a record names still runs, judged from the record
 * alone (where no owner lock can answer): its pid exists, with the start
 * time it recorded (pids are reused: a restarted container's is 1 again),
 * and is not a zombie (killed but not yet reaped by its parent, as under a
 * pid 1 that never reaps: it answers kill(pid, 0) with its old start time).
 * A pid from another PID namespace can still fool this; the lock cannot.
 */
function recordedOwnerRuns(owner) {
  if (owner.pid === process.pid || !isProcessAlive(owner.pid)) return false;
  const stat = processStat(owner.pid);
  return (stat?.start ?? null) === owner.start && stat?.state !== 'Z' && stat?.state !== 'X';
}

/** Takes `kind` of OFD lock on `fd` without waiting: true, false if held elsewhere, null if the file system has no such locks. */
function tryLock(fd, kind) {
  try {
    return fileLock(fd, kind, false);
  } catch {
    return null;
  }
}

/**
 * Refuses an existing file without LMDB's meta page: lmdb itself may crash
 * the process on such a file instead of failing.
 */
function checkLmdbHeader(path) {
  let fd;
  try {
    // Judged a regular file just before (store-files.js): a link swapped in since is not followed.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if (error.code === 'ENOENT') return; // created by lmdb
    throw storeError(path, error.message, error);
  }
  try {
    const head = Buffer.alloc(LMDB_MAGIC_OFFSET + 4);
    const length = readSync(fd, head, 0, head.length, 0);
    if (length === 0) return;
    if (length < head.length || head.readUInt32LE(LMDB_MAGIC_OFFSET) !== LMDB_MAGIC) throw storeError(path, 'it is not an lmdb file (no lmdb meta page at its start)');
  } finally {
    closeSync(fd);
  }
}

/**
 * lmdb's open() options and `permissionsMode`, which lmdb-js hands to
 * mdb_env_open (its src/env.cpp) though its typings leave it out.
 * @typedef {import('lmdb').RootDatabaseOptionsWithPath & { permissionsMode?: number }} LmdbOpenOptions
 */

/**
 * lmdb's root database as the store uses it: openDB(name) may leave out the
 * options (lmdb-js takes them as {}; its typings require them).
 * @typedef {import('lmdb').RootDatabase & {
 *   openDB(name: string, options?: import('lmdb').DatabaseOptions): import('lmdb').Database }} LmdbEnv
 */

export class InodeStore {
  /**
   * @param {string} path the lmdb file
   * @param {{ maxReaders: number, inlineBytes: number, chunkBytes: number, durable: boolean, privateCache: boolean, mode: number }} options
   *   `mode`: of the store's files, if they are created
   */
  constructor(path, { maxReaders, inlineBytes, chunkBytes, durable, privateCache, mode }) {
    this.path = path;
    this.inlineBytes = inlineBytes;
    this.chunkBytes = chunkBytes;
    const { identities, created } = prepareStoreFiles(path, mode);
    checkLmdbHeader(path);
    try {
      // permissionsMode (lmdb-js passes it to mdb_env_open): should a file vanish before lmdb opens it, lmdb creates none wider than `mode`.
      /** @type {LmdbEnv} */
      this.env = open(/** @type {LmdbOpenOptions} */ ({ path, maxDbs: 12, maxReaders, noSubdir: true, noSync: !durable, permissionsMode: mode }));
      this.foreignNames = [...this.env.getKeys({ limit: 12 })].filter((name) => !OUR_DATABASES.has(name));
      this.meta = this.env.openDB('meta');
      this.inodes = this.env.openDB('inodes');
      this.dirents = this.env.openDB('dirents');
      this.blobs = this.env.openDB('blobs', { encoding: 'binary' });
      this.refs = this.env.openDB('refs');
      this.snapshots = this.env.openDB('snapshots');
      this.inodeHistory = this.env.openDB('inodeHistory');
      this.direntHistory = this.env.openDB('direntHistory');
      this.handles = this.env.openDB('handles');
    } catch (cause) {
      this.env?.close();
      throw storeError(path, `lmdb refuses it (${cause.message})`, cause);
    }
    try {
      checkSameFiles(path, identities);
      this.#checkFormat();
      this.#claimOwnership(privateCache);
    } catch (error) {
      this.env.close();
      throw error;
    }
    if (created) warnReadable(path, mode);
  }

  #checkFormat() {
    const format = this.meta.get('format');
    if (format === undefined) {
      if (this.foreignNames.length > 0 || this.inodes.getCount() > 0) {
        throw storeError(this.path, `it is an lmdb file of something else (it holds ${this.foreignNames.map((n) => JSON.stringify(n)).join(', ') || 'inodes without a format record'})`);
      }
      this.env.transactionSync(() => {
        this.meta.putSync('format', { magic: MAGIC, version: VERSION });
        this.meta.putSync('nextIno', ROOT_INO + 1);
        this.meta.putSync('epoch', 0);
        this.inodes.putSync(ROOT_INO, { ...newInode(ROOT_INO, 'dir', 0o755, Date.now()), e: 0 });
      });
      return;
    }
    if (format?.magic !== MAGIC) throw storeError(this.path, 'its format record is not an InodeFS one');
    if (format.version !== VERSION) throw storeError(this.path, `it has format version ${format.version}; this arenacache reads version ${VERSION}`);
  }

  // An inode cache hears only of its own InodeFS's writes, so one store has
  // one cache: a second live process is refused (a dead owner is replaced),
  // and in one process a private cache excludes every other opener (threads
  // share a store through one options.cache).
  //
  // Who is alive is the kernel's word where the addon can ask it: each open
  // InodeStore holds a shared OFD lock on the store file, which the kernel
  // drops when the process dies, however it dies, even as a zombie and
  // across PID namespaces. An opener first tries the lock exclusively: it
  // gets it only if no InodeStore of any process holds the store. All of
  // this runs inside the lmdb write transaction, so openers and closers (in
  // every process) take turns, and the lock and the owner record always
  // change together. Without the addon (or on a file system without OFD
  // locks) the record alone answers, as recordedOwnerRuns() says.
  #claimOwnership(privateCache) {
    this.#lockFd = nativeAvailable ? this.#openLockFile() : -1;
    try {
      this.env.transactionSync(() => {
        try {
          this.#claim(privateCache);
        } catch (error) {
          // Let go inside the transaction: no opener may see the lock without the record.
          this.#releaseLock();
          throw error;
        }
      });
    } catch (error) {
      this.#releaseLock();
      throw error;
    }
  }

  #claim(privateCache) {
    const owner = this.meta.get('owner');
    const start = processStat(process.pid)?.start ?? null;
    this.#start = start;
    // true: no InodeStore holds the store; false: one does; null: no lock to ask.
    const sole = this.#lockFd === -1 ? null : tryLock(this.#lockFd, LOCK_EXCLUSIVE);
    if (sole === null) this.#releaseLock();
    // The record is this process's only while one of its InodeStores holds
    // the lock (and a pid is this process only with its start time); it
    // joins them with a shared lock of its own.
    const ours = owner?.pid === process.pid && owner.start === start && (sole === null || (sole === false && tryLock(this.#lockFd, LOCK_SHARED) === true));
    if (!ours && (sole === false || (owner !== undefined && !(sole === true && owner.locked === true) && recordedOwnerRuns(owner)))) {
      throw new ArenaCacheError(
        codes.ERR_INODEFS_BUSY,
        `${this.path} is open in ${owner === undefined ? 'another process' : `process ${owner.pid}`}; an InodeFS store is used by one process at a time (its threads share it)`,
      );
    }
    const opens = ours ? owner.opens : 0;
    const privateOpens = ours ? owner.privateOpens ?? 0 : 0;
    if (opens > 0 && (privateCache || privateOpens > 0)) {
      throw new ArenaCacheError(
        codes.ERR_INODEFS_BUSY,
        `${this.path} is already open in this process${privateOpens > 0 ? ' with a private inode cache' : ''}; threads share a store by each opening it with the same options.cache (a SharedCache)`,
      );
    }
    // Held shared from now on, so that this process's other threads can join.
    if (sole === true) fileLock(this.#lockFd, LOCK_SHARED, false);
    let generation = this.meta.get('generation') ?? 0;
    if (opens === 0) {
      // The first opener in this process: handles counted by a previous
      // owner are gone with it, and what a cache may hold from before
      // (another process may have written since) must not be used: the
      // cache keys of this process carry a new generation.
      this.#dropOrphans();
      generation++;
      this.meta.putSync('generation', generation);
    }
    this.id = this.meta.get('id');
    if (this.id === undefined) {
      this.id = randomBytes(9).toString('base64url');
      this.meta.putSync('id', this.id);
    }
    this.generation = generation;
    this.#privateCache = privateCache;
    this.meta.putSync('owner', { pid: process.pid, start, opens: opens + 1, privateOpens: privateOpens + (privateCache ? 1 : 0), locked: this.#lockFd !== -1 });
  }

  /** The store file opened for the owner lock (its own open file description: the lock belongs to it). */
  #openLockFile() {
    try {
      return openSync(this.path, constants.O_RDWR | constants.O_NOFOLLOW);
    } catch (cause) {
      // As checkLmdbHeader reports a file it cannot open (lmdb has just opened it: EMFILE, a race).
      throw storeError(this.path, cause.message, cause);
    }
  }

  #releaseLock() {
    if (this.#lockFd === -1) return;
    closeSync(this.#lockFd);
    this.#lockFd = -1;
  }

  #privateCache = false;
  #start = null;
  #lockFd = -1;

  /** Removes the files that were held open by handles alone (nlink 0) when their process ended. */
  #dropOrphans() {
    const tx = new WriteTx(this);
    // @ts-expect-error lmdb's typings give asArray as a Promise; a range read synchronously (as here) gives the array itself
    for (const { key } of this.handles.getRange({}).asArray) {
      this.handles.removeSync(key);
      const inode = this.inodes.get(key);
      if (inode?.nlink === 0) tx.removeInode(inode);
    }
  }

  close() {
    try {
      this.env.transactionSync(() => {
        try {
          const owner = this.meta.get('owner');
          if (owner?.pid !== process.pid || owner.start !== this.#start) return;
          if (owner.opens <= 1) this.meta.removeSync('owner');
          else this.meta.putSync('owner', { ...owner, opens: owner.opens - 1, privateOpens: (owner.privateOpens ?? 0) - (this.#privateCache ? 1 : 0) });
        } finally {
          // In the transaction: the lock goes with the record.
          this.#releaseLock();
        }
      });
    } finally {
      this.#releaseLock();
    }
    return this.env.close();
  }

  /**
   * Runs `work(tx)` in one write transaction and returns its result; then,
   * only if it committed, hands the changed cache keys to `afterCommit`.
   */
  write(work, afterCommit) {
    const tx = new WriteTx(this);
    const result = this.env.transactionSync(() => work(tx));
    afterCommit(tx.changes);
    return result;
  }

  /** A read view of the latest committed state, read afresh (not an earlier read transaction of this thread). */
  freshView() {
    this.env.resetReadTxn();
    this.#latest ??= new ReadView(this, undefined);
    return this.#latest;
  }

  #latest = null;

  /** The persistent snapshot records, oldest first. */
  snapshotRecords() {
    // @ts-expect-error lmdb's typings give asArray as a Promise; a range read synchronously (as here) gives the array itself
    return this.snapshots.getRange({}).map(({ value }) => value).asArray.sort((a, b) => a.epoch - b.epoch);
  }

  /** A read view inside an lmdb read transaction (a snapshot). */
  view(transaction) {
    return new ReadView(this, transaction);
  }
}

/** Reads of one state of the store: the latest, or a read transaction's. */
export class ReadView {
  #store;
  #options;

  constructor(store, transaction) {
    this.#store = store;
    this.#options = transaction === undefined ? undefined : { transaction };
  }

  inode(ino) {
    return this.#store.inodes.get(ino, this.#options);
  }

  /** The inode number `name` in directory `parent` names, or 0. */
  dirent(parent, name) {
    return this.#store.dirents.get([parent, name], this.#options)?.ino ?? 0;
  }

  /** [{ name, ino, type }] of directory `parent`, in name order. */
  entries(parent) {
    const range = this.#store.dirents.getRange({ start: [parent, ''], end: [parent + 1, ''], ...this.#options });
    return range.map(({ key, value }) => ({ name: key[1], ino: value.ino, type: value.type })).asArray;
  }

  /**
   * The file's bytes (its holes as zeros); null if a chunk is gone, which
   * happens only to a record read earlier from a cache and since replaced
   * by another thread (its caller reads the record again, uncached).
   * Larger than one read of node:fs's readFile: ERR_FS_FILE_TOO_LARGE.
   */
  content(inode) {
    if (inode.chunks === undefined) return inode.data ?? Buffer.alloc(0);
    if (inode.size > MAX_READ_BYTES) throw fileTooLarge(inode.size);
    return this.contentRange(inode, 0, inode.size);
  }

  /** Up to `length` bytes of the file from `position` (fewer at its end): only the stored chunks holding them are read. Null as for content(). */
  contentRange(inode, position, length) {
    const end = Math.min(inode.size, position + length);
    if (end <= position) return Buffer.alloc(0);
    if (inode.chunks === undefined) return (inode.data ?? Buffer.alloc(0)).subarray(position, end);
    const { chunkBytes } = inode;
    const first = Math.floor(position / chunkBytes);
    const stored = storedIn(inode.chunks, Math.ceil(inode.size / chunkBytes), first, Math.floor((end - 1) / chunkBytes));
    const parts = stored.map(([, hash]) => this.#store.blobs.get(hash, this.#options));
    if (parts.includes(undefined)) return null;
    // One stored chunk holding the whole range: no copy.
    if (stored.length === 1 && stored[0][0] * chunkBytes <= position && (stored[0][0] + 1) * chunkBytes >= end) {
      const start = position - stored[0][0] * chunkBytes;
      return parts[0].subarray(start, start + end - position);
    }
    const bytes = Buffer.alloc(end - position);
    stored.forEach(([index], i) => {
      const chunkStart = index * chunkBytes;
      const from = Math.max(position, chunkStart);
      parts[i].copy(bytes, from - position, from - chunkStart, Math.min(end, chunkStart + chunkBytes) - chunkStart);
    });
    return bytes;
  }
}

/**
 * The operations of one write transaction: its reads are a ReadView's
 * without a read transaction (inside transactionSync they read the write
 * transaction); `changes` maps cache keys to their new values (undefined: gone).
 */
export class WriteTx extends ReadView {
  changes = new Map();
  #store;
  #epoch = -1;
  #pins = null;
  /** Keys whose pre-transaction record has been seen to (copied to history or not needed). */
  #preserved = new Set();

  constructor(store) {
    super(store, undefined);
    this.#store = store;
  }

  /** The epoch this transaction writes in. */
  get epoch() {
    if (this.#epoch < 0) this.#epoch = this.#store.meta.get('epoch') ?? 0;
    return this.#epoch;
  }

  /** The epochs of the persistent snapshots, ascending (read from their records once per transaction). */
  get pins() {
    this.#pins ??= this.#store.snapshotRecords().map((record) => record.epoch);
    return this.#pins;
  }

  /** Records persistent snapshot `name` of the state so far (this epoch's), starts the next epoch, and returns the record. */
  addSnapshot(name) {
    const record = { name, epoch: this.epoch, createdAt: Date.now() };
    this.#store.snapshots.putSync(name, record);
    this.#store.meta.putSync('epoch', record.epoch + 1);
    this.#epoch = record.epoch + 1;
    this.#pins = null;
    return record;
  }

  /** Removes persistent snapshot `name`'s record; returns it (undefined if there was none). */
  removeSnapshot(name) {
    const record = this.#store.snapshots.get(name);
    if (record === undefined) return undefined;
    this.#store.snapshots.removeSync(name);
    this.#pins = null;
    return record;
  }

  /** Whether a persistent snapshot needs a record current from epoch `first` until `last` (before this one). */
  needed(first, last = this.epoch - 1) {
    return pinned(this.pins, first, last);
  }

  /**
   * Before the first change of a record in this transaction (`cacheKey`
   * names it): its stored version (`db` at `key`) goes to `history` at
   * [...historyKey, last epoch] if a snapshot needs it.
   */
  #preserve(cacheKey, db, key, history, historyKey) {
    if (this.#preserved.has(cacheKey)) return;
    this.#preserved.add(cacheKey);
    const stored = db.get(key);
    const first = stored?.e ?? 0;
    if (stored === undefined || first >= this.epoch || !this.needed(first)) return;
    history.putSync([...historyKey, this.epoch - 1], stored);
    // A history record holds its own references to the blobs.
    for (const hash of chunkHashes(stored)) this.#store.refs.putSync(hash, this.#store.refs.get(hash) + 1);
  }

  #preserveInode(ino) {
    this.#preserve(inodeKey(ino), this.#store.inodes, ino, this.#store.inodeHistory, [ino]);
  }

  #preserveDirent(parent, name) {
    this.#preserve(direntKey(parent, name), this.#store.dirents, [parent, name], this.#store.direntHistory, [parent, name]);
  }

  newIno() {
    const ino = this.#store.meta.get('nextIno');
    this.#store.meta.putSync('nextIno', ino + 1);
    return ino;
  }

  putInode(inode) {
    this.#preserveInode(inode.ino);
    inode.e = this.epoch;
    this.#store.inodes.putSync(inode.ino, inode);
    this.changes.set(inodeKey(inode.ino), inode);
  }

  /** An open handle takes (+1) or gives back (-1) its hold on file `ino`; the last one out removes a file no name holds. */
  holdInode(ino, delta) {
    const count = (this.#store.handles.get(ino) ?? 0) + delta;
    if (count > 0) {
      this.#store.handles.putSync(ino, count);
      return;
    }
    this.#store.handles.removeSync(ino);
    const inode = this.#store.inodes.get(ino);
    if (inode?.nlink === 0) this.removeInode(inode);
  }

  /**
   * The file (or directory) lost its last name: it goes, unless open handles
   * hold it (then it lives on with nlink 0, as on POSIX: a handle of a
   * removed directory still fstat()s, and its reads fail with EISDIR).
   */
  unlinkInode(inode) {
    if ((this.#store.handles.get(inode.ino) ?? 0) > 0) {
      inode.nlink = 0;
      inode.ctimeMs = after(inode.ctimeMs);
      this.putInode(inode);
      return;
    }
    this.removeInode(inode);
  }

  removeInode(inode) {
    this.#preserveInode(inode.ino);
    this.dropContent(inode);
    this.#store.inodes.removeSync(inode.ino);
    this.changes.set(inodeKey(inode.ino), undefined);
  }

  putDirent(parent, name, ino, type) {
    this.#preserveDirent(parent, name);
    this.#store.dirents.putSync([parent, name], { ino, type, e: this.epoch });
    this.changes.set(direntKey(parent, name), ino);
  }

  removeDirent(parent, name) {
    this.#preserveDirent(parent, name);
    this.#store.dirents.removeSync([parent, name]);
    this.changes.set(direntKey(parent, name), 0);
  }

  /** Makes `data` the content of `inode` (inline when small, else chunks in the blob store), releasing what it held. */
  setContent(inode, data) {
    this.#preserveInode(inode.ino);
    // The new chunks are held before the old are let go: a rewrite of the
    // same bytes keeps its blobs instead of deleting and storing them again.
    const old = chunkHashes(inode);
    delete inode.data;
    delete inode.chunks;
    delete inode.chunkBytes;
    inode.size = data.length;
    inode.blocks = Math.ceil(data.length / 512);
    if (data.length <= this.#store.inlineBytes) {
      if (data.length > 0) inode.data = Buffer.from(data);
    } else {
      // The file keeps its chunk size (options.chunkBytes may differ when the store is next opened).
      const chunkBytes = this.#store.chunkBytes;
      inode.chunkBytes = chunkBytes;
      inode.chunks = [];
      for (let start = 0; start < data.length; start += chunkBytes) {
        inode.chunks.push(this.#holdBlob(data.subarray(start, Math.min(data.length, start + chunkBytes))));
      }
    }
    for (const hash of old) this.#releaseBlob(hash);
  }

  /**
   * Writes `bytes` at `position` of the file; a gap past its end becomes a
   * hole. A chunked file rewrites only the chunks the write touches (and
   * its old last one, whose length may change). The caller checks the
   * size against MAX_FILE_BYTES.
   */
  writeAt(inode, position, bytes) {
    if (bytes.length === 0) return;
    const size = Math.max(inode.size, position + bytes.length);
    if (size <= this.#store.inlineBytes) {
      const content = Buffer.alloc(size);
      this.contentRange(inode, 0, inode.size).copy(content);
      content.set(bytes, position);
      this.setContent(inode, content);
      return;
    }
    const end = position + bytes.length;
    this.#rechunk(inode, size, position, end, (chunk, chunkStart) => {
      const from = Math.max(position, chunkStart);
      const to = Math.min(end, chunkStart + chunk.length);
      if (from < to) chunk.set(bytes.subarray(from - position, to - position), from - chunkStart);
    });
  }

  /** Cuts the file to `length` bytes, or extends it with a hole. The caller checks `length` against MAX_FILE_BYTES. */
  truncate(inode, length) {
    if (length <= this.#store.inlineBytes) {
      const content = Buffer.alloc(length);
      this.contentRange(inode, 0, Math.min(length, inode.size)).copy(content);
      this.setContent(inode, content);
      return;
    }
    this.#rechunk(inode, length, length, length, () => {});
  }

  /**
   * Gives the file `size` bytes in chunks, bytes [from, to) rewritten by
   * `fill(chunk, chunkStart)`. Rebuilt (from the old bytes, zero-extended,
   * then filled): the chunks holding bytes [from, to), the old and new last
   * chunks if stored (their lengths change), and every chunk of an inline
   * file (the first write past inlineBytes). Every other chunk is kept as
   * it is; one past the old end that the write does not touch is a hole.
   */
  #rechunk(inode, size, from, to, fill) {
    this.#preserveInode(inode.ino);
    const inline = inode.chunks === undefined;
    const chunkBytes = inline ? this.#store.chunkBytes : inode.chunkBytes;
    const old = inline ? [] : inode.chunks;
    const oldCount = Math.ceil(inode.size / chunkBytes);
    const count = Math.ceil(size / chunkBytes);
    const rebuilt = new Set([oldCount - 1, count - 1]);
    if (from < to) for (let i = Math.floor(from / chunkBytes); i <= Math.floor((to - 1) / chunkBytes); i++) rebuilt.add(i);
    if (inline) for (let i = 0; i < oldCount; i++) rebuilt.add(i);
    const indexes = [...rebuilt].filter((i) => i >= 0 && i < count).sort((a, b) => a - b);
    const oldChunks = inline ? new Map() : new Map(storedIn(old, oldCount, indexes[0], indexes.at(-1)));
    const updates = new Map();
    for (const i of indexes) {
      const chunkStart = i * chunkBytes;
      const length = Math.min(chunkBytes, size - chunkStart);
      const oldBytes = i >= oldCount ? undefined : inline ? inode.data.subarray(chunkStart, chunkStart + chunkBytes) : oldChunks.has(i) ? this.#store.blobs.get(oldChunks.get(i)) : undefined;
      if (oldBytes === undefined && !(chunkStart < to && chunkStart + length > from)) {
        updates.set(i, null); // a hole stays a hole
        continue;
      }
      const chunk = Buffer.alloc(length);
      oldBytes?.copy(chunk, 0, 0, Math.min(length, oldBytes.length));
      fill(chunk, chunkStart);
      updates.set(i, this.#holdBlob(chunk));
    }
    const { chunks, released } = spliceChunks(old, count, updates);
    for (const hash of released) this.#releaseBlob(hash);
    delete inode.data;
    inode.chunkBytes = chunkBytes;
    inode.chunks = chunks;
    inode.size = size;
    inode.blocks = storedBlocks(chunks, size, chunkBytes);
  }

  /** Releases the blobs `inode` references; a blob no one references is deleted. */
  dropContent(inode) {
    for (const hash of chunkHashes(inode)) this.#releaseBlob(hash);
  }

  /** Stores `chunk` in the blob store (once per content) and takes a reference to it; returns its hash. */
  #holdBlob(chunk) {
    const hash = createHash('sha256').update(chunk).digest('hex');
    const refs = this.#store.refs.get(hash) ?? 0;
    if (refs === 0) this.#store.blobs.putSync(hash, chunk);
    this.#store.refs.putSync(hash, refs + 1);
    return hash;
  }

  #releaseBlob(hash) {
    const refs = this.#store.refs.get(hash) ?? 0;
    if (refs > 1) {
      this.#store.refs.putSync(hash, refs - 1);
    } else {
      this.#store.refs.removeSync(hash);
      this.#store.blobs.removeSync(hash);
    }
  }
}

/** Whether one of the snapshot epochs `pins` lies in [first, last]: a record current for those epochs is needed. */
export function pinned(pins, first, last) {
  return pins.some((pin) => pin >= first && pin <= last);
}

export function inodeKey(ino) {
  return `i${ino}`;
}

export function direntKey(parent, name) {
  return `d${parent}/${name}`;
}

// The lmdb side of InodeFS: one environment, its databases, and the
// process that owns it.
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
// Every change runs in one synchronous lmdb transaction, a WriteTx
// (write-transaction.js); reads go through a ReadView (read-view.js). The
// records are inode.js's, and a large file's content is a chunk list
// (chunk-list.js).

import { randomBytes } from 'node:crypto';
import { closeSync, constants, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'lmdb';
import { ArenaCacheError, codes } from '../errors.js';
import { storeError } from './store-errors.js';
import { newInode, ROOT_INO } from './inode.js';
import { ReadView } from './read-view.js';
import { checkSameFiles, prepareStoreFiles, warnReadable } from './store-files.js';
import { WriteTx } from './write-transaction.js';
import { nativeAvailable } from '../native/addon.js';
import { fileLock, LOCK_EXCLUSIVE, LOCK_SHARED } from '../native/mapped-file.js';
import { isProcessAlive } from '../native/thread-identity.js';

const MAGIC = 'arenacache-inodefs';
const VERSION = 1;
/** LMDB's meta page magic, where lmdb-js's format has it (page 0, byte 24). */
const LMDB_MAGIC = 0xbeefc0de;
const LMDB_MAGIC_OFFSET = 24;
/** @type {Set<import('lmdb').Key>} */
const OUR_DATABASES = new Set(['meta', 'inodes', 'dirents', 'blobs', 'refs', 'snapshots', 'inodeHistory', 'direntHistory', 'handles']);

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

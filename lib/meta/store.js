// The lmdb side of InodeFS: one environment, four databases, and the
// transactions every operation runs in.
//
//   meta     'format' -> { magic, version }, 'nextIno' -> number,
//            'owner' -> { pid, opens } (the process that has it open)
//   inodes   ino -> inode record (type, mode, size, times, nlink, and the
//            content: inline `data`, a list of blob `chunks`, or `target`)
//   dirents  [parentIno, name] -> { ino, type }: ordered keys, so readdir
//            is one range scan and lists names in byte order
//   blobs    sha256 (hex) -> bytes: content-addressed chunks of large
//            files, shared by every file holding them
//   refs     sha256 (hex) -> how many chunk lists hold the blob (it is
//            deleted with its last reference)
//
// Every change runs in one synchronous lmdb transaction (atomic: a process
// killed mid-write leaves the store as it was before). The inode cache hears
// of a change only once its transaction has committed.

import { createHash } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { open } from 'lmdb';
import { ArenaCacheError, codes } from '../errors.js';
import { isProcessAlive } from '../native.js';

export const ROOT_INO = 1;
const MAGIC = 'arenacache-inodefs';
const VERSION = 1;
/** LMDB's meta page magic, where lmdb-js's format has it (page 0, byte 24). */
const LMDB_MAGIC = 0xbeefc0de;
const LMDB_MAGIC_OFFSET = 24;
const OUR_DATABASES = new Set(['meta', 'inodes', 'dirents', 'blobs', 'refs']);

export const S_IFMT = 0o170000;
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;

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

function openError(path, message, cause) {
  return new ArenaCacheError(codes.ERR_INODEFS_STORE, `${path} cannot be opened as an InodeFS store: ${message}`, cause === undefined ? undefined : { cause });
}

/**
 * Refuses an existing file without LMDB's meta page: lmdb itself may crash
 * the process on such a file instead of failing.
 */
function checkLmdbHeader(path) {
  let fd;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if (error.code === 'ENOENT') return; // created by lmdb
    throw openError(path, error.message, error);
  }
  try {
    const head = Buffer.alloc(LMDB_MAGIC_OFFSET + 4);
    const length = readSync(fd, head, 0, head.length, 0);
    if (length === 0) return;
    if (length < head.length || head.readUInt32LE(LMDB_MAGIC_OFFSET) !== LMDB_MAGIC) throw openError(path, 'it is not an lmdb file (no lmdb meta page at its start)');
  } finally {
    closeSync(fd);
  }
}

export class InodeStore {
  /**
   * @param {string} path the lmdb file
   * @param {{ maxReaders: number, inlineBytes: number, chunkBytes: number }} options
   */
  constructor(path, { maxReaders, inlineBytes, chunkBytes }) {
    this.path = path;
    this.inlineBytes = inlineBytes;
    this.chunkBytes = chunkBytes;
    checkLmdbHeader(path);
    try {
      this.env = open({ path, maxDbs: 8, maxReaders, noSubdir: true });
      this.foreignNames = [...this.env.getKeys({ limit: 8 })].filter((name) => !OUR_DATABASES.has(name));
      this.meta = this.env.openDB('meta');
      this.inodes = this.env.openDB('inodes');
      this.dirents = this.env.openDB('dirents');
      this.blobs = this.env.openDB('blobs', { encoding: 'binary' });
      this.refs = this.env.openDB('refs');
    } catch (cause) {
      this.env?.close();
      throw openError(path, `lmdb refuses it (${cause.message})`, cause);
    }
    try {
      this.#checkFormat();
      this.#claimOwnership();
    } catch (error) {
      this.env.close();
      throw error;
    }
  }

  #checkFormat() {
    const format = this.meta.get('format');
    if (format === undefined) {
      if (this.foreignNames.length > 0 || this.inodes.getCount() > 0) {
        throw openError(this.path, `it is an lmdb file of something else (it holds ${this.foreignNames.map((n) => JSON.stringify(n)).join(', ') || 'inodes without a format record'})`);
      }
      this.env.transactionSync(() => {
        this.meta.putSync('format', { magic: MAGIC, version: VERSION });
        this.meta.putSync('nextIno', ROOT_INO + 1);
        this.inodes.putSync(ROOT_INO, newInode(ROOT_INO, 'dir', 0o755, Date.now()));
      });
      return;
    }
    if (format?.magic !== MAGIC) throw openError(this.path, 'its format record is not an InodeFS one');
    if (format.version !== VERSION) throw openError(this.path, `it has format version ${format.version}; this arenacache reads version ${VERSION}`);
  }

  // Caches are per process: two processes writing one store would leave
  // each other's caches stale, so a second live process is refused. A
  // killed owner is detected by its pid and replaced.
  #claimOwnership() {
    this.env.transactionSync(() => {
      const owner = this.meta.get('owner');
      if (owner !== undefined && owner.pid !== process.pid && isProcessAlive(owner.pid)) {
        throw new ArenaCacheError(codes.ERR_INODEFS_BUSY, `${this.path} is open in process ${owner.pid}; an InodeFS store is used by one process at a time (its threads share it)`);
      }
      const opens = owner?.pid === process.pid ? owner.opens + 1 : 1;
      this.meta.putSync('owner', { pid: process.pid, opens });
    });
  }

  close() {
    this.env.transactionSync(() => {
      const owner = this.meta.get('owner');
      if (owner?.pid !== process.pid) return;
      if (owner.opens <= 1) this.meta.removeSync('owner');
      else this.meta.putSync('owner', { pid: process.pid, opens: owner.opens - 1 });
    });
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

  content(inode) {
    if (inode.chunks === undefined) return inode.data ?? Buffer.alloc(0);
    return Buffer.concat(inode.chunks.map((hash) => this.#store.blobs.get(hash, this.#options)), inode.size);
  }
}

/**
 * The operations of one write transaction: its reads are a ReadView's
 * without a read transaction (inside transactionSync they read the write
 * transaction); `changes` maps cache keys to their new values (undefined: gone).
 */
class WriteTx extends ReadView {
  changes = new Map();
  #store;

  constructor(store) {
    super(store, undefined);
    this.#store = store;
  }

  newIno() {
    const ino = this.#store.meta.get('nextIno');
    this.#store.meta.putSync('nextIno', ino + 1);
    return ino;
  }

  putInode(inode) {
    this.#store.inodes.putSync(inode.ino, inode);
    this.changes.set(inodeKey(inode.ino), inode);
  }

  removeInode(inode) {
    this.dropContent(inode);
    this.#store.inodes.removeSync(inode.ino);
    this.changes.set(inodeKey(inode.ino), undefined);
  }

  putDirent(parent, name, ino, type) {
    this.#store.dirents.putSync([parent, name], { ino, type });
    this.changes.set(direntKey(parent, name), ino);
  }

  removeDirent(parent, name) {
    this.#store.dirents.removeSync([parent, name]);
    this.changes.set(direntKey(parent, name), 0);
  }

  /** Makes `data` the content of `inode` (inline when small, else chunks in the blob store), releasing what it held. */
  setContent(inode, data) {
    this.dropContent(inode);
    delete inode.data;
    delete inode.chunks;
    inode.size = data.length;
    inode.blocks = Math.ceil(data.length / 512);
    if (data.length <= this.#store.inlineBytes) {
      if (data.length > 0) inode.data = Buffer.from(data);
      return;
    }
    const chunkBytes = this.#store.chunkBytes;
    inode.chunks = [];
    for (let start = 0; start < data.length; start += chunkBytes) {
      const chunk = data.subarray(start, Math.min(data.length, start + chunkBytes));
      const hash = createHash('sha256').update(chunk).digest('hex');
      const refs = this.#store.refs.get(hash) ?? 0;
      if (refs === 0) this.#store.blobs.putSync(hash, chunk);
      this.#store.refs.putSync(hash, refs + 1);
      inode.chunks.push(hash);
    }
  }

  /** Releases the blobs `inode` references; a blob no one references is deleted. */
  dropContent(inode) {
    for (const hash of inode.chunks ?? []) {
      const refs = this.#store.refs.get(hash) ?? 0;
      if (refs > 1) {
        this.#store.refs.putSync(hash, refs - 1);
      } else {
        this.#store.refs.removeSync(hash);
        this.#store.blobs.removeSync(hash);
      }
    }
  }
}

export function inodeKey(ino) {
  return `i${ino}`;
}

export function direntKey(parent, name) {
  return `d${parent}/${name}`;
}

// InodeFS: a filesystem whose inodes and directory entries live in lmdb,
// with a shared inode cache and snapshots (see docs/inode-fs.md).

import { describe, ArenaCacheError, codes } from '../errors.js';
import { SharedCache } from '../cache/shared-cache.js';
import { checkArenaFileMode } from '../cache/options.js';
import { checkBoolean, checkInteger, withDefaults } from '../validate.js';
import { checkMode, toBytes, writeOptions } from '../fs-compat/fs-arguments.js';
import { fsError } from '../fs-compat/fs-errors.js';
import { parseFlags } from '../fs-compat/open-flags.js';
import { CachedStats } from '../fs-compat/stats.js';
import { kBacking } from '../internal-symbols.js';
import { InodeCache } from './inode-cache.js';
import { MAX_NAME_BYTES, MAX_PATH_BYTES, pathEnding, resolve, tooLong } from './resolve.js';
import { FsReader, promiseForms } from './reader.js';
import { InodeBacking } from './inode-backing.js';
import { Snapshot } from './snapshot.js';
import { InodeFileHandle } from './inode-file-handle.js';
import { fsck } from './fsck.js';
import { reclaimHistory } from './history.js';
import { after, checkFileSize, direntKey, inodeKey, newInode, ROOT_INO, touch } from './inode.js';
import { InodeStore } from './inode-store.js';

/** Paths the memo of resolved paths keeps per InodeFS (oldest dropped first). */
const MEMO_ENTRIES = 4096;
/** A memo entry's life at most: a 32-bit lock sequence that wrapped around must never look unchanged. */
const MEMO_MAX_AGE_MS = 1000;

/** The longest persistent snapshot name, in UTF-8 bytes. */
const MAX_SNAPSHOT_NAME_BYTES = 255;

const DEFAULTS = Object.freeze({
  /** Entries (inodes and directory entries) the private inode cache holds; 0: no cache. */
  cacheSize: 1000,
  /** A SharedCache to use as the inode cache instead of a private one (give the same to every thread). */
  cache: undefined,
  /** lmdb reader slots: the bound on snapshots open at once (each holds one). */
  maxReaders: 126,
  /** Files up to this size are stored inside their inode record; larger ones in chunks in the blob store. */
  inlineBytes: 4096,
  /** The chunk size of large files in the blob store (chunks are deduplicated by content). */
  chunkBytes: 256 * 1024,
  /**
   * Whether each write is on disk (fsync) before it resolves. false: a
   * killed process still loses nothing committed, but a machine crash may
   * lose the last writes (never tear the store).
   */
  durable: true,
  /**
   * The mode of the store's files (the lmdb file and its lock file) when
   * they are created, set exactly (the umask does not apply). Group or
   * others may not write (open() refuses such files); a mode that lets
   * them read warns.
   */
  mode: 0o600,
});

function resolveOptions(options = {}) {
  const resolved = withDefaults(options, DEFAULTS, 'options');
  checkInteger(resolved.cacheSize, 'options.cacheSize', 0, 2 ** 24, { from: '0 (no cache)' });
  checkInteger(resolved.maxReaders, 'options.maxReaders', 1, 2 ** 16);
  checkInteger(resolved.inlineBytes, 'options.inlineBytes', 0, 2 ** 20);
  checkInteger(resolved.chunkBytes, 'options.chunkBytes', 4096, 2 ** 26);
  checkBoolean(resolved.durable, 'options.durable');
  checkArenaFileMode(resolved.mode, 'options.mode', 'the store files');
  if (resolved.cache !== undefined && !(resolved.cache instanceof SharedCache)) {
    throw new TypeError(`options.cache must be a SharedCache (got ${describe(resolved.cache)})`);
  }
  return resolved;
}

function closedError() {
  return new ArenaCacheError(codes.ERR_INODEFS_CLOSED, 'the InodeFS is closed: close() was called on this instance');
}

export class InodeFS extends FsReader {
  #store;
  #cache;
  #closed = false;
  #cachedView;
  /**
   * Open snapshots, weakly (one dropped unreleased is released when
   * collected): close() releases the rest, whose read transactions would
   * otherwise outlive the environment.
   */
  #snapshots = new Set();

  /**
   * Opens (or creates) the store at `path`.
   * @param {string} path an lmdb file
   * @param {typeof DEFAULTS} [options]
   */
  static async open(path, options) {
    if (typeof path !== 'string' || path.length === 0) throw new TypeError(`path must be the path of an lmdb file (got ${describe(path)})`);
    return new InodeFS(path, resolveOptions(options));
  }

  /** @private use InodeFS.open() */
  constructor(path, resolved) {
    super();
    this.#store = new InodeStore(path, { ...resolved, privateCache: resolved.cache === undefined });
    const store = this.#store;
    this.#cache = new InodeCache(resolved.cache, resolved.cacheSize, resolved.cache === undefined ? '' : `${store.id}.${store.generation}/`);
    const cache = this.#cache;
    // The latest committed state through the cache; a miss reads afresh.
    this.#cachedView = {
      inode: (ino) => cache.get(inodeKey(ino), () => store.freshView().inode(ino)),
      dirent: (parent, name) => cache.get(direntKey(parent, name), () => store.freshView().dirent(parent, name)),
      entries: (parent) => store.freshView().entries(parent),
      content: (inode) => store.freshView().content(inode),
      contentRange: (inode, position, length) => store.freshView().contentRange(inode, position, length),
    };
  }

  view() {
    if (this.#closed) throw closedError();
    // Without a cache, one fresh read transaction serves the whole call.
    return this.#cache.enabled ? this.#cachedView : this.#store.freshView();
  }

  /**
   * Resolves through the path memo: a path resolved from cache hits alone
   * is remembered with the stamps of those hits, and answered again while
   * every stamp holds (no thread or process has written, evicted or filled
   * those cache shards since), for at most MEMO_MAX_AGE_MS.
   */
  existing(view, path, syscall, follow) {
    if (view !== this.#cachedView) return super.existing(view, path, syscall, follow);
    const memo = follow ? this.#memo : this.#memoNoFollow;
    const known = memo.get(path);
    const now = Date.now();
    if (known !== undefined && now < known.until && this.#cache.holds(known.stamps)) {
      this.#cache.countHits(known.stamps.length);
      return known.inode;
    }
    this.#cache.trace();
    let inode;
    let stamps;
    try {
      inode = super.existing(view, path, syscall, follow);
    } finally {
      // Ended even when the path is not found: no later lookup may add to it.
      stamps = this.#cache.traced();
    }
    if (stamps !== null) {
      if (memo.size >= MEMO_ENTRIES) memo.delete(memo.keys().next().value);
      memo.set(path, { inode, stamps, until: now + MEMO_MAX_AGE_MS });
    }
    return inode;
  }

  #memo = new Map();
  #memoNoFollow = new Map();

  uncachedView() {
    if (this.#closed) throw closedError();
    return this.#store.freshView();
  }

  /** This InodeFS as the storage of a CacheFS: new CacheFS({ root: inodeFs, cache }). */
  [kBacking]() {
    if (this.#closed) throw closedError();
    return new InodeBacking(this);
  }

  get path() {
    return this.#store.path;
  }

  writeFileSync(path, data, options) {
    const { encoding, mode = 0o666 } = writeOptions(options, 'writeFile');
    this.storeSync(path, toBytes(data, encoding), 'w', mode);
  }

  appendFileSync(path, data, options) {
    const { encoding, mode = 0o666 } = writeOptions(options, 'appendFile');
    this.storeSync(path, toBytes(data, encoding), 'a', mode);
  }

  /**
   * Writes `bytes` to the file at `path` (created with `mode` if missing):
   * `how` 'w' replaces its content, 'a' appends, 'create' only creates it.
   * Returns its stats as this write left them: what CacheFS's `store`
   * operation gives (see lib/fs/backing.js).
   */
  storeSync(path, bytes, how, mode) {
    return this.#write((tx) => {
      const inode = this.#fileForWrite(tx, path, mode);
      if (how === 'create') return new CachedStats(inode);
      if (how === 'a') {
        checkFileSize(inode.size + bytes.length, 'write', path);
        tx.writeAt(inode, inode.size, bytes);
      } else {
        tx.setContent(inode, bytes);
      }
      touch(inode);
      tx.putInode(inode);
      return new CachedStats(inode);
    });
  }

  mkdirSync(path, options) {
    const recursive = options?.recursive === true;
    const mode = options?.mode ?? 0o777;
    checkMode(mode, 'options.mode');
    return this.#write((tx) => {
      if (!recursive) {
        // Anything there is in the way, a link too (dangling or not): mkdir(2) follows none.
        const { parent, name, inode } = resolve(tx, path, 'mkdir', false);
        if (inode !== undefined) throw fsError('EEXIST', 'mkdir', path);
        this.#link(tx, parent, name, newInode(tx.newIno(), 'dir', mode, Date.now()));
        return undefined;
      }
      // Like node:fs: resolves to the first directory created, or undefined.
      let first;
      const names = path.split('/').filter((n) => n !== '' && n !== '.');
      // Each name may be created: a long one fails the call before any is (node:fs names the whole path).
      if (tooLong(path, MAX_PATH_BYTES) || names.some((name) => tooLong(name, MAX_NAME_BYTES))) throw fsError('ENAMETOOLONG', 'mkdir', path);
      // Only a plain last name may name something else already there (EEXIST); one to look in, or "x/", must be a directory.
      const asDirectory = pathEnding(path) !== '';
      for (let depth = 1; depth <= names.length; depth++) {
        const prefix = `/${names.slice(0, depth).join('/')}`;
        let { parent, name, inode } = resolve(tx, prefix, 'mkdir', false);
        // A link is followed to its directory; one that leads nowhere is not created through.
        if (inode?.type === 'symlink') {
          inode = resolve(tx, prefix, 'mkdir', true).inode;
          if (inode === undefined) throw fsError('ENOENT', 'mkdir', path);
        }
        if (inode !== undefined) {
          if (inode.type !== 'dir') throw fsError(depth < names.length || asDirectory ? 'ENOTDIR' : 'EEXIST', 'mkdir', path);
          continue;
        }
        this.#link(tx, parent, name, newInode(tx.newIno(), 'dir', mode, Date.now()));
        first ??= prefix;
      }
      return first;
    });
  }

  symlinkSync(target, path) {
    if (typeof target !== 'string' || target.length === 0) throw new TypeError(`target must be a non-empty string (got ${describe(target)})`);
    this.#write((tx) => {
      if (tooLong(target, MAX_PATH_BYTES)) throw fsError('ENAMETOOLONG', 'symlink', target, path);
      const { parent, name, inode, ending } = withBoth(() => resolve(tx, path, 'symlink', false), 'symlink', target, path);
      if (inode !== undefined) throw fsError('EEXIST', 'symlink', target, path);
      // "x/" asks for a directory, and a link is none.
      if (ending === 'slash') throw fsError('ENOENT', 'symlink', target, path);
      const link = newInode(tx.newIno(), 'symlink', 0o777, Date.now());
      link.target = target;
      link.size = Buffer.byteLength(target);
      this.#link(tx, parent, name, link);
    });
  }

  unlinkSync(path) {
    this.#write((tx) => {
      // "d/." resolves to d: EISDIR below.
      const { parent, name, inode, ending } = resolve(tx, path, 'unlink', false);
      if (inode === undefined) throw fsError('ENOENT', 'unlink', path);
      if (inode.type === 'dir') throw fsError('EISDIR', 'unlink', path);
      // "a.txt/" or "link/" (not followed): what is there is not the directory asked for.
      if (ending === 'slash') throw fsError('ENOTDIR', 'unlink', path);
      this.#unlinkEntry(tx, parent, name, inode);
    });
  }

  rmSync(path, options) {
    const recursive = options?.recursive === true;
    const force = options?.force === true;
    this.#write((tx) => {
      const ending = pathEnding(path);
      let found;
      try {
        // node:fs's rm looks first with lstat, which "x/" makes follow a link to what it names.
        found = resolve(tx, path, 'rm', ending !== '');
      } catch (error) {
        // Like node:fs, force ignores a missing parent (not a file in the way: ENOTDIR).
        if (force && error.code === 'ENOENT') return;
        throw error;
      }
      const { parent, name, inode } = found;
      if (inode === undefined) {
        if (force) return;
        throw fsError('ENOENT', 'rm', path);
      }
      if (inode.ino === ROOT_INO) throw fsError('EBUSY', 'rm', path);
      if (ending !== '' && inode.type !== 'dir') throw fsError('ENOTDIR', 'rm', path);
      if (inode.type === 'dir' && !recursive) throw Object.assign(fsError('EISDIR', 'rm', path), { code: 'ERR_FS_EISDIR' });
      // Then it removes with rmdir(2), which refuses "d/." (EINVAL) and a link
      // named "link/" (ENOTDIR). Refused before anything is removed, where
      // node's rmSync may first empty the directory.
      if (ending === 'dot') throw fsError('EINVAL', 'rm', path);
      if (ending === 'slash' && resolve(tx, path, 'rm', false).inode.type === 'symlink') throw fsError('ENOTDIR', 'rm', path);
      this.#removeTree(tx, parent, name, inode);
    });
  }

  renameSync(from, to) {
    this.#write((tx) => {
      // Both paths are measured before either is looked up, as the kernel copies both in first.
      if (tooLong(from, MAX_PATH_BYTES) || tooLong(to, MAX_PATH_BYTES)) throw fsError('ENAMETOOLONG', 'rename', from, to);
      // As rename(2): both paths are looked up before either is judged.
      const source = withBoth(() => resolve(tx, from, 'rename', false), 'rename', from, to);
      const target = withBoth(() => resolve(tx, to, 'rename', false), 'rename', from, to);
      // "d/." names a directory, but no entry in one to move or replace.
      if (source.ending === 'dot' || target.ending === 'dot') throw fsError('EBUSY', 'rename', from, to);
      if (source.inode === undefined) throw fsError('ENOENT', 'rename', from, to);
      if (source.inode.ino === ROOT_INO || target.name === '') throw fsError('EBUSY', 'rename', from, to);
      // "x/" on either side asks for a directory: only a directory (not a link to one) moves so.
      if (source.inode.type !== 'dir' && (source.ending === 'slash' || target.ending === 'slash')) throw fsError('ENOTDIR', 'rename', from, to);
      if (target.inode?.ino === source.inode.ino) return;
      if (source.inode.type === 'dir' && this.#isWithin(tx, target.parent, source.inode.ino)) throw fsError('EINVAL', 'rename', from, to);
      if (target.inode !== undefined) {
        if (source.inode.type === 'dir' && target.inode.type !== 'dir') throw fsError('ENOTDIR', 'rename', from, to);
        if (source.inode.type !== 'dir' && target.inode.type === 'dir') throw fsError('EISDIR', 'rename', from, to);
        if (target.inode.type === 'dir' && tx.entries(target.inode.ino).length > 0) throw fsError('ENOTEMPTY', 'rename', from, to);
        this.#removeTree(tx, target.parent, target.name, target.inode);
      }
      tx.removeDirent(source.parent.ino, source.name);
      tx.putDirent(target.parent.ino, target.name, source.inode.ino, source.inode.type);
      if (source.inode.type === 'dir' && source.parent.ino !== target.parent.ino) {
        this.#touchDir(tx, source.parent.ino, -1);
        this.#touchDir(tx, target.parent.ino, +1);
      } else {
        this.#touchDir(tx, source.parent.ino, 0);
        if (target.parent.ino !== source.parent.ino) this.#touchDir(tx, target.parent.ino, 0);
      }
      source.inode.ctimeMs = after(source.inode.ctimeMs);
      if (source.inode.type === 'dir') source.inode.parent = target.parent.ino;
      tx.putInode(source.inode);
    });
  }

  /**
   * A point-in-time, read-only view. Ephemeral by default (an lmdb read
   * transaction: microseconds, writers never wait for it, gone with the
   * process); with `options.persist` a named snapshot kept in the store
   * until deleteSnapshot() (costs O(changes made since), not O(tree)).
   * @param {string} name
   * @param {{ persist?: boolean }} [options]
   */
  createSnapshot(name, options) {
    if (this.#closed) throw closedError();
    checkName(name);
    const persist = options?.persist ?? false;
    if (options !== undefined && (options === null || typeof options !== 'object')) throw new TypeError(`options must be an object (got ${describe(options)})`);
    checkBoolean(persist, 'options.persist');
    if (!persist) return this.#track((onRelease) => Snapshot.ephemeral(this.#store, name, onRelease));
    checkSnapshotName(name);
    const record = this.#write((tx) => {
      if (this.#store.snapshots.get(name) !== undefined) throw new ArenaCacheError(codes.ERR_SNAPSHOT_EXISTS, `a persistent snapshot named "${name}" already exists; delete it first or choose another name`);
      return tx.addSnapshot(name);
    });
    return this.#track((onRelease) => Snapshot.persistent(this.#store, record, onRelease));
  }

  /** The persistent snapshots, oldest first: [{ name, createdAt }]. */
  listSnapshots() {
    if (this.#closed) throw closedError();
    this.#store.env.resetReadTxn();
    return this.#store.snapshotRecords().map(({ name, createdAt }) => ({ name, createdAt }));
  }

  /** A handle to the persistent snapshot `name` (release() it when done; the snapshot stays). */
  openSnapshot(name) {
    if (this.#closed) throw closedError();
    checkName(name);
    this.#store.env.resetReadTxn();
    const record = this.#store.snapshots.get(name);
    if (record === undefined) throw notFound(name);
    return this.#track((onRelease) => Snapshot.persistent(this.#store, record, onRelease));
  }

  /**
   * Deletes the persistent snapshot `name`: the history records and blobs
   * only it needed are reclaimed (a scan of the history, not of the tree).
   * Its open handles in this process end. Resolves to how many history
   * records were reclaimed.
   */
  async deleteSnapshot(name) {
    checkName(name);
    const reclaimed = this.#write((tx) => {
      if (tx.removeSnapshot(name) === undefined) throw notFound(name);
      return reclaimHistory(this.#store, tx);
    });
    for (const ref of this.#snapshots) {
      const snapshot = ref.deref();
      if (snapshot?.persistent && snapshot.name === name) snapshot.deleted();
    }
    return reclaimed;
  }

  /**
   * Opens `path` with node:fs flags ('r', 'r+', 'w', 'w+', 'a', 'a+', and
   * the exclusive 'wx'...) and resolves to an InodeFileHandle (read, write
   * at offsets, truncate, stat, readFile, close).
   */
  async open(path, flags = 'r', mode = 0o666) {
    const access = parseFlags(flags);
    checkMode(mode, 'mode');
    const files = {
      view: () => this.view(),
      uncachedView: () => this.uncachedView(),
      write: (work) => this.#write(work),
      // Closed (or collected unclosed): the handle's hold on the file ends.
      release: (ino) => this.#closed || this.#write((tx) => tx.holdInode(ino, -1)),
    };
    const ino = this.#write((tx) => {
      const inode = access.create ? this.#fileForWrite(tx, path, mode, access.exclusive) : this.existing(tx, path, 'open', true);
      if (inode.type === 'dir' && access.write) throw fsError('EISDIR', 'open', path);
      if (access.truncate && inode.size > 0) {
        tx.setContent(inode, Buffer.alloc(0));
        touch(inode);
        tx.putInode(inode);
      }
      tx.holdInode(inode.ino, +1);
      return inode.ino;
    });
    return new InodeFileHandle(ino, path, access, files);
  }

  /** Cuts the file at `path` to `length` bytes (default 0), or extends it with zeros. */
  truncateSync(path, length = 0) {
    checkInteger(length, 'length', 0, Number.MAX_SAFE_INTEGER);
    this.#write((tx) => {
      const inode = this.existing(tx, path, 'open', true);
      if (inode.type === 'dir') throw fsError('EISDIR', 'open', path);
      checkFileSize(length, 'ftruncate', path);
      tx.truncate(inode, length);
      touch(inode);
      tx.putInode(inode);
    });
  }

  /** Sets the permission bits of `path` (links are followed). */
  chmodSync(path, mode) {
    checkMode(mode, 'mode');
    this.#write((tx) => {
      const inode = this.existing(tx, path, 'chmod', true);
      inode.mode = (inode.mode & ~0o7777) | mode;
      inode.ctimeMs = after(inode.ctimeMs);
      tx.putInode(inode);
    });
  }

  /** Sets the access and modification times of `path` (Dates, or seconds since the epoch, as node:fs takes them). */
  utimesSync(path, atime, mtime) {
    const atimeMs = timeMs(atime, 'atime');
    const mtimeMs = timeMs(mtime, 'mtime');
    this.#write((tx) => {
      const inode = this.existing(tx, path, 'utime', true);
      inode.atimeMs = atimeMs;
      inode.mtimeMs = mtimeMs;
      inode.ctimeMs = after(inode.ctimeMs);
      tx.putInode(inode);
    });
  }

  /**
   * Checks the store: every directory entry names a live inode of its type,
   * link counts, orphans, sizes, blob reference counts, and the persistent
   * snapshots' history. Reads one consistent state; writers go on.
   * @returns {{ ok: boolean, problems: { kind: string, ino?: number, path?: string, message: string }[], checked: object }}
   */
  fsck() {
    if (this.#closed) throw closedError();
    return fsck(this.#store);
  }

  cacheStats() {
    return this.#cache.stats();
  }

  setCacheSize(size) {
    checkInteger(size, 'size', 0, 2 ** 24, { from: '0 (no cache)' });
    if (!this.#cache.isPrivate) {
      throw new ArenaCacheError(codes.ERR_INODEFS_CLOSED, 'setCacheSize() resizes the private inode cache, but this InodeFS uses options.cache (size that cache instead)');
    }
    this.#cache.resize(size);
    this.#forgetPaths();
  }

  flushCache() {
    this.#cache.flush();
    this.#forgetPaths();
  }

  /** The memo's stamps belong to the cache as it was (a resized cache is another arena): drop them. */
  #forgetPaths() {
    this.#memo.clear();
    this.#memoNoFollow.clear();
  }

  close() {
    if (this.#closed) return undefined;
    this.#closed = true;
    for (const ref of this.#snapshots) ref.deref()?.release();
    this.#cache.close();
    return this.#store.close();
  }

  /** Keeps a weak reference to the snapshot `create(onRelease)` makes, until it is released. */
  #track(create) {
    let ref;
    const snapshot = create(() => this.#snapshots.delete(ref));
    ref = new WeakRef(snapshot);
    this.#snapshots.add(ref);
    return snapshot;
  }

  #write(work) {
    if (this.#closed) throw closedError();
    return this.#store.write(work, (changes) => this.#cache.apply(changes));
  }

  /**
   * The file inode at `path` for a write, created (with `mode`) if missing,
   * as open(2) with O_CREAT (and O_EXCL when `exclusive`) finds it.
   */
  #fileForWrite(tx, path, mode, exclusive = false) {
    const ending = pathEnding(path);
    // O_EXCL follows no link: one there (dangling or not) is EEXIST, never a way to create its target.
    const { parent, name, inode } = resolve(tx, path, 'open', !exclusive && ending !== 'slash');
    // "x/" is refused whatever x is (the kernel creates no directory through open); "d/." is d (EISDIR or EEXIST below).
    if (ending === 'slash') throw fsError('EISDIR', 'open', path);
    if (inode !== undefined) {
      if (exclusive) throw fsError('EEXIST', 'open', path);
      if (inode.type === 'dir') throw fsError('EISDIR', 'open', path);
      return inode;
    }
    if (name === '') throw fsError('EISDIR', 'open', path);
    const created = newInode(tx.newIno(), 'file', mode, Date.now());
    this.#link(tx, parent, name, created);
    return created;
  }

  #link(tx, parent, name, inode) {
    if (inode.type === 'dir') inode.parent = parent.ino;
    tx.putInode(inode);
    tx.putDirent(parent.ino, name, inode.ino, inode.type);
    this.#touchDir(tx, parent.ino, inode.type === 'dir' ? 1 : 0);
  }

  #unlinkEntry(tx, parent, name, inode) {
    tx.removeDirent(parent.ino, name);
    tx.unlinkInode(inode);
    this.#touchDir(tx, parent.ino, inode.type === 'dir' ? -1 : 0);
  }

  #removeTree(tx, parent, name, inode) {
    if (inode.type === 'dir') {
      for (const entry of tx.entries(inode.ino)) this.#removeTree(tx, inode, entry.name, tx.inode(entry.ino));
    }
    this.#unlinkEntry(tx, parent, name, inode);
  }

  /** A directory's entries changed: new times; its link count moves by `links` (subdirectories' ".."). */
  #touchDir(tx, ino, links) {
    const dir = tx.inode(ino);
    dir.nlink += links;
    touch(dir);
    tx.putInode(dir);
  }

  /** Whether directory `dir` is `ancestor` or lies under it (directories record their parent). */
  #isWithin(tx, dir, ancestor) {
    for (let ino = dir.ino; ; ino = tx.inode(ino).parent) {
      if (ino === ancestor) return true;
      if (ino === ROOT_INO) return false;
    }
  }
}

promiseForms(InodeFS, ['writeFile', 'appendFile', 'mkdir', 'symlink', 'unlink', 'rm', 'rename', 'truncate', 'chmod', 'utimes']);

/** `resolve()` for a call of two paths: its errors name both, as node:fs's do ("rename '/a' -> '/b'"). */
function withBoth(resolveOne, syscall, path, dest) {
  try {
    return resolveOne();
  } catch (error) {
    if (error.syscall !== syscall || error.dest !== undefined) throw error;
    throw fsError(error.code, syscall, path, dest);
  }
}

function checkName(name) {
  if (typeof name !== 'string' || name.length === 0) throw new TypeError(`name must be a non-empty string (got ${describe(name)})`);
}

function checkSnapshotName(name) {
  if (Buffer.byteLength(name) > MAX_SNAPSHOT_NAME_BYTES) {
    throw new RangeError(`name must be at most ${MAX_SNAPSHOT_NAME_BYTES} bytes long for a persistent snapshot (got ${Buffer.byteLength(name)} bytes)`);
  }
}

function notFound(name) {
  return new ArenaCacheError(codes.ERR_SNAPSHOT_NOT_FOUND, `no persistent snapshot is named "${name}"`);
}

/** Milliseconds since the epoch of a time given as node:fs takes it: a Date, or seconds (number). */
function timeMs(time, name) {
  if (time instanceof Date) {
    if (Number.isNaN(time.getTime())) throw new RangeError(`${name} must be a valid Date (got Invalid Date)`);
    return time.getTime();
  }
  if (typeof time !== 'number') throw new TypeError(`${name} must be a Date or a number of seconds since the epoch (got ${describe(time)})`);
  if (!Number.isFinite(time)) throw new RangeError(`${name} must be a finite number of seconds (got ${time})`);
  return time * 1000;
}

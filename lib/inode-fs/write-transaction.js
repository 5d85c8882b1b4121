// The changes of one write transaction of an InodeFS store: inodes,
// directory entries and content (blobs counted by reference), each record
// copied to history first where a persistent snapshot still needs it.
//
// Every change runs in one synchronous lmdb transaction (atomic: a process
// killed mid-write leaves the store as it was before). The inode cache hears
// of a change only once its transaction has committed (InodeStore#write).

import { createHash } from 'node:crypto';
import { chunkHashes, spliceChunks, storedBlocks, storedIn } from './chunk-list.js';
import { pinned } from './history.js';
import { after, direntKey, inodeKey } from './inode.js';
import { ReadView } from './read-view.js';

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

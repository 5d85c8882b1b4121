// Write-back for CacheFS: the dirty files of a root, kept in a BlockStore
// until they are written to disk.
//
// A dirty file lives in the store as file id hash(root id, path):
//   block 2^32-1   its name record: magic, state, logical size, mtime, mode,
//                  CRC-32 of the contents, root id, path
//   blocks 0..n    its whole contents, as they are to be written
// Dirty blocks are never evicted, and the store is shared by every thread
// (and, file-backed, every process) that attaches it, so dirty data outlives
// the thread that wrote it: any CacheFS of the root flushes it, also after a
// crash when the store is a file.
//
// Every change and every read of a file's record and blocks happens under
// the store's lock of that file (BlockStore#exclusive), flushes included:
// the flusher writes the file to disk synchronously under the lock, so a
// writer never interleaves with it and a flushed version can never be
// written over an older one. A writer first marks the record WRITING and
// marks it DIRTY when all its blocks are in: a record found WRITING was left
// by a thread that died mid-write, and the file's unflushed writes are
// dropped (counted in lostWrites) rather than written torn. The contents'
// CRC-32 is checked whenever they are read (served or flushed): a store file
// on disk after a machine crash holds whichever of its pages were written
// back, and contents that do not match their record are dropped the same way.
//
// A file becomes dirty whole: the first write-back write to a clean file puts
// its entire contents in the store (an append loads the current contents
// first), so reads and flushes never combine blocks with the disk.

import zlib from 'node:zlib';
import { codes } from '../errors.js';

/** Block index of a file's name record (data blocks use the indexes below it). */
const NAME_BLOCK = 2 ** 32 - 1;
const MAGIC = 0x32574643; // "CFW2" (2: with the contents' CRC-32)
const WRITING = 1;
const DIRTY = 2;
const ROOT_ID_BYTES = 12;
// magic u32, state u32, size f64, mtimeMs f64, mode u32, key bytes u32, crc u32, root id
const CRC_OFFSET = 32;
const ROOT_ID_OFFSET = 36;
const NAME_HEADER_BYTES = ROOT_ID_OFFSET + ROOT_ID_BYTES;
const STATE_OFFSET = 4;

/**
 * The CRC-32 of `data` continued from `previous`. zlib.crc32 gives 0 for
 * bytes over an empty ArrayBuffer (no data pointer: zlib's crc32 of NULL),
 * whatever it continues; an empty append must keep the CRC as it was.
 */
function crc32(data, previous = 0) {
  return data.length === 0 ? previous : zlib.crc32(data, previous);
}

/** FNV-1a over the root id and the path: the file id of a path in the store. */
function fileId(rootId, key) {
  let h = 0x811c9dc5;
  const text = `${rootId}\0${key}`;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export class WriteBack {
  #blocks;
  #rootId;
  #namePosition;
  #maxKeyBytes;
  /** Counters the CacheFS reports (its own object, shared). */
  #counters;
  #rewrite;

  /**
   * @param {import('../arena/blocks/block-store.js').BlockStore} blocks
   * @param {string} rootId 12 characters naming the root
   * @param {Record<string, number>} counters lostWrites, spilledWrites, flushedFiles, flushedBytes
   * @param {(key: string, data: Buffer, mode: number) => object} rewrite the backing's synchronous in-place whole-file write of a key (beneath the root), returning the stats after it
   */
  constructor(blocks, rootId, counters, rewrite) {
    this.#rewrite = rewrite;
    this.#blocks = blocks;
    this.#rootId = rootId;
    this.#counters = counters;
    this.#namePosition = NAME_BLOCK * blocks.blockBytes;
    this.#maxKeyBytes = blocks.blockBytes - NAME_HEADER_BYTES;
  }

  /** Whether `key` can be kept dirty at all (its name record fits one block). */
  fits(key) {
    return Buffer.byteLength(key) <= this.#maxKeyBytes;
  }

  /**
   * The name record of `file`, or null. Only under the file's lock. A record
   * left WRITING (its writer died), or one that is no record at all
   * (damaged), drops the file's blocks: its unflushed writes are lost, never
   * written torn.
   */
  #readName(file) {
    const blocks = this.#blocks;
    const header = blocks.read(file, this.#namePosition, NAME_HEADER_BYTES);
    if (header === undefined) return null;
    const key =
      header.readUInt32LE(0) === MAGIC && header.readUInt32LE(STATE_OFFSET) === DIRTY
        ? blocks.read(file, this.#namePosition + NAME_HEADER_BYTES, header.readUInt32LE(28))
        : undefined;
    if (key === undefined) {
      blocks.drop(file);
      this.#counters.lostWrites++;
      return null;
    }
    return {
      size: header.readDoubleLE(8),
      mtimeMs: header.readDoubleLE(16),
      mode: header.readUInt32LE(24),
      crc: header.readUInt32LE(CRC_OFFSET),
      rootId: header.toString('latin1', ROOT_ID_OFFSET, ROOT_ID_OFFSET + ROOT_ID_BYTES),
      key: key.toString(),
    };
  }

  #writeName(file, state, { size, mtimeMs, mode, crc, key }) {
    const keyBytes = Buffer.from(key);
    const record = Buffer.alloc(NAME_HEADER_BYTES + keyBytes.length);
    record.writeUInt32LE(MAGIC, 0);
    record.writeUInt32LE(state, STATE_OFFSET);
    record.writeDoubleLE(size, 8);
    record.writeDoubleLE(mtimeMs, 16);
    record.writeUInt32LE(mode, 24);
    record.writeUInt32LE(keyBytes.length, 28);
    record.writeUInt32LE(crc, CRC_OFFSET);
    record.write(this.#rootId, ROOT_ID_OFFSET, ROOT_ID_BYTES, 'latin1');
    keyBytes.copy(record, NAME_HEADER_BYTES);
    this.#blocks.write(file, this.#namePosition, record);
  }

  #setState(file, state) {
    const word = Buffer.alloc(4);
    word.writeUInt32LE(state, 0);
    this.#blocks.write(file, this.#namePosition + STATE_OFFSET, word);
  }

  /** The name record of `key` if it is dirty, else null; `other` is set when another path holds its file id. */
  #nameOf(file, key) {
    const name = this.#readName(file);
    if (name === null) return { name: null, other: false };
    if (name.rootId !== this.#rootId || name.key !== key) return { name: null, other: true };
    return { name, other: false };
  }

  /** Runs `fn(file, name)` under the lock of `key`'s file, with its dirty record or null. */
  #withFile(key, fn) {
    const file = fileId(this.#rootId, key);
    return this.#blocks.exclusive(file, () => {
      const { name, other } = this.#nameOf(file, key);
      return fn(file, name, other);
    });
  }

  /**
   * The dirty state of `key` ({ size, mtimeMs, mode }, or null when it is
   * clean) passed to `use`, under the lock, so that what `use` does with it
   * (such as caching a record) is ordered with the file's writes.
   */
  state(key, use = (name) => name) {
    return this.#withFile(key, (file, name) => use(name));
  }

  /**
   * `use(name, content)` under the lock with the contents of dirty `key`;
   * when it is clean, `clean()` (also under the lock: no flush can be
   * writing the file meanwhile).
   */
  read(key, use, clean = () => null) {
    return this.#withFile(key, (file, name) => {
      const content = name === null ? null : this.#content(file, name);
      return content === null ? clean() : use(name, content);
    });
  }

  /**
   * A number that changes whenever the lock of `key`'s file is taken or
   * released (odd while held): equal before and after a disk read, no flush
   * of the file overlapped it.
   */
  sequence(key) {
    return this.#blocks.fileVersion(fileId(this.#rootId, key));
  }

  /**
   * The dirty contents of `file`, or null when some block is gone (a thread
   * died inside a block write, and the store dropped that block) or they do
   * not match their CRC-32 (a store file on disk after a machine crash): the
   * file's unflushed writes are lost; they are dropped, never written torn.
   */
  #content(file, name) {
    const content = name.size === 0 ? Buffer.alloc(0) : this.#blocks.read(file, 0, name.size);
    if (content !== undefined && crc32(content) === name.crc) return content;
    this.#blocks.drop(file);
    this.#counters.lostWrites++;
    return null;
  }

  /**
   * Makes `content` the dirty contents of `key`, or with `append` adds it at
   * the end (`base()` gives the current contents when the file is not dirty
   * yet: read synchronously, under the lock). `publish(size, mtimeMs)` runs
   * under the lock afterwards, so the cache's view changes in the same order
   * as the store's. Returns 'dirty'; 'spilled' when the store had no room
   * (or another path holds the file id) and the file was written to disk
   * instead; `publish` then gets the disk's stats and the whole
   * contents as third and fourth arguments. Returns 'too-large', writing
   * nothing, when the file would outgrow `limit` bytes.
   */
  write(key, content, { append, mode, limit, base, publish }) {
    return this.#withFile(key, (file, name, other) => {
      const mtimeMs = Date.now();
      let position = 0;
      let data = content;
      if (append && name !== null) position = name.size;
      else if (append) data = Buffer.concat([base(), content]);
      const size = position + data.length;
      if (size > limit) return 'too-large';
      // An append to dirty contents continues their CRC-32.
      const crc = position === 0 ? crc32(data) : crc32(data, name.crc);
      const record = { size, mtimeMs, mode: name?.mode ?? mode, crc, key };
      if (other) return this.#spill(file, key, data, record, publish, false);
      try {
        this.#writeName(file, WRITING, record);
        this.#blocks.write(file, position, data);
        this.#setState(file, DIRTY);
      } catch (error) {
        if (error.code !== codes.ERR_BLOCKS_FULL) throw error;
        // Whatever made it into blocks is dropped; the disk gets the whole file.
        const before = position === 0 ? Buffer.alloc(0) : this.#content(file, name);
        if (before === null) throw error;
        const whole = position === 0 ? data : Buffer.concat([before, data]);
        return this.#spill(file, key, whole, record, publish, true);
      }
      publish(size, mtimeMs);
      return 'dirty';
    });
  }

  #spill(file, key, whole, record, publish, drop) {
    const stats = this.#rewrite(key, whole, record.mode);
    if (drop) this.#blocks.drop(file);
    this.#counters.spilledWrites++;
    publish(record.size, record.mtimeMs, stats, whole);
    return 'spilled';
  }

  /**
   * Writes dirty `key` to disk and makes it clean; `flushed(stats,
   * content)` runs under the lock after the write. Returns whether it was
   * dirty. A failed write leaves it dirty and throws.
   */
  flush(key, flushed) {
    return this.#withFile(key, (file, name) => {
      if (name === null) return false;
      const content = this.#content(file, name);
      if (content === null) return false;
      const stats = this.#rewrite(key, content, name.mode);
      this.#blocks.drop(file);
      this.#counters.flushedFiles++;
      this.#counters.flushedBytes += content.length;
      flushed(stats, content);
      return true;
    });
  }

  /**
   * The paths of this root that are dirty now (the store's dirty name
   * records), sorted. Files with dirty blocks and no name record at all are
   * dropped on the way: a writer that died inside the write of a name record
   * (or of the drop that follows a flush) lost that block, and nothing could
   * ever flush or free the data it named.
   */
  dirtyKeys() {
    const named = new Set();
    const files = new Set();
    for (const range of this.#blocks.dirty()) {
      files.add(range.file);
      if (range.block === NAME_BLOCK) named.add(range.file);
    }
    const keys = new Set();
    for (const file of files) {
      const name = this.#blocks.exclusive(file, () => (named.has(file) || !this.#dropIfNameless(file) ? this.#readName(file) : null));
      if (name !== null && name.rootId === this.#rootId) keys.add(name.key);
    }
    return [...keys].sort();
  }

  /** Under the file's lock: drops `file` and returns true if it has no name record (a writer holding the lock always writes the name first). */
  #dropIfNameless(file) {
    if (this.#blocks.read(file, this.#namePosition, 4) !== undefined) return false;
    this.#blocks.drop(file);
    return true;
  }

  /** Whether `key` is dirty; without a lock when the store holds no dirty block at all. */
  isDirty(key) {
    return this.anyDirty() && this.state(key) !== null;
  }

  /** Whether the store holds any dirty block (of any root): cheap, for skipping work. */
  anyDirty() {
    return this.#blocks.dirtyBlockCount() > 0;
  }

  /** Bytes of dirty blocks in the store (every root's). */
  dirtyBytes() {
    return this.#blocks.dirtyBlockCount() * this.#blocks.blockBytes;
  }
}

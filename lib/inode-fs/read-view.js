// Reads of one state of an InodeFS store: its inodes, directory entries
// and file content.

import { fileTooLarge, MAX_READ_BYTES } from '../fs-compat/fs-errors.js';
import { storedIn } from './chunk-list.js';

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

// InodeFileHandle: what InodeFS#open() (and Snapshot#open()) resolve to,
// shaped like node:fs FileHandle (read, write, truncate, stat, close) and
// like CacheFS's handle, with the same argument checks.
//
// A handle holds its file's inode number, so it follows the file across
// renames, and holds the file itself: one removed while open (a directory
// too) lives on (nameless, nlink 0) until its last handle closes, as on
// POSIX. Each write is one transaction.

import { ArenaCacheError, codes, describe } from '../errors.js';
import { checkInteger } from '../validate.js';
import { checkRange } from '../fs-compat/fs-arguments.js';
import { fsError } from '../fs-compat/fs-errors.js';
import { CachedStats } from '../fs-compat/stats.js';
import { missingContent } from './store-errors.js';
import { checkFileSize, touch } from './inode.js';

// A handle dropped without close() would hold its file forever (a removed
// file would never go): let go of it when the handle is collected.
const unclosed = new FinalizationRegistry(({ release, ino, path }) => {
  try {
    release(ino);
  } catch {
    // The InodeFS went first; the next owner of the store removes what was held.
  }
  process.emitWarning(`an InodeFS file handle of ${path} was garbage-collected without close(); close() it when done`, { code: 'ARENACACHE_HANDLE_LEAK' });
});

export class InodeFileHandle {
  #ino;
  #path;
  #access;
  #files;
  #position = 0;
  #closed = false;

  /**
   * @param {number} ino the open file's inode
   * @param {string} path as given to open()
   * @param {ReturnType<typeof import('../fs-compat/open-flags.js').parseFlags>} access
   * @param {{ view(): object, uncachedView(): object, write?<T>(work: (tx) => T): T, release?(ino: number): unknown }} files
   *   the InodeFS's (or snapshot's) reads and writes, and how to let go of the file
   */
  constructor(ino, path, access, files) {
    this.#ino = ino;
    this.#path = path;
    this.#access = access;
    this.#files = files;
    if (files.release !== undefined) unclosed.register(this, { release: files.release, ino, path }, this);
  }

  /**
   * Reads into `buffer` as node:fs FileHandle#read does: `length` bytes at
   * `offset` in the buffer, from `position` in the file (null: the current
   * position, which then advances). Resolves { bytesRead, buffer }.
   */
  async read(buffer, offset, length, position) {
    this.#check();
    const { start, count, at } = checkRange('read', buffer, offset, length, position);
    // node:fs answers a read of nothing without a read(2): no EBADF, no EISDIR.
    if (count === 0) return { bytesRead: 0, buffer };
    if (!this.#access.read) throw fsError('EBADF', 'read', this.#path);
    const from = at ?? this.#position;
    const bytes = this.#content('read', (view, inode) => view.contentRange(inode, from, count));
    buffer.set(bytes, start);
    if (at === null) this.#position = from + bytes.length;
    return { bytesRead: bytes.length, buffer };
  }

  /**
   * Writes `length` bytes of `buffer` from `offset` at `position` in the
   * file (null: the current position; files opened for appending always
   * append). Resolves { bytesWritten, buffer }.
   */
  async write(buffer, offset, length, position) {
    this.#check();
    const { start, count, at } = checkRange('write', buffer, offset, length, position);
    // As node:fs FileHandle#write: an empty buffer is answered without a
    // write(2), 0 bytes even on a read-only handle; a length of 0 from a
    // longer buffer does reach write(2), which checks the access mode.
    if (buffer.byteLength === 0) return { bytesWritten: 0, buffer };
    this.#checkWritable('write');
    // write(2) of nothing changes nothing: not the size, not the times.
    if (count === 0) return { bytesWritten: 0, buffer };
    const bytes = buffer.subarray(start, start + count);
    const end = this.#files.write((tx) => {
      const inode = this.#inode(tx, 'write');
      const from = this.#access.append ? inode.size : at ?? this.#position;
      checkFileSize(from + count, 'write', this.#path);
      tx.writeAt(inode, from, bytes);
      touch(inode);
      tx.putInode(inode);
      return from + count;
    });
    // pwrite(2) leaves the position alone, even when O_APPEND makes it append.
    if (at === null) this.#position = end;
    return { bytesWritten: count, buffer };
  }

  /** Truncates (or extends with zeros) the file to `length` bytes (default 0). */
  async truncate(length = 0) {
    this.#check();
    checkInteger(length, 'length', 0, Number.MAX_SAFE_INTEGER);
    this.#checkWritable('ftruncate');
    checkFileSize(length, 'ftruncate', this.#path);
    this.#files.write((tx) => {
      const inode = this.#inode(tx, 'ftruncate');
      tx.truncate(inode, length);
      touch(inode);
      tx.putInode(inode);
    });
  }

  async stat() {
    this.#check();
    return new CachedStats(this.#inode(this.#files.view(), 'fstat'));
  }

  /** The whole file from the start (whatever the position), as FileHandle#readFile. */
  async readFile() {
    this.#check();
    if (!this.#access.read) throw fsError('EBADF', 'read', this.#path);
    return Buffer.from(this.#content('read', (view, inode) => view.content(inode)));
  }

  /** `read(view, inode)` of the file, read again uncached if a cached record proved stale (null). */
  #content(syscall, read) {
    for (const view of [this.#files.view(), this.#files.uncachedView()]) {
      const inode = this.#inode(view, syscall);
      if (inode.type === 'dir') throw fsError('EISDIR', syscall, this.#path);
      const bytes = read(view, inode);
      if (bytes !== null) return bytes;
    }
    throw missingContent(this.#path);
  }

  /** Closes the handle (a removed file it held goes now); later calls fail with ERR_HANDLE_CLOSED. Closing twice is harmless. */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    unclosed.unregister(this);
    this.#files.release?.(this.#ino);
  }

  #check() {
    if (this.#closed) throw new ArenaCacheError(codes.ERR_HANDLE_CLOSED, `the file handle of ${describe(this.#path)} is closed`);
  }

  #checkWritable(syscall) {
    // Linux: write(2) on a read-only descriptor is EBADF, ftruncate(2) EINVAL;
    // on a read-only file system too (a snapshot's handles are all read-only:
    // EROFS comes at open).
    if (!this.#access.write) throw fsError(syscall === 'ftruncate' ? 'EINVAL' : 'EBADF', syscall, this.#path);
    if (this.#files.write === undefined) throw fsError('EROFS', syscall, this.#path);
  }

  #inode(view, syscall) {
    const inode = view.inode(this.#ino);
    if (inode === undefined) throw fsError('ENOENT', syscall, this.#path);
    return inode;
  }
}

// CacheFileHandle: what CacheFS#open() resolves to, shaped like node:fs
// FileHandle (read, write, truncate, stat, close).
//
// The handle owns a real file descriptor, so it keeps working on the file it
// opened even if that file is renamed or removed meanwhile, as a node:fs
// FileHandle does. Reads are served from the cache when the cache holds the
// very version of the very file the descriptor points at (checked against an
// fstat at most every validateMs, and after each of this handle's own writes);
// otherwise they read through the descriptor. Writes and truncation go to the
// disk through the descriptor, and then every cached metadata record of the
// root is dropped (a new generation, as for a rename): the file may be known
// under another path by now (renamed since it was opened), so the next access
// to any path stats the disk again (write-through and write-around alike: a
// handle never patches cached bytes at an offset it might get wrong, such as
// an append's). In write-back mode a handle writes through its descriptor
// as well: before each call, a dirty version of its file (written by path
// since the handle was opened) is flushed, so the descriptor sees it.

import { ArenaCacheError, codes, describe } from '../errors.js';
import { checkInteger } from '../validate.js';
import { checkRange } from '../fs-compat/fs-arguments.js';
import { statRecord } from './stat-record.js';

export class CacheFileHandle {
  #handle;
  #path;
  #files;
  #record = null;
  #checkedAt = -Infinity;
  /** Calls in flight, which close() lets finish first. */
  #calls = new Set();
  /** close()'s promise, once it was called. */
  #closing = null;

  /**
   * @param {import('node:fs/promises').FileHandle} handle
   * @param {string} path as given to open()
   * @param {string} flags as given to open()
   * @param {{ validateMs: number, contentOf(key: string, record: object): Buffer | null, beforeAccess(): void, afterWrite(): void, key: string }} files
   *   what the handle needs of its CacheFS
   */
  #readable;

  constructor(handle, path, flags, files) {
    this.#handle = handle;
    this.#path = path;
    // 'w', 'a', 'wx', 'ax' without '+' are write-only: reads must fail as the descriptor's do (EBADF).
    this.#readable = flags.includes('r') || flags.includes('+');
    this.#files = files;
  }

  /** The descriptor number, as on node:fs FileHandle: -1 once closed, undefined over an InodeFS (no descriptor). */
  get fd() {
    return this.#handle === null ? -1 : this.#handle.fd;
  }

  /** The node:fs handle, after any write-back write to the file since it was opened has reached the disk. */
  #open() {
    if (this.#handle === null) {
      throw new ArenaCacheError(codes.ERR_HANDLE_CLOSED, `the file handle of ${describe(this.#path)} is closed`);
    }
    this.#files.beforeAccess();
    return this.#handle;
  }

  /** The descriptor's file version, fstat'ed at most every validateMs. */
  async #version(handle) {
    const now = Date.now();
    if (this.#record === null || now - this.#checkedAt >= this.#files.validateMs) {
      this.#record = statRecord(await handle.stat(), now);
      this.#checkedAt = now;
    }
    return this.#record;
  }

  /**
   * Reads into `buffer` as node:fs FileHandle#read does: `length` bytes at
   * `offset` in the buffer, from `position` in the file (null: the current
   * position, which then advances). Resolves { bytesRead, buffer }.
   */
  read(buffer, offset, length, position) {
    return this.#call(() => this.#read(buffer, offset, length, position));
  }

  async #read(buffer, offset, length, position) {
    const handle = this.#open();
    const { start, count, at } = checkRange('read', buffer, offset, length, position);
    if (this.#readable && at !== null && count > 0) {
      const content = this.#files.contentOf(this.#files.key, await this.#version(handle));
      if (content !== null) {
        const end = Math.min(content.length, at + count);
        const bytesRead = Math.max(0, end - at);
        if (bytesRead > 0) content.copy(buffer, start, at, end);
        // The same shape as node:fs FileHandle#read's result.
        return Object.assign(Object.create(null), { bytesRead, buffer });
      }
    }
    return handle.read(buffer, start, count, at);
  }

  /**
   * Writes `length` bytes of `buffer` from `offset` at `position` in the
   * file (null: the current position; files opened for appending always
   * append). Resolves { bytesWritten, buffer }.
   */
  write(buffer, offset, length, position) {
    return this.#call(() => this.#write(buffer, offset, length, position));
  }

  async #write(buffer, offset, length, position) {
    const handle = this.#open();
    const { start, count, at } = checkRange('write', buffer, offset, length, position);
    // node:fs FileHandle#write answers an empty buffer without a write(2):
    // 0 bytes, even through a read-only descriptor (where write(2) is EBADF).
    if (buffer.byteLength === 0) return { bytesWritten: 0, buffer };
    const result = await handle.write(buffer, start, count, at);
    await this.#changed(handle);
    return result;
  }

  /** Truncates (or extends with zeros) the file to `length` bytes (default 0). */
  truncate(length = 0) {
    return this.#call(() => this.#truncate(length));
  }

  async #truncate(length) {
    const handle = this.#open();
    checkInteger(length, 'length', 0, Number.MAX_SAFE_INTEGER);
    await handle.truncate(length);
    await this.#changed(handle);
  }

  /** The descriptor's current Stats (node:fs Stats). */
  stat() {
    return this.#call(async () => this.#open().stat());
  }

  /**
   * Closes the descriptor once the calls in flight are done, as node:fs
   * FileHandle#close does (closed under them, its number could be another
   * file's by the time they run, and a write's fstat would find it gone).
   * Later calls fail with ERR_HANDLE_CLOSED. Closing again gives the same promise.
   */
  close() {
    if (this.#closing === null) {
      const handle = this.#handle;
      this.#handle = null;
      this.#closing = Promise.allSettled(this.#calls).then(() => handle.close());
    }
    return this.#closing;
  }

  /** `run()`'s promise, known to close() until it settles. */
  #call(run) {
    const call = run();
    this.#calls.add(call);
    const settled = () => this.#calls.delete(call);
    call.then(settled, settled);
    return call;
  }

  /** The file changed through this handle: note its new version here, and let the CacheFS drop what it knew. */
  async #changed(handle) {
    const record = statRecord(await handle.stat(), Date.now());
    this.#record = record;
    this.#checkedAt = record.checkedAt;
    this.#files.afterWrite();
  }
}

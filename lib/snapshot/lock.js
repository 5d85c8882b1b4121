// The workspace lock: an OFD lock on <repository>/lock, so the kernel drops
// it when its holder dies (no stale lock files after a kill -9). Changes
// (snapshot, restore, fork, pin, gc, recovery) hold it exclusively, verify
// shares it; nobody waits, a busy workspace is an error the caller can retry.
import { readFileSync, writeSync } from 'node:fs';
import { ArenaCacheError, codes } from '../errors.js';
import { fileClose, fileLock, fileOpen, LOCK_EXCLUSIVE, LOCK_SHARED } from '../native/mapped-file.js';

const NOTE_BYTES = 80;

export class WorkspaceLock {
  #fd;

  constructor(fd) {
    this.#fd = fd;
  }

  /** Takes the lock of the repository at `layout` for `operation`, or throws ERR_WORKSPACE_BUSY. */
  static acquire(layout, operation, { shared = false } = {}) {
    const { fd } = fileOpen(layout.lock, 0o644, 'workspace locking');
    if (!fileLock(fd, shared ? LOCK_SHARED : LOCK_EXCLUSIVE, false)) {
      fileClose(fd);
      let holder = '';
      try {
        holder = readFileSync(layout.lock, 'utf8').trim();
      } catch {
        // the holder's note is a courtesy
      }
      throw new ArenaCacheError(
        codes.ERR_WORKSPACE_BUSY,
        `cannot ${operation}: the workspace is busy with another operation${holder ? ` (${holder})` : ''}; try again when it ends`,
      );
    }
    if (!shared) {
      try {
        // Overwritten in place, padded to a fixed width: truncating first
        // makes ext4 flush the file (auto_da_alloc), milliseconds per operation.
        writeSync(fd, `${operation} by process ${process.pid}`.padEnd(NOTE_BYTES).slice(0, NOTE_BYTES), 0);
      } catch {
        // The note is a courtesy (a full disk must not keep the lock held).
      }
    }
    return new WorkspaceLock(fd);
  }

  release() {
    if (this.#fd === -1) return;
    fileClose(this.#fd);
    this.#fd = -1;
  }
}

/** Runs `work` (sync or async) under the lock and releases it however `work` ends. */
export async function withLock(layout, operation, work, options) {
  const lock = WorkspaceLock.acquire(layout, operation, options);
  try {
    return await work();
  } finally {
    lock.release();
  }
}

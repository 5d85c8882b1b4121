// File-backed arenas (src/native/mapped_file.h): a file opened, locked,
// sized and mapped as a SharedArrayBuffer in separate steps, the mapping's
// users counted, and the per-thread liveness locks held on the mapped file.
// Each call needs the addon; `feature` names what the user asked for in the
// error otherwise.

import { describe } from '../errors.js';
import { loadedAddon, requireNative } from './addon.js';
import { checkFd, checkWholeView } from './arguments.js';

/** Opens `path` read-write without following a symlink; creates it with `createMode` when > 0. */
export function fileOpen(path, createMode, feature) {
  if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) {
    throw new TypeError(`path must be a non-empty string without NUL bytes (got ${describe(path)})`);
  }
  if (!Number.isInteger(createMode) || createMode < 0 || createMode > 0o7777) {
    throw new RangeError(`createMode must be 0 or a file mode up to 0o7777 (got ${describe(createMode)})`);
  }
  const [fd, created] = requireNative(feature).fileOpen(path, createMode);
  return { fd, created };
}

/** { size, uid, euid, mode, regular, dev, ino } of an open file. */
export function fileStat(fd) {
  checkFd(fd);
  return requireNative('fileStat()').fileStat(fd);
}

export const LOCK_NONE = 0;
export const LOCK_SHARED = 1;
export const LOCK_EXCLUSIVE = 2;

/** Sets the whole-file OFD lock; false when it is held elsewhere and `wait` is false. */
export function fileLock(fd, kind, wait) {
  checkFd(fd);
  if (kind !== LOCK_NONE && kind !== LOCK_SHARED && kind !== LOCK_EXCLUSIVE) throw new RangeError(`kind must be 0, 1 or 2 (got ${describe(kind)})`);
  return requireNative('fileLock()').fileLock(fd, kind, wait === true);
}

/** Sets the file's length to `size` bytes and allocates all of them. */
export function fileResize(fd, size) {
  checkFd(fd);
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`size must be a non-negative integer (got ${describe(size)})`);
  requireNative('fileResize()').fileResize(fd, size);
}

export const POPULATE_NONE = 0;
export const POPULATE_READ = 1;
export const POPULATE_WRITE = 2;

/** Maps `size` bytes of the file as a SharedArrayBuffer (prefaulting as `populate` says); the mapping then owns `fd`. */
export function fileMap(fd, size, populate) {
  checkFd(fd);
  if (!Number.isSafeInteger(size) || size <= 0) throw new RangeError(`size must be a positive integer (got ${describe(size)})`);
  if (populate !== POPULATE_NONE && populate !== POPULATE_READ && populate !== POPULATE_WRITE) {
    throw new RangeError(`populate must be 0, 1 or 2 (got ${describe(populate)})`);
  }
  return requireNative('fileMap()').fileMap(fd, size, populate);
}

/** Closes a descriptor from fileOpen() that no mapping owns. */
export function fileClose(fd) {
  checkFd(fd);
  requireNative('fileClose()').fileClose(fd);
}

/** Counts one more user of a mapped buffer; false for an in-memory buffer (or without the addon). */
export function mappingRetain(buffer) {
  if (loadedAddon === null) return false;
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  return loadedAddon.mappingRetain(view);
}

/** One user fewer; at zero the file is unmapped. Returns the users left, -1 for an in-memory buffer. */
export function mappingRelease(buffer) {
  if (loadedAddon === null) return -1;
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  return loadedAddon.mappingRelease(view);
}

/** Writes a mapped buffer back to its file (msync + fdatasync, off the event loop). */
export function mappingFlush(buffer) {
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  return requireNative('flush()').mappingFlush(view);
}

/** The view of a mapped `buffer` and a thread `slot`, checked for the liveness functions. */
function livenessArguments(buffer, slot) {
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  if (typeof slot !== 'number') throw new TypeError(`slot must be a number (got ${describe(slot)})`);
  if (!Number.isInteger(slot) || slot < 0 || slot > 65535) throw new RangeError(`slot must be an integer from 0 to 65535 (got ${describe(slot)})`);
  return view;
}

/** This thread takes the liveness lock of thread slot `slot` of the mapped `buffer`'s file; false when another thread holds it. */
export function livenessHold(buffer, slot) {
  return requireNative('livenessHold()').livenessHold(livenessArguments(buffer, slot), slot);
}

/** Gives back this thread's liveness lock of `slot` (false: it held none). */
export function livenessRelease(buffer, slot) {
  return requireNative('livenessRelease()').livenessRelease(livenessArguments(buffer, slot), slot);
}

/** Whether some thread, of any process in any PID namespace, holds the liveness lock of `slot`. */
export function livenessAlive(buffer, slot) {
  return requireNative('livenessAlive()').livenessAlive(livenessArguments(buffer, slot), slot);
}

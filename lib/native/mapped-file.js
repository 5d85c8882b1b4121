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

/** Claim ids of the liveness functions run from 1 to this (src/native/mapped_file.cc kMaxClaimId). */
export const MAX_CLAIM_ID = 2 ** 30;

/** The view of a mapped `buffer` and a claim `id`, checked for the liveness functions. */
function livenessArguments(buffer, id) {
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  if (typeof id !== 'number') throw new TypeError(`id must be a number (got ${describe(id)})`);
  if (!Number.isInteger(id) || id < 1 || id > MAX_CLAIM_ID) throw new RangeError(`id must be an integer from 1 to ${MAX_CLAIM_ID} (got ${describe(id)})`);
  return view;
}

/** This thread takes the liveness lock of claim `id` of the mapped `buffer`'s file; false when another thread holds it. */
export function livenessHold(buffer, id) {
  return requireNative('livenessHold()').livenessHold(livenessArguments(buffer, id), id);
}

/** Gives back this thread's liveness lock of claim `id` (false: it held none). */
export function livenessRelease(buffer, id) {
  return requireNative('livenessRelease()').livenessRelease(livenessArguments(buffer, id), id);
}

/** Whether some thread, of any process in any PID namespace, holds the liveness lock of claim `id`. */
export function livenessAlive(buffer, id) {
  return requireNative('livenessAlive()').livenessAlive(livenessArguments(buffer, id), id);
}

// File-backed arenas (src/native/mapped_file.h): a file opened, locked,
// sized and mapped as a SharedArrayBuffer in separate steps, the mapping's
// users counted, and the per-thread liveness locks held on the mapped file.
// Each call needs the addon; `feature` names what the user asked for in the
// error otherwise. The arguments are values the package computed itself:
// they go straight to the addon, which checks them (see arguments.js). A buffer crosses as a Uint8Array over all of it; the addon
// finds the mapping it starts at, and any other buffer is no mapping.

import { loadedAddon, requireNative } from './addon.js';

/** Opens `path` read-write without following a symlink; creates it with `createMode` when > 0. */
export function fileOpen(path, createMode, feature) {
  const [fd, created] = requireNative(feature).fileOpen(path, createMode);
  return { fd, created };
}

/** Opens `path` read-only (O_RDONLY) without following a symlink or blocking on a FIFO; returns the descriptor. */
export function fileOpenReadOnly(path, feature) {
  return requireNative(feature).fileOpenReadOnly(path);
}

/** { size, uid, euid, mode, regular, dev, ino } of an open file. */
export function fileStat(fd) {
  return requireNative('fileStat()').fileStat(fd);
}

export const LOCK_NONE = 0;
export const LOCK_SHARED = 1;
export const LOCK_EXCLUSIVE = 2;

/** Sets the whole-file OFD lock; false when it is held elsewhere and `wait` is false. */
export function fileLock(fd, kind, wait) {
  return requireNative('fileLock()').fileLock(fd, kind, wait === true);
}

/** The lock other open file descriptions hold on the arena's range: LOCK_NONE, LOCK_SHARED or LOCK_EXCLUSIVE (takes none). */
export function fileLockHolder(fd) {
  return requireNative('fileLockHolder()').fileLockHolder(fd);
}

/** fileLockHolder() of the file mapped as `buffer` (for a read-only mapping, whose descriptor holds no lock). */
export function mappingLockHolder(buffer) {
  return requireNative('mappingLockHolder()').mappingLockHolder(new Uint8Array(buffer));
}

/** Sets the file's length to `size` bytes and allocates all of them. */
export function fileResize(fd, size) {
  requireNative('fileResize()').fileResize(fd, size);
}

export const POPULATE_NONE = 0;
export const POPULATE_READ = 1;
export const POPULATE_WRITE = 2;

/** Maps `size` bytes of the file as a SharedArrayBuffer (prefaulting as `populate` says); the mapping then owns `fd`. */
export function fileMap(fd, size, populate) {
  return requireNative('fileMap()').fileMap(fd, size, populate);
}

/** Maps `size` bytes of the file read-only (PROT_READ, shared: it sees other processes' writes; a store faults); the mapping then owns `fd`. */
export function fileMapReadOnly(fd, size) {
  return requireNative('fileMapReadOnly()').fileMapReadOnly(fd, size);
}

/** Closes a descriptor from fileOpen() that no mapping owns. */
export function fileClose(fd) {
  requireNative('fileClose()').fileClose(fd);
}

/** Counts one more user of a mapped buffer; false for an in-memory buffer (or without the addon). */
export function mappingRetain(buffer) {
  if (loadedAddon === null) return false;
  return loadedAddon.mappingRetain(new Uint8Array(buffer));
}

/** One user fewer; at zero the file is unmapped. Returns the users left, -1 for an in-memory buffer. */
export function mappingRelease(buffer) {
  if (loadedAddon === null) return -1;
  return loadedAddon.mappingRelease(new Uint8Array(buffer));
}

/**
 * mappingRelease(), except that the file's last user in every process
 * first stores the 32-bit `mark` at byte `offset` of the header (after
 * writing the mapping back, for a file on disk). Returns { left, marked }.
 */
export function mappingReleaseClean(buffer, offset, mark) {
  if (loadedAddon === null) return { left: -1, marked: false };
  const [left, marked] = loadedAddon.mappingReleaseClean(new Uint8Array(buffer), offset, mark);
  return { left, marked };
}

/** Writes a mapped buffer back to its file (msync + fdatasync, off the event loop). */
export function mappingFlush(buffer) {
  return requireNative('flush()').mappingFlush(new Uint8Array(buffer));
}

/** Claim ids of the liveness functions run from 1 to this (src/native/mapped_file.cc kMaxClaimId). */
export const MAX_CLAIM_ID = 2 ** 30;

/** This thread takes the liveness lock of claim `id` of the mapped `buffer`'s file; false when another thread holds it. */
export function livenessHold(buffer, id) {
  return requireNative('livenessHold()').livenessHold(new Uint8Array(buffer), id);
}

/** Gives back this thread's liveness lock of claim `id` (false: it held none). */
export function livenessRelease(buffer, id) {
  return requireNative('livenessRelease()').livenessRelease(new Uint8Array(buffer), id);
}

/** Whether some thread, of any process in any PID namespace, holds the liveness lock of claim `id`. */
export function livenessAlive(buffer, id) {
  return requireNative('livenessAlive()').livenessAlive(new Uint8Array(buffer), id);
}

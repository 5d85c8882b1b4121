// Files beneath a root directory (src/native/root_files.h): what CacheFS
// does to a directory it serves, each call on a path relative to the root's
// open descriptor, resolved beneath it so that no symbolic link (or one
// swapped in meanwhile) leads outside. Results and errors are node:fs's for
// the same call by path; a path leading outside fails with code
// ERR_PATH_OUTSIDE_ROOT and the relative path in `relative`.

import { describe } from '../errors.js';
import { requireNative } from './addon.js';
import { checkFd } from './arguments.js';

export const ROOT_OPEN = 1;
export const ROOT_STAT = 2;
export const ROOT_READDIR = 3;
export const ROOT_MKDIR = 4;
export const ROOT_UNLINK = 5;
export const ROOT_RENAME = 6;
export const ROOT_RM = 7;
export const ROOT_LOAD = 8;
export const ROOT_STORE = 9;
export const ROOT_REWRITE = 10;

/** ROOT_MKDIR and ROOT_RM flags. */
export const ROOT_RECURSIVE = 1;
export const ROOT_FORCE = 2;

/** A path relative to the root: no leading "/", no NUL, no ".." component ("" is the root). */
function checkRelative(name, value) {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string (got ${describe(value)})`);
  if (value.startsWith('/') || value.includes('\0') || value.split('/').includes('..')) {
    throw new RangeError(`${name} must be a path relative to the root, without ".." or NUL (got ${describe(value)})`);
  }
}

function checkRootCall(op, rootFd, rootPath, path, dest, flags, mode, data) {
  if (!Number.isInteger(op) || op < ROOT_OPEN || op > ROOT_REWRITE) throw new RangeError(`op must be one of the ROOT_* operations (got ${describe(op)})`);
  checkFd(rootFd);
  if (typeof rootPath !== 'string' || !rootPath.startsWith('/') || rootPath.includes('\0')) {
    throw new TypeError(`rootPath must be an absolute path without NUL bytes (got ${describe(rootPath)})`);
  }
  checkRelative('path', path);
  checkRelative('dest', dest);
  if (!Number.isInteger(flags) || flags < 0 || flags > 0x7fffffff) throw new RangeError(`flags must be a non-negative 32-bit integer (got ${describe(flags)})`);
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) throw new RangeError(`mode must be a file mode from 0 to 0o7777 (got ${describe(mode)})`);
  if ((op === ROOT_STORE || op === ROOT_REWRITE) && !(data instanceof Uint8Array)) throw new TypeError(`data must be a Buffer or Uint8Array (got ${describe(data)})`);
}

/**
 * One operation beneath the root directory open as `rootFd` (its real path
 * `rootPath`, for messages and absolute links), synchronously: the result
 * (descriptor, stats, names, first directory made, { before, data, after })
 * or a thrown node:fs-shaped error.
 * @param {number} op ROOT_*
 * @param {number} rootFd
 * @param {string} rootPath
 * @param {string} path relative to the root ("" for the root)
 * @param {string} dest ROOT_RENAME's target, else ""
 * @param {number} flags open(2) flags for ROOT_OPEN and ROOT_STORE; ROOT_RECURSIVE | ROOT_FORCE for ROOT_MKDIR and ROOT_RM
 * @param {number} mode the mode of a file or directory made
 * @param {Uint8Array} [data] what ROOT_STORE and ROOT_REWRITE write
 */
export function rootFilesSync(op, rootFd, rootPath, path, dest, flags, mode, data) {
  checkRootCall(op, rootFd, rootPath, path, dest, flags, mode, data);
  return requireNative('CacheFS over a directory').rootFilesSync(op, rootFd, rootPath, path, dest, flags, mode, data);
}

/** rootFilesSync() on the thread pool: a Promise of the same result. */
export function rootFiles(op, rootFd, rootPath, path, dest, flags, mode, data) {
  checkRootCall(op, rootFd, rootPath, path, dest, flags, mode, data);
  return requireNative('CacheFS over a directory').rootFiles(op, rootFd, rootPath, path, dest, flags, mode, data);
}

/**
 * Closes a descriptor that ROOT_OPEN gave this thread (EBADF for any other);
 * those still open when a worker thread exits are closed with it.
 */
export function closeRootDescriptor(fd) {
  requireNative('CacheFS over a directory').closeDescriptor(fd);
}

// Errors of InodeFS calls shaped as node:fs shapes them: code, errno,
// syscall, path and the message "ENOENT: no such file or directory, open '/a'".

import os from 'node:os';
import { ArenaCacheError, codes } from '../errors.js';

const DESCRIPTIONS = Object.freeze({
  ENOENT: 'no such file or directory',
  EEXIST: 'file already exists',
  ENOTDIR: 'not a directory',
  EISDIR: 'illegal operation on a directory',
  ENOTEMPTY: 'directory not empty',
  EINVAL: 'invalid argument',
  EROFS: 'read-only file system',
  ELOOP: 'too many symbolic links encountered',
  EBADF: 'bad file descriptor',
  EBUSY: 'resource busy or locked',
  EFBIG: 'file too large',
  ENAMETOOLONG: 'name too long',
});

/** An Error with node:fs's fields for `code` (a key of DESCRIPTIONS). */
export function fsError(code, syscall, path, dest) {
  const target = dest === undefined ? `'${path}'` : `'${path}' -> '${dest}'`;
  /** @type {NodeJS.ErrnoException & { dest?: string }} */
  const error = new Error(`${code}: ${DESCRIPTIONS[code]}, ${syscall} ${target}`);
  error.errno = -os.constants.errno[code];
  error.code = code;
  error.syscall = syscall;
  error.path = path;
  if (dest !== undefined) error.dest = dest;
  return error;
}

/** The store at `path` cannot be opened as an InodeFS store, for the reason `message` gives. */
export function storeError(path, message, cause) {
  return new ArenaCacheError(codes.ERR_INODEFS_STORE, `${path} cannot be opened as an InodeFS store: ${message}`, cause === undefined ? undefined : { cause });
}

/** A file whose blobs are missing from the store: damage (fsck() says which). */
export function missingContent(path) {
  return new ArenaCacheError(codes.ERR_INODEFS_STORE, `the content of ${path} is missing from the store; run fsck()`);
}

/**
 * A file too large to read into one Buffer, as node:fs refuses it (its
 * readFile reads at most 2 GiB - 1 bytes): read it through a handle instead.
 */
export function fileTooLarge(size) {
  return Object.assign(new RangeError(`File size (${size}) is greater than 2 GiB`), { code: 'ERR_FS_FILE_TOO_LARGE' });
}

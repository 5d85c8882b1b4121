// Errors shaped as node:fs shapes them, for failures the package finds
// itself rather than hears from the OS (an InodeFS path that does not
// exist, a file grown past its limit).

import os from 'node:os';
import { getSystemErrorMap } from 'node:util';

/**
 * libuv's names and descriptions by (negative) errno: the very words node:fs
 * puts in its messages ("illegal operation on a directory" for EISDIR), and
 * the addon's (see src/native/errors.cc).
 */
const SYSTEM_ERRORS = getSystemErrorMap();
/** The C library's names, for errnos libuv lacks (EDQUOT on Node 20). */
const ERRNO_NAMES = new Map(Object.entries(os.constants.errno).map(([name, value]) => [value, name]));

/** The name errno `errno` (positive) goes by in node:fs and the addon ("ENOTSUP" for 95); "E<n>" for one nobody names. */
export function errnoName(errno) {
  return SYSTEM_ERRORS.get(-errno)?.[0] ?? ERRNO_NAMES.get(errno) ?? `E${errno}`;
}

/**
 * An Error as node:fs throws it for a failed system call: code, errno
 * (negative, as node:fs gives it), syscall, path (and dest), and the message
 * "ENOENT: no such file or directory, open '/a'". `errno` is positive.
 * @param {string} code
 * @param {number} errno
 * @param {string} syscall
 * @param {string} path
 * @param {string} [dest] the second path of a rename, link or copy
 */
export function systemError(code, errno, syscall, path, dest) {
  const description = SYSTEM_ERRORS.get(-errno)?.[1] ?? 'unknown error';
  const target = dest === undefined ? `'${path}'` : `'${path}' -> '${dest}'`;
  /** @type {NodeJS.ErrnoException & { dest?: string }} */
  const error = new Error(`${code}: ${description}, ${syscall} ${target}`);
  error.errno = -errno;
  error.code = code;
  error.syscall = syscall;
  error.path = path;
  if (dest !== undefined) error.dest = dest;
  return error;
}

/**
 * systemError() for a failure the package finds itself rather than hears
 * from the OS (an InodeFS path that does not exist, a file grown past its
 * limit), named by `code`, such as 'ENOENT'.
 * @param {string} code
 * @param {string} syscall
 * @param {string} path
 * @param {string} [dest]
 */
export function fsError(code, syscall, path, dest) {
  const errno = os.constants.errno[code];
  if (errno === undefined || !SYSTEM_ERRORS.has(-errno)) throw new Error(`fsError: ${code} is not an errno name this system knows`);
  return systemError(code, errno, syscall, path, dest);
}

/** The most bytes one read of a whole file gives, as node:fs's readFile (its kIoMaxLength). */
export const MAX_READ_BYTES = 2 ** 31 - 1;

/**
 * A file too large to read into one Buffer, as node:fs refuses it (its
 * readFile reads at most MAX_READ_BYTES): read it through a handle instead.
 */
export function fileTooLarge(size) {
  return Object.assign(new RangeError(`File size (${size}) is greater than 2 GiB`), { code: 'ERR_FS_FILE_TOO_LARGE' });
}

// Errors shaped as node:fs shapes them, for failures the package finds
// itself rather than hears from the OS (an InodeFS path that does not
// exist, a file grown past its limit).

import os from 'node:os';
import { getSystemErrorMap } from 'node:util';

/**
 * libuv's descriptions by errno: the very words node:fs puts in its messages
 * ("illegal operation on a directory" for EISDIR).
 */
const SYSTEM_ERRORS = getSystemErrorMap();

/**
 * An Error as node:fs throws it for a failed system call: code, errno
 * (negative, as node:fs gives it), syscall, path (and dest), and the message
 * "ENOENT: no such file or directory, open '/a'".
 * @param {string} code an errno name, such as 'ENOENT'
 * @param {string} syscall
 * @param {string} path
 * @param {string} [dest] the second path of a rename, link or copy
 */
export function fsError(code, syscall, path, dest) {
  const errno = -os.constants.errno[code];
  const description = SYSTEM_ERRORS.get(errno)?.[1];
  if (description === undefined) throw new Error(`fsError: ${code} is not an errno name this system knows`);
  const target = dest === undefined ? `'${path}'` : `'${path}' -> '${dest}'`;
  /** @type {NodeJS.ErrnoException & { dest?: string }} */
  const error = new Error(`${code}: ${description}, ${syscall} ${target}`);
  error.errno = errno;
  error.code = code;
  error.syscall = syscall;
  error.path = path;
  if (dest !== undefined) error.dest = dest;
  return error;
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

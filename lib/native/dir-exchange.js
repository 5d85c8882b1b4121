// The renames a snapshot restore is made of, and the reflink probe that
// decides how its files are copied (src/native/dir_exchange.h). Their
// errors are shaped like node:fs's: code, errno, syscall, path and dest.

import { requireNative } from './addon.js';
import { checkPath } from '../validate.js';

/**
 * Swaps the paths `a` and `b` atomically (renameat2 RENAME_EXCHANGE). Throws
 * a node:fs-shaped error (syscall 'renameat2', path a, dest b); EINVAL,
 * ENOSYS or ENOTSUP (errno EOPNOTSUPP) mean the filesystem or kernel cannot
 * exchange.
 */
export function exchangePaths(a, b) {
  checkPath(a, 'a');
  checkPath(b, 'b');
  requireNative('exchangePaths()').exchangePaths(a, b);
}

/**
 * Renames `a` to `b` unless `b` exists: true when renamed, false when `b`
 * exists (renameat2 RENAME_NOREPLACE, or link + unlink where that is not
 * supported). Other failures throw node:fs-shaped errors.
 */
export function renameNoReplace(a, b) {
  checkPath(a, 'a');
  checkPath(b, 'b');
  return requireNative('renameNoReplace()').renameNoReplace(a, b);
}

/**
 * Whether files in `dir` can be reflinked (FICLONE between two probe files
 * made and removed there): { supported, code }, code the errno name when
 * not. Throws a node:fs-shaped error when the probe files cannot be made.
 */
export function probeReflink(dir) {
  checkPath(dir, 'dir');
  return requireNative('probeReflink()').probeReflink(dir);
}

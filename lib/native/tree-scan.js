// The listing of a directory tree for workspace snapshots
// (src/native/tree_scan.h): every entry with its lstat, as columns, in one
// trip to the thread pool. Its errors are shaped like node:fs's: code,
// errno, syscall and path.

import { describe } from '../errors.js';
import { requireNative } from './addon.js';
import { checkPath } from '../validate.js';

/**
 * Every entry below the directory `root` (root itself not included), with
 * its lstat, never following a symbolic link. Canonical order: depth-first
 * pre-order, the children of each directory sorted by the bytes of their
 * names (so 'a', 'a/b', 'a-b'). Names in `exclude` are skipped at the top
 * level only. An entry removed during the scan is left out; any other
 * failure rejects with a node:fs-shaped error naming the full path.
 * @param {string} root
 * @param {string[]} [exclude] top-level names to skip, e.g. ['.arenacache']
 * @returns {Promise<{ paths: string[], types: Uint8Array, modes: Uint32Array, sizes: Float64Array,
 *   devs: BigUint64Array, inos: BigUint64Array, atimeSec: Float64Array, atimeNsec: Uint32Array,
 *   mtimeSec: Float64Array, mtimeNsec: Uint32Array, ctimeSec: Float64Array, ctimeNsec: Uint32Array,
 *   targets: string[], digest: string, vanished: string[] }>} paths relative with '/'; types 1 file, 2 directory,
 *   3 symlink, 4 other; targets the symlinks' (readlink), '' for the rest; digest a SHA-256 (hex)
 *   over every entry's path, type, mode, size, dev, ino, mtime, ctime and target; vanished the
 *   directories listed but gone before they could be read (their contents are missing)
 */
export function scanTree(root, exclude = []) {
  checkPath(root, 'root');
  if (!Array.isArray(exclude)) throw new TypeError(`exclude must be an array of names (got ${describe(exclude)})`);
  for (let i = 0; i < exclude.length; i++) {
    const name = exclude[i];
    if (typeof name !== 'string' || name.length === 0 || name.includes('\0') || name.includes('/')) {
      throw new TypeError(`exclude[${i}] must be a file name: a non-empty string without '/' or NUL bytes (got ${describe(name)})`);
    }
  }
  return requireNative('scanTree()')
    .scanTree(root, exclude.slice())
    .then((scan) => {
      // Names come across as one string each for paths and targets (one
      // string per entry cost more than the scan): NUL never occurs in a name.
      const count = scan.types.length;
      if (typeof scan.paths === 'string') scan.paths = count === 0 ? [] : scan.paths.split('\0');
      if (typeof scan.targets === 'string') scan.targets = count === 0 ? [] : scan.targets.split('\0');
      return scan;
    });
}

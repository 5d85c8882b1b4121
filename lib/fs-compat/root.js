// Paths relative to a root: what every CacheFS backing is (a directory on
// disk, lib/fs/disk.js, or an InodeFS, lib/inode-fs/inode-backing.js).
//
// Every path a CacheFS call takes is relative to its root (a leading "/" is
// the root itself). ".." is resolved lexically, before anything is looked
// up (as path.posix.normalize does), and one that would climb above the root
// is refused. What the disk then resolves (symbolic links) is resolved
// beneath the root by the backing (see lib/fs/disk.js), never by a path check here.

import path from 'node:path';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { checkPathString } from './fs-arguments.js';

export function outside(given, root) {
  return new ArenaCacheError(codes.ERR_PATH_OUTSIDE_ROOT, `path ${describe(given)} is outside the root ${root}`);
}

/** Paths whose resolution is remembered, at most. */
const MEMO_SIZE = 4096;

export class Root {
  #paths = new Map();

  /** @param {string} root the real path of the root, or "/" for an InodeFS */
  constructor(root) {
    this.path = root;
  }

  /**
   * { key, target } of `given`. `key` names the entry in the cache: "" for
   * the root, "a/b" otherwise. `target` is what the backing is asked for:
   * the key, with a trailing "/" or "/." kept, since "a.txt/" is not
   * "a.txt" (node:fs answers ENOTDIR for a file). Lexical only: no disk
   * access. Recent answers are remembered (the same few paths are asked
   * for again and again).
   */
  resolve(given, name = 'path') {
    const known = this.#paths.get(given);
    if (known !== undefined) return known;
    checkPathString(given, name);
    const relative = given.replace(/^\/+/, '');
    // ".." that would climb above the root is refused, not clamped.
    const normalized = path.posix.normalize(relative || '.');
    if (normalized === '..' || normalized.startsWith('../')) throw outside(given, this.path);
    const key = normalized === '.' ? '' : normalized.replace(/\/$/, '');
    const resolved = Object.freeze({ key, target: key === '' ? '' : key + directorySuffix(relative) });
    if (this.#paths.size >= MEMO_SIZE) this.#paths.clear();
    this.#paths.set(given, resolved);
    return resolved;
  }

  /** The key of `given` (see resolve()). */
  key(given, name = 'path') {
    return this.resolve(given, name).key;
  }
}

/** "/." for a path ending in a "." component ("a/." or "a/./"), "/" for one ending in "/", else "". */
function directorySuffix(relative) {
  const trimmed = relative.replace(/\/+$/, '');
  if (trimmed === '.' || trimmed.endsWith('/.')) return '/.';
  return trimmed.length < relative.length ? '/' : '';
}

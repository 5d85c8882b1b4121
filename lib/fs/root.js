// Paths relative to a root.
//
// Every path a CacheFS call takes is relative to its root (a leading "/" is
// the root itself). A path that leaves the root lexically ("../x") is refused
// before anything is looked up; one that leaves it through a symbolic link
// is the backing's to refuse (see DiskBacking#confine in backing.js).

import path from 'node:path';
import { ArenaCacheError, codes, describe } from '../errors.js';

export function outside(given, root) {
  return new ArenaCacheError(codes.ERR_PATH_OUTSIDE_ROOT, `path ${describe(given)} is outside the root ${root}`);
}

/** Paths whose keys are remembered, at most. */
const KEY_MEMO_SIZE = 4096;

export class Root {
  #keys = new Map();

  /** @param {string} root the path keys are relative to (absolute() joins them to it) */
  constructor(root) {
    this.path = root;
  }

  /**
   * The key of `given` inside the root ("" for the root, "a/b" otherwise).
   * Lexical only: no disk access. Recent answers are remembered (the same
   * few paths are asked for again and again).
   */
  key(given, name = 'path') {
    const known = this.#keys.get(given);
    if (known !== undefined) return known;
    if (typeof given !== 'string') throw new TypeError(`${name} must be a string (got ${describe(given)})`);
    if (given.includes('\0')) throw new RangeError(`${name} must not contain NUL characters (got ${describe(given)})`);
    // Relative to the root ("/a" is "a"); ".." that would climb above it is refused, not clamped.
    const normalized = path.posix.normalize(given.replace(/^\/+/, '') || '.');
    if (normalized === '..' || normalized.startsWith('../')) throw outside(given, this.path);
    const key = normalized === '.' ? '' : normalized.replace(/\/$/, '');
    if (this.#keys.size >= KEY_MEMO_SIZE) this.#keys.clear();
    this.#keys.set(given, key);
    return key;
  }

  /** The absolute path of a key. */
  absolute(key) {
    if (key === '') return this.path;
    return this.path.endsWith('/') ? `${this.path}${key}` : `${this.path}/${key}`;
  }

  /** { key, absolute } of `given` (see key()). */
  resolve(given, name = 'path') {
    const key = this.key(given, name);
    return { key, absolute: this.absolute(key) };
  }
}

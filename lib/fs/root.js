// Paths confined to a root directory.
//
// Every path a CacheFS call takes is relative to its root (a leading "/" is
// the root itself). A path that leaves the root lexically ("../x") is refused
// before anything is looked up; one that leaves it through a symbolic link
// (a link inside the root pointing outside) is refused whenever the disk is
// touched, by resolving the real path of the deepest existing ancestor.

import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { ArenaCacheError, codes, describe } from '../errors.js';

function outside(given, root) {
  return new ArenaCacheError(codes.ERR_PATH_OUTSIDE_ROOT, `path ${describe(given)} is outside the root ${root}`);
}

/** Paths whose keys are remembered, at most. */
const KEY_MEMO_SIZE = 4096;

export class Root {
  #keys = new Map();

  /** @param {string} root an existing directory */
  constructor(root) {
    this.path = realpathSync(root);
    if (!statSync(this.path).isDirectory()) {
      throw Object.assign(new Error(`ENOTDIR: not a directory, '${root}'`), { code: 'ENOTDIR' });
    }
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
    return key === '' ? this.path : `${this.path}/${key}`;
  }

  /** { key, absolute } of `given` (see key()). */
  resolve(given, name = 'path') {
    const key = this.key(given, name);
    return { key, absolute: this.absolute(key) };
  }

  /**
   * Checks that no symbolic link takes `absolute` out of the root: the real
   * path of its deepest existing ancestor (itself, if it exists) stays inside.
   */
  confine(absolute, given) {
    let existing = absolute;
    let real;
    for (;;) {
      try {
        // One realpath(3) call, not the JS version's lstat per component: this runs on every miss.
        real = realpathSync.native(existing);
        break;
      } catch (error) {
        if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error;
        const parent = path.dirname(existing);
        if (parent === existing) throw error;
        existing = parent;
      }
    }
    if (real !== this.path && !real.startsWith(`${this.path}/`)) throw outside(given, this.path);
  }
}

// What a CacheFS serves: its backing, defined here once. Two kinds exist: a
// directory on disk (DiskBacking), and an InodeFS (lib/meta/backing.js),
// which hands one out through its [kBacking]() method, so this module needs
// nothing of lmdb.
//
// A backing is a Root (lexical keys of root-relative paths, absolute(key))
// plus:
//   id        names the root in a shared cache (every CacheFS of the same
//             backing, in any thread or process, derives the same keys)
//   confine(absolute, given)   refuses a path that a symbolic link leads
//             out of the root (ERR_PATH_OUTSIDE_ROOT)
//   sync      { stat, load, readdir, store, mkdir, unlink, rename, rm,
//               rewrite, readFile }: synchronous operations on absolute
//             paths, with node:fs's results and errors (see io.js for each)
//   async     { stat, load, readdir, store, mkdir, unlink, rename, rm,
//               open }: the same, resolving; open() resolves to a handle
//             with read, write, truncate, stat and close

import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe } from '../errors.js';
import { DISK_ASYNC, DISK_SYNC } from './io.js';
import { outside, Root } from './root.js';

/** The method through which an object (an InodeFS) gives a CacheFS its backing. */
export const kBacking = Symbol.for('arenacache.fs.backing');

/** A directory on disk, by its real path. */
export class DiskBacking extends Root {
  sync = DISK_SYNC;
  async = DISK_ASYNC;

  /** @param {string} root an existing directory */
  constructor(root) {
    const real = realpathSync(root);
    if (!statSync(real).isDirectory()) {
      throw Object.assign(new Error(`ENOTDIR: not a directory, '${root}'`), { code: 'ENOTDIR' });
    }
    super(real);
    this.id = real;
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

/** The backing of options.root: a directory path, or an object with [kBacking]() (an InodeFS). */
export function backingFor(root) {
  if (typeof root === 'string') return new DiskBacking(root);
  if (typeof root?.[kBacking] === 'function') return root[kBacking]();
  throw new TypeError(`options.root must be the path of a directory or an InodeFS (got ${describe(root)})`);
}

// What a CacheFS serves: its backing, defined here once. Two kinds exist: a
// directory on disk (DiskBacking, disk.js), and an InodeFS
// (lib/inode-fs/inode-backing.js), which hands one out through its [kBacking]()
// method, so this module needs nothing of lmdb.
//
// A backing is a Root (lib/fs-compat/root.js: { key, target } of a given path) plus:
//   id        names the root in a shared cache (every CacheFS of the same
//             backing, in any thread or process, derives the same keys)
//   sync      { stat, load, readdir, store, mkdir, unlink, rename, rm,
//               rewrite, readFile }: synchronous operations on targets
//             (paths relative to the root), with node:fs's results and
//             errors; mkdir gives the first directory it made (relative)
//   async     the same, resolving, and open(target, flags, mode), resolving
//             to a handle with read, write, truncate, stat and close
//   close()   (optional) lets go of what the backing holds
//   coarseTimes  true when a change may leave a file's stats as they were
//             (a disk file system stamps times from a clock coarser than
//             writes): CacheFS then keeps the racily clean rule (racy.js).
//             An InodeFS gives every change new times and loads a file in
//             one transaction, so it leaves this out.
// A path that would lead outside the root fails with ERR_PATH_OUTSIDE_ROOT.

import { describe } from '../errors.js';
import { kBacking } from '../internal-symbols.js';
import { DiskBacking } from './disk.js';

/** The backing of options.root: a directory path, or an object with [kBacking]() (an InodeFS). */
export function backingFor(root) {
  if (typeof root === 'string') return new DiskBacking(root);
  if (typeof root?.[kBacking] === 'function') return root[kBacking]();
  throw new TypeError(`options.root must be the path of a directory or an InodeFS (got ${describe(root)})`);
}

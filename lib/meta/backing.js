// An InodeFS as a CacheFS backing (the interface is in lib/fs/backing.js):
// CacheFS({ root: inodeFs, cache }) caches an InodeFS's files as it caches
// a directory's. Every operation is the InodeFS's own, synchronous inside
// (lmdb transactions), so the promise forms only wrap them.

import { realpathSync } from 'node:fs';
import { CREATE } from '../fs/io.js';
import { Root } from '../fs/root.js';

/** `store`'s flags as io.js gives them: 'w' replaces, 'a' appends, CREATE only creates. */
const HOW = new Map([
  ['w', 'w'],
  ['a', 'a'],
  [CREATE, 'create'],
]);

export class InodeBacking extends Root {
  /** @param {import('./inode-fs.js').InodeFS} ifs */
  constructor(ifs) {
    super('/');
    // By real path: one store spelled two ways is one root in a shared cache.
    this.id = `inodefs:${realpathSync(ifs.path)}`;
    const store = (path, data, flag, mode) => ifs.storeSync(path, data, HOW.get(flag), mode);
    this.sync = {
      stat: (path) => ifs.statSync(path),
      load: (path) => ifs.loadSync(path),
      readdir: (path) => ifs.readdirSync(path),
      store,
      mkdir: (path, options) => ifs.mkdirSync(path, options),
      unlink: (path) => ifs.unlinkSync(path),
      rename: (from, to) => ifs.renameSync(from, to),
      rm: (path, options) => ifs.rmSync(path, options),
      rewrite: (path, data, mode) => store(path, data, 'w', mode),
      readFile: (path) => ifs.readFileSync(path),
    };
    this.async = {
      ...Object.fromEntries(Object.entries(this.sync).map(([name, operation]) => [name, async (...args) => operation(...args)])),
      open: (path, flags, mode) => ifs.open(path, flags, mode),
    };
  }

  /** An InodeFS has no outside: its links resolve inside it. */
  confine() {}
}

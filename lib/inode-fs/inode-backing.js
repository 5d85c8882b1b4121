// An InodeFS as a CacheFS backing (the interface is in lib/fs/backing.js):
// CacheFS({ root: inodeFs, cache }) caches an InodeFS's files as it caches
// a directory's. Every operation is the InodeFS's own, synchronous inside
// (lmdb transactions), so the promise forms only wrap them.

import { realpathSync } from 'node:fs';
import { CREATE } from '../fs-compat/open-flags.js';
import { Root } from '../fs-compat/root.js';

/** `store`'s flags as CacheFS's flows give them (lib/fs/io.js): 'w' replaces, 'a' appends, CREATE only creates. */
const HOW = new Map(
  /** @type {[string | number, string][]} */ ([
    ['w', 'w'],
    ['a', 'a'],
    [CREATE, 'create'],
  ]),
);

export class InodeBacking extends Root {
  /** @param {import('./inode-fs.js').InodeFS} ifs */
  constructor(ifs) {
    super('/');
    // By real path: one store spelled two ways is one root in a shared cache.
    this.id = `inodefs:${realpathSync(ifs.path)}`;
    // Targets are relative to the root; the InodeFS takes absolute paths.
    const at = (target) => `/${target}`;
    const store = (target, data, flag, mode) => ifs.storeSync(at(target), data, HOW.get(flag), mode);
    this.sync = {
      stat: (target) => ifs.statSync(at(target)),
      load: (target) => ifs.loadSync(at(target)),
      readdir: (target) => ifs.readdirSync(at(target)),
      store,
      mkdir: (target, options) => {
        const first = ifs.mkdirSync(at(target), options);
        return first === undefined ? undefined : first.slice(1);
      },
      unlink: (target) => ifs.unlinkSync(at(target)),
      rename: (from, to) => ifs.renameSync(at(from), at(to)),
      rm: (target, options) => ifs.rmSync(at(target), options),
      rewrite: (target, data, mode) => store(target, data, 'w', mode),
      readFile: (target) => ifs.readFileSync(at(target)),
    };
    this.async = {
      ...Object.fromEntries(Object.entries(this.sync).map(([name, operation]) => [name, async (...args) => operation(...args)])),
      open: (target, flags, mode) => ifs.open(at(target), flags, mode),
    };
  }
}

// Snapshots of an InodeFS: a read-only view of the store as it was when the
// snapshot was taken, held by an lmdb read transaction (MVCC: writers never
// wait for it, and it never sees their later writes).

import { ArenaCacheError, codes, describe } from '../errors.js';
import { fsError } from './errors.js';
import { FsReader } from './reader.js';

// A snapshot dropped without release() would hold its reader slot (and
// lmdb's old pages) until the process exits: release it, and say so.
const abandoned = new FinalizationRegistry(({ transaction, name }) => {
  transaction.done();
  process.emitWarning(`InodeFS snapshot "${name}" was garbage-collected without release(); release() it when done`, { code: 'ARENACACHE_SNAPSHOT_LEAK' });
});

function releasedError(name) {
  return new ArenaCacheError(codes.ERR_INODEFS_CLOSED, `snapshot "${name}" was released`);
}

export class Snapshot extends FsReader {
  #store;
  #transaction;
  #view;
  #token = {};
  #onRelease;

  /** @param {() => void} onRelease called once, when released */
  constructor(store, name, onRelease) {
    super();
    this.#onRelease = onRelease;
    this.name = name;
    this.createdAt = Date.now();
    this.#store = store;
    try {
      this.#transaction = store.env.useReadTransaction();
    } catch (cause) {
      if (/MDB_READERS_FULL/.test(cause.message)) {
        throw new ArenaCacheError(codes.ERR_TOO_MANY_SNAPSHOTS, `snapshot "${name}" cannot be taken: every lmdb reader slot is in use (options.maxReaders); release() other snapshots`, { cause });
      }
      throw cause;
    }
    this.#view = store.view(this.#transaction);
    abandoned.register(this, { transaction: this.#transaction, name }, this.#token);
  }

  view() {
    if (this.#view === null) throw releasedError(this.name);
    return this.#view;
  }

  /** Ends the snapshot (its reader slot is freed); later calls fail with ERR_INODEFS_CLOSED. */
  release() {
    if (this.#view === null) return;
    this.#view = null;
    abandoned.unregister(this.#token);
    this.#transaction.done();
    this.#onRelease();
  }

  get released() {
    return this.#view === null;
  }
}

// Writes to a snapshot fail as they would on a read-only filesystem.
for (const method of ['writeFile', 'appendFile', 'mkdir', 'unlink', 'rm', 'rename', 'symlink']) {
  Snapshot.prototype[method] = async function readOnly(path) {
    throw fsError('EROFS', method === 'writeFile' || method === 'appendFile' ? 'open' : method, typeof path === 'string' ? path : describe(path));
  };
}

// Snapshots of an InodeFS: read-only views of the store as it was when each
// was taken.
//
// - Ephemeral (createSnapshot(name)): an lmdb read transaction. MVCC:
//   writers never wait for it and it never sees their later writes; it
//   holds a reader slot until released, and ends with the process.
// - Persistent (createSnapshot(name, { persist: true }), openSnapshot):
//   an epoch of the store's history (see inode-store.js), surviving restarts until
//   deleteSnapshot(). A handle to one holds nothing but memory.

import { ArenaCacheError, codes, describe } from '../errors.js';
import { fsError } from '../fs-compat/fs-errors.js';
import { EpochView } from './history.js';
import { FsReader } from './reader.js';

// An ephemeral snapshot dropped without release() would hold its reader
// slot (and lmdb's old pages) until the process exits: release it, and say so.
const abandoned = new FinalizationRegistry(({ transaction, name }) => {
  transaction.done();
  process.emitWarning(`InodeFS snapshot "${name}" was garbage-collected without release(); release() it when done`, { code: 'ARENACACHE_SNAPSHOT_LEAK' });
});

function endedError(name, why) {
  return new ArenaCacheError(codes.ERR_INODEFS_CLOSED, `snapshot "${name}" was ${why}`);
}

export class Snapshot extends FsReader {
  #view;
  #transaction;
  #token = {};
  #onRelease;
  #ended = 'released';
  #stillThere;

  /**
   * @param {{ name: string, createdAt: number, persistent: boolean, view: object, transaction?: object, stillThere?: () => boolean }} source
   * @param {() => void} onRelease called once, when released
   */
  constructor({ name, createdAt, persistent, view, transaction, stillThere }, onRelease) {
    super();
    this.name = name;
    this.createdAt = createdAt;
    this.persistent = persistent;
    this.#view = view;
    this.#transaction = transaction;
    this.#onRelease = onRelease;
    this.#stillThere = stillThere;
    if (transaction !== undefined) abandoned.register(this, { transaction, name }, this.#token);
  }

  /** An ephemeral snapshot of the latest committed state of `store`. */
  static ephemeral(store, name, onRelease) {
    let transaction;
    try {
      // A fresh transaction: this thread's current one may predate writes that have finished.
      store.env.resetReadTxn();
      transaction = store.env.useReadTransaction();
    } catch (cause) {
      if (/MDB_READERS_FULL/.test(cause.message)) {
        throw new ArenaCacheError(codes.ERR_TOO_MANY_SNAPSHOTS, `snapshot "${name}" cannot be taken: every lmdb reader slot is in use (options.maxReaders); release() other snapshots`, { cause });
      }
      throw cause;
    }
    return new Snapshot({ name, createdAt: Date.now(), persistent: false, view: store.view(transaction), transaction }, onRelease);
  }

  /** A handle to the persistent snapshot `record` ({ name, epoch, createdAt }). */
  static persistent(store, record, onRelease) {
    // Another InodeFS of the store (another thread) may delete it: its history would be reclaimed under this handle.
    const stillThere = () => {
      store.env.resetReadTxn();
      return store.snapshots.get(record.name)?.epoch === record.epoch;
    };
    return new Snapshot({ name: record.name, createdAt: record.createdAt, persistent: true, view: new EpochView(store, record.epoch), stillThere }, onRelease);
  }

  view() {
    if (this.#view !== null && this.#stillThere !== undefined && !this.#stillThere()) this.deleted();
    if (this.#view === null) throw endedError(this.name, this.#ended);
    return this.#view;
  }

  /**
   * Ends this handle: an ephemeral snapshot's reader slot is freed (and the
   * snapshot is gone); a persistent snapshot stays in the store. Later calls
   * fail with ERR_INODEFS_CLOSED.
   */
  release() {
    this.#end('released');
  }

  /** @private after deleteSnapshot() */
  deleted() {
    this.#end('deleted');
  }

  get released() {
    return this.#view === null;
  }

  #end(why) {
    if (this.#view === null) return;
    this.#view = null;
    this.#ended = why;
    if (this.#transaction !== undefined) {
      abandoned.unregister(this.#token);
      this.#transaction.done();
    }
    this.#onRelease();
  }
}

// Writes to a snapshot fail as they would on a read-only filesystem.
for (const method of ['writeFile', 'appendFile', 'mkdir', 'unlink', 'rm', 'rename', 'symlink', 'chmod', 'utimes', 'truncate']) {
  const syscall = method === 'writeFile' || method === 'appendFile' ? 'open' : method;
  const readOnly = (path) => fsError('EROFS', syscall, typeof path === 'string' ? path : describe(path));
  Snapshot.prototype[`${method}Sync`] = function readOnlySync(path) {
    throw readOnly(path);
  };
  Snapshot.prototype[method] = async function readOnlyAsync(path) {
    throw readOnly(path);
  };
}

// Reads of a persistent snapshot, and the reclaiming of history records no
// snapshot needs any more (the store's layout is described in inode-store.js).
//
// A snapshot of epoch s sees a record as it was at the end of epoch s: the
// current record if it was last written in an epoch not after s, else the
// history version whose epochs [e, lastEpoch] cover s (history keys end in
// lastEpoch, so it is the first key at or after s), else nothing.
//
// Reads need no read transaction: a writer moves a record to history in
// the same transaction that replaces it, so the current record and the
// history together answer for epoch s in every committed state.

import { ReadView } from './read-view.js';

/** Whether one of the snapshot epochs `pins` lies in [first, last]: a record current for those epochs is needed. */
export function pinned(pins, first, last) {
  return pins.some((pin) => pin >= first && pin <= last);
}

/** The first history record under key `prefix` whose versions reach epoch `epoch`, if it covers `epoch`. */
function versionAt(db, prefix, epoch) {
  for (const { key, value } of db.getRange({ start: [...prefix, epoch], limit: 1 })) {
    if (prefix.every((part, i) => key[i] === part) && (value.e ?? 0) <= epoch) return value;
  }
  return undefined;
}

const byteOrder = (a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));

export class EpochView extends ReadView {
  #store;
  #epoch;

  constructor(store, epoch) {
    super(store, undefined);
    this.#store = store;
    this.#epoch = epoch;
  }

  inode(ino) {
    const current = this.#store.inodes.get(ino);
    if (current !== undefined && (current.e ?? 0) <= this.#epoch) return current;
    return versionAt(this.#store.inodeHistory, [ino], this.#epoch);
  }

  dirent(parent, name) {
    const current = this.#store.dirents.get([parent, name]);
    if (current !== undefined && (current.e ?? 0) <= this.#epoch) return current.ino;
    return versionAt(this.#store.direntHistory, [parent, name], this.#epoch)?.ino ?? 0;
  }

  entries(parent) {
    const epoch = this.#epoch;
    const found = new Map();
    for (const { key, value } of this.#store.direntHistory.getRange({ start: [parent], end: [parent + 1] })) {
      if ((value.e ?? 0) <= epoch && key[2] >= epoch) found.set(key[1], { name: key[1], ino: value.ino, type: value.type });
    }
    for (const { key, value } of this.#store.dirents.getRange({ start: [parent, ''], end: [parent + 1, ''] })) {
      if ((value.e ?? 0) <= epoch) found.set(key[1], { name: key[1], ino: value.ino, type: value.type });
    }
    return [...found.values()].sort(byteOrder);
  }
}

/**
 * Inside write transaction `tx`, after a snapshot was deleted: removes the
 * history records no remaining snapshot needs, releasing their blobs.
 * Scans the history (O(history), not O(tree)). Returns how many went.
 */
export function reclaimHistory(store, tx) {
  let reclaimed = 0;
  for (const { key, value } of store.inodeHistory.getRange({}).asArray) {
    if (tx.needed(value.e ?? 0, key[1])) continue;
    tx.dropContent(value);
    store.inodeHistory.removeSync(key);
    reclaimed++;
  }
  for (const { key, value } of store.direntHistory.getRange({}).asArray) {
    if (tx.needed(value.e ?? 0, key[2])) continue;
    store.direntHistory.removeSync(key);
    reclaimed++;
  }
  return reclaimed;
}

// InvalidationBatch: the invalidations waiting to be sent, deduplicated.
//
// A key written ten times before the batch goes out is sent once, as its
// last op. A clear makes everything before it pointless, and a prefix clear
// everything before it under that prefix. Entries keep the order of their
// last write, which is the order peers apply them in, so a clear followed by
// a marker's new value leaves the new value in place.

import { keyHasPrefix } from '../cache/key-encoder.js';

export { keyHasPrefix };

function identity(key) {
  return typeof key === 'string' ? `s${key}` : `b${key.toString('latin1')}`;
}

export class InvalidationBatch {
  #entries = new Map();
  /** When the oldest waiting invalidation was added (performance.now()), or -1. */
  since = -1;

  get size() {
    return this.#entries.size;
  }

  /** Adds { op, key? } ('delete' and 'set' take a key, 'clearPrefix' a key that is the prefix). */
  add(invalidation) {
    const entries = this.#entries;
    if (entries.size === 0) this.since = performance.now();
    if (invalidation.op === 'clear') {
      entries.clear();
      entries.set('clear', invalidation);
      return;
    }
    if (invalidation.op === 'clearPrefix') {
      for (const [id, entry] of entries) {
        if ((entry.op === 'delete' || entry.op === 'set') && keyHasPrefix(entry.key, invalidation.key)) entries.delete(id);
      }
      const id = `p${identity(invalidation.key)}`;
      entries.delete(id);
      entries.set(id, invalidation);
      return;
    }
    const id = identity(invalidation.key);
    entries.delete(id);
    entries.set(id, invalidation);
  }

  /** The waiting invalidations in order; empties the batch. */
  take() {
    const taken = [...this.#entries.values()];
    this.#entries.clear();
    this.since = -1;
    return taken;
  }
}

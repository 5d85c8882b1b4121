// A small private copy, per CacheFS instance, of the files it has just read
// from the shared cache. A repeated read of a hot file then costs a Map
// lookup, two loads of shared words and a copy (what a private Map cache
// costs) instead of three shared-cache lookups.
//
// It never answers differently from the shared cache. An entry holds only
// while the two entries the read went through (the root's generation token
// and the file's record) are unchanged and unexpired: each read's
// RecordStamp (lib/arena/entries/record-stamp.js) still holds. Any write, delete,
// eviction or invalidation of either entry by any thread or process breaks
// it; writes to other files do not. An entry also ends when its record needs
// validating against the disk (validateMs).

import { kBothStampsAreCurrent } from '../internal-symbols.js';

/** Files above this share of the budget are never kept (one file must not flush all the others). */
const MAX_FILE_SHARE = 16;

export class NearFileCache {
  #entries = new Map();
  #bytes = 0;
  #maxBytes;
  #maxFileBytes;
  #cache;

  /**
   * @param {import('../cache/shared-cache.js').SharedCache} cache
   * @param {number} maxBytes the budget of kept file bytes (> 0)
   */
  constructor(cache, maxBytes) {
    this.#cache = cache;
    this.#maxBytes = maxBytes;
    this.#maxFileBytes = Math.floor(maxBytes / MAX_FILE_SHARE);
  }

  /** A private copy of the bytes kept for `key` if they still hold, else undefined. */
  get(key) {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (Date.now() < entry.until && this.#cache[kBothStampsAreCurrent](entry.record, entry.generation)) {
      return Buffer.from(entry.bytes);
    }
    this.#drop(key, entry);
    return undefined;
  }

  /**
   * Keeps a copy of `bytes` for `key`, read through the generation and
   * record entries whose stamps are given, valid until `freshUntil`.
   */
  keep(key, bytes, freshUntil, generation, record) {
    if (generation === null || record === null || bytes.length > this.#maxFileBytes) return;
    const old = this.#entries.get(key);
    if (old !== undefined) this.#drop(key, old);
    // Oldest first: a Map iterates in insertion order.
    for (const [oldestKey, oldest] of this.#entries) {
      if (this.#bytes + bytes.length <= this.#maxBytes) break;
      this.#drop(oldestKey, oldest);
    }
    this.#entries.set(key, { bytes: Buffer.from(bytes), until: freshUntil, generation, record });
    this.#bytes += bytes.length;
  }

  clear() {
    this.#entries.clear();
    this.#bytes = 0;
  }

  #drop(key, entry) {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes.length;
  }
}

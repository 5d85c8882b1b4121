// The keys under which CacheFS keeps files in a SharedCache (one cache can
// serve several roots):
//
//   metadata    fs\0m\0<root id>\0<generation>\0<path> -> stat record (see stat-record.js)
//   data        fs\0d\0<nonce>\0<block>                  -> bytes
//   listings    fs\0l\0<nonce>                           -> names
//   generation  fs\0g\0<root id>                         -> the root's generation token
//
// A file's data is keyed by a random nonce that its metadata record carries:
// every load from disk and every write through CacheFS stores the data under
// a new nonce, so replacing or dropping the record is all it takes to make
// old data unreachable, even when a rewrite leaves size and timestamps the
// same (file timestamps tick only every few milliseconds). A directory's
// listing is named the same way by its record.
//
// Renames and recursive removals change the generation that every metadata
// key carries (one random token per root, in the cache), so no thread keeps
// serving a path that moved or vanished with its directory.

import { createHash, randomBytes } from 'node:crypto';
import { FoundEntry } from '../cache/found-entry.js';

/** Characters of a generation token: 9 random bytes in base64. */
const GENERATION_CHARS = 12;

/** A random 48-bit integer naming one cached copy of a file's data or a directory's listing. */
export function newNonce() {
  return randomBytes(6).readUIntBE(0, 6);
}

/** The key of the directory listing named by `nonce`. */
export function listingKey(nonce) {
  return `fs\0l\0${nonce}`;
}

/** What the keys of the data blocks named by `nonce` start with (see dataKey). */
export function dataKeyPrefix(nonce) {
  return `fs\0d\0${nonce}\0`;
}

/** The key of data block `block`, after its dataKeyPrefix(). */
export function dataKey(prefix, block) {
  return `${prefix}${block}`;
}

/** The metadata keys of one root, and its generation token. */
export class RootKeys {
  #cache;
  #generationKey;
  /** The longest path (in UTF-8 bytes) whose record key the cache can hold; longer ones are served from the disk, uncached. */
  #maxPathBytes;
  /**
   * The generation as last read, { token, stamp } (see current()), or null.
   * Replaced, never changed: a caller may hold on to one.
   */
  #current = null;
  /** The record the generation's get fills: read right after it (a string value: no decode, no user code). */
  #found = new FoundEntry();

  /**
   * @param {ReturnType<typeof import('../cache/fully-waiting.js').fullyWaiting>} cache the cache's calls (see fully-waiting.js)
   * @param {string} rootIdentity what names the root on this machine (a backing's id)
   */
  constructor(cache, rootIdentity) {
    this.#cache = cache;
    /** 12 characters naming the root: keys name it by a short hash of its id, since every lookup hashes its key. */
    this.rootId = createHash('sha256').update(rootIdentity).digest('base64url').slice(0, 12);
    this.#generationKey = `fs\0g\0${this.rootId}`;
    this.#maxPathBytes = cache.maxKeyBytes - Buffer.byteLength(`fs\0m\0${this.rootId}\0${'g'.repeat(GENERATION_CHARS)}\0`);
  }

  /**
   * The cache key of `path`'s record in `generation` (by default the
   * current one), or null when the path is too long for the cache's keys.
   */
  recordKey(path, generation = this.generation()) {
    if (path.length * 3 > this.#maxPathBytes && Buffer.byteLength(path) > this.#maxPathBytes) return null;
    return `fs\0m\0${this.rootId}\0${generation}\0${path}`;
  }

  /** The records of the current generation among the cache keys `keys`: [cache key, path] pairs. */
  *currentRecords(keys) {
    const prefix = this.recordKey('');
    for (const key of keys) {
      if (typeof key === 'string' && key.startsWith(prefix)) yield [key, key.slice(prefix.length)];
    }
  }

  /** The root's current generation token (random, so one evicted and made anew never repeats an old one). */
  generation() {
    return this.current().token;
  }

  /**
   * The root's current generation: { token, stamp }, stamp the RecordStamp
   * of the cache entry the token was read from (null for one just started). While that stamp holds the
   * entry is unchanged and unexpired, so the token is what a get would
   * return: a check of shared memory stands in for the get. Any set,
   * delete, eviction or invalidation of the entry breaks it, and the token
   * is read again (a new generation started where there is none).
   */
  current() {
    const current = this.#current;
    if (current !== null && this.#cache.stampIsCurrent(current.stamp)) return current;
    const found = this.#found;
    const token = this.#cache.getFound(this.#generationKey, found);
    // None (evicted, or never made): a new one, with no stamp yet (no
    // record key of it has anything to find); the next call reads it.
    if (token === undefined) return { token: this.newGeneration(), stamp: null };
    this.#current = { token, stamp: found.toRecordStamp() };
    return this.#current;
  }

  /** Starts a new generation: every record key of the root changes. */
  newGeneration() {
    const token = randomBytes(9).toString('base64');
    this.#cache.set(this.#generationKey, token);
    this.#current = null;
    return token;
  }
}

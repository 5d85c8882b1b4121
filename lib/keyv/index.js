// arenacache/keyv: a Keyv storage adapter over a SharedCache, so that Keyv
// and cache-manager code can keep its API while every thread (and, with
// SharedCache.open(), every process) shares one cache.
//
// Keyv does the Keyv part: it prefixes keys with "<namespace>:", wraps each
// value as { value, expires } and serializes it (a JSON string by default).
// The adapter stores what it is given under the key it is given, hands the
// ttl to the cache so entries expire in the arena itself (has() and memory
// depend on that, not on Keyv's `expires`), and scopes clear() and
// iterator() to the namespace Keyv assigns to `store.namespace`.

import { EventEmitter } from 'node:events';
import { SharedCache } from '../cache/shared-cache.js';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { MAX_TTL, MAX_TTL_WORDS } from '../cache/options.js';
import { checkObject } from '../validate.js';
import { requireOptional } from '../optional-require.js';

function checkCacheArgument(cache) {
  if (cache instanceof SharedCache) {
    // Failing here names the mistake; failing on the first get() would not.
    if (cache.closed) throw new ArenaCacheError(codes.ERR_CACHE_CLOSED, 'cache is closed: pass a SharedCache that close() was not called on');
    return { cache, owned: false };
  }
  // Only a plain object is taken for SharedCache options, so that a Map, a
  // Keyv or another cache passed by mistake is reported as such.
  const proto = cache !== null && typeof cache === 'object' ? Object.getPrototypeOf(cache) : undefined;
  if (proto !== Object.prototype && proto !== null) {
    throw new TypeError(`cache must be a SharedCache or the options of a new one, such as { memoryBytes: 64 * 2 ** 20 } (got ${describe(cache)})`);
  }
  return { cache: new SharedCache(cache), owned: true };
}

/** undefined and 0 mean the cache's default ttl (Keyv passes undefined for "none"). */
function cacheTtl(ttl) {
  if (ttl === undefined || ttl === 0) return undefined;
  if (typeof ttl !== 'number') throw new TypeError(`ttl must be a number of milliseconds or undefined (got ${describe(ttl)})`);
  if (!(ttl > 0 && ttl <= MAX_TTL)) {
    throw new RangeError(`ttl must be a number of milliseconds above 0 and at most ${MAX_TTL_WORDS}, or 0 or undefined for the cache's default (got ${describe(ttl)})`);
  }
  return { ttl };
}

export class KeyvArenaCache extends EventEmitter {
  #cache;
  #owned;
  #namespace = undefined;

  /**
   * Keyv reads `opts.dialect` and calls `opts.url.includes()` to decide
   * whether to wire `iterator()` itself (only for its own SQL/Redis/Mongo
   * adapters); url must therefore be a string. createKeyv() wires it.
   */
  opts = { dialect: 'arenacache', url: '' };

  /**
   * @param {SharedCache | import('../cache/options.js').DEFAULTS} cache a
   *   SharedCache (new, attached or opened; the caller keeps ownership), or
   *   options for `new SharedCache(options)` (the adapter owns that cache
   *   and disconnect() closes it)
   */
  constructor(cache) {
    super();
    const checked = checkCacheArgument(cache);
    this.#cache = checked.cache;
    this.#owned = checked.owned;
  }

  /** The SharedCache the adapter stores in. */
  get cache() {
    return this.#cache;
  }

  /**
   * The Keyv namespace (without the ":"), assigned by Keyv; it scopes clear()
   * and iterator(). undefined or '' means the whole cache.
   */
  get namespace() {
    return this.#namespace;
  }

  set namespace(namespace) {
    if (namespace !== undefined && typeof namespace !== 'string') {
      throw new TypeError(`namespace must be a string or undefined (got ${describe(namespace)})`);
    }
    this.#namespace = namespace;
  }

  async get(key) {
    return this.#read(() => this.#cache.get(key));
  }

  async getMany(keys) {
    return this.#read(() => keys.map((key) => this.#cache.get(key)));
  }

  async has(key) {
    return this.#read(() => this.#cache.has(key));
  }

  async hasMany(keys) {
    return this.#read(() => keys.map((key) => this.#cache.has(key)));
  }

  /** @returns {Promise<true>} (Keyv passes a boolean result on as its own) */
  async set(key, value, ttl) {
    this.#cache.set(key, value, cacheTtl(ttl));
    return true;
  }

  /**
   * Stores the entries in order. Every ttl is checked first, so a bad ttl
   * stores nothing; another failure (a value too large) rejects with entries
   * before it stored, and Keyv then reports false for the whole batch.
   * @returns {Promise<boolean[]>} Keyv#setMany returns this array as is
   */
  async setMany(entries) {
    const ttls = entries.map((entry) => cacheTtl(entry.ttl));
    entries.forEach((entry, i) => this.#cache.set(entry.key, entry.value, ttls[i]));
    return entries.map(() => true);
  }

  /** @returns {Promise<boolean>} whether the key had a live entry */
  async delete(key) {
    return this.#cache.delete(key);
  }

  /** @returns {Promise<boolean>} whether every key had a live entry (as Keyv's own fallback answers) */
  async deleteMany(keys) {
    let all = true;
    for (const key of keys) if (!this.#cache.delete(key)) all = false;
    return all;
  }

  /**
   * Removes the namespace's entries, or with no namespace every entry of the
   * cache (other users' included). Not atomic: it walks the keys and deletes
   * those of the namespace, so an entry another thread sets meanwhile may stay.
   */
  async clear() {
    const prefix = this.#prefix();
    if (prefix === null) {
      this.#cache.clear();
      return;
    }
    // keys() reads each shard at one instant, so deleting while walking is safe.
    for (const key of this.#cache.keys()) {
      if (typeof key === 'string' && key.startsWith(prefix)) this.#cache.delete(key);
    }
  }

  /**
   * [key, stored value] for each entry of `namespace` (all string keys with
   * none), keys still prefixed: the form Keyv#generateIterator expects.
   * @param {string} [namespace] Keyv passes `store.namespace`
   */
  async *iterator(namespace = this.#namespace) {
    const prefix = this.#prefix(namespace) ?? '';
    let keys;
    try {
      keys = this.#cache.keys();
    } catch (error) {
      this.#report(error);
      throw error;
    }
    for (const key of keys) {
      if (typeof key !== 'string' || !key.startsWith(prefix)) continue;
      const value = this.#read(() => this.#cache.get(key));
      // Deleted or expired since keys() listed it.
      if (value !== undefined) yield [key, value];
    }
  }

  /** Closes the cache if the adapter created it; a cache it was given stays open for its owner. */
  async disconnect() {
    if (this.#owned) this.#cache.close();
  }

  /** What the keys of `namespace` start with, or null for no namespace. */
  #prefix(namespace = this.#namespace) {
    return namespace ? `${namespace}:` : null;
  }

  /**
   * Keyv 5 emits 'error' itself when set, delete, clear, setMany or
   * deleteMany reject, but not for reads: get() swallows the rejection and
   * getMany(), has() and hasMany() pass it on without emitting. Reads
   * therefore emit here (Keyv forwards the store's 'error' to its own) and
   * still reject, so every failure reaches keyv.on('error') once and
   * throwOnErrors still throws. No listener (the adapter used without Keyv):
   * only the rejection, as EventEmitter would throw on an unheard 'error'.
   */
  #read(read) {
    try {
      return read();
    } catch (error) {
      this.#report(error);
      throw error;
    }
  }

  #report(error) {
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }
}

/**
 * A Keyv over a new KeyvArenaCache, with keyv.iterator() wired to the
 * adapter's (Keyv wires iterators only for its own adapters).
 * @param {SharedCache | import('../cache/options.js').DEFAULTS} cache as for `new KeyvArenaCache(cache)`
 * @param {import('keyv').KeyvOptions} [keyvOptions] Keyv's options, without store
 * @returns {import('keyv').Keyv}
 */
export function createKeyv(cache, keyvOptions = {}) {
  checkObject(keyvOptions, 'keyvOptions');
  if (Object.hasOwn(keyvOptions, 'store')) {
    throw new TypeError('keyvOptions.store must not be given: createKeyv() makes the store from its first argument');
  }
  // Loaded here, not imported above: the adapter itself works without keyv
  // (a user who writes new Keyv({ store }) has it), and its absence is then
  // ERR_KEYV_MISSING, not a raw ERR_MODULE_NOT_FOUND at import.
  const { Keyv } = requireOptional('keyv', codes.ERR_KEYV_MISSING, 'createKeyv()');
  const store = new KeyvArenaCache(cache);
  let keyv;
  try {
    keyv = new Keyv({ ...keyvOptions, store });
  } catch (error) {
    // A cache made from options here would have no owner left to close it.
    store.disconnect();
    throw error;
  }
  keyv.iterator = keyv.generateIterator(store.iterator.bind(store));
  return keyv;
}

// Type declarations for 'arenacache/keyv' (lib/keyv/index.js): a Keyv 5
// storage adapter over a SharedCache, and createKeyv().
//
// Keyv's types are imported from 'keyv' (`import type`, erased at run time).
// keyv is an optional peer dependency of arenacache, but not of this entry:
// lib/keyv/index.js imports 'keyv' itself, so 'arenacache/keyv' cannot even
// be loaded without keyv installed, and whoever imports it has keyv's types
// too. Nobody else reads this file: types/index.d.ts (the main entry) does
// not refer to it, so TypeScript users of 'arenacache' without keyv never
// resolve 'keyv'. And a project that does import 'arenacache/keyv' without
// keyv installed still compiles with `skipLibCheck: true` (the unresolved
// import is not reported inside a declaration file, and the Keyv types turn
// into `any`); with `skipLibCheck: false` it reports the missing 'keyv',
// which is the truth: the import would fail at run time. Describing Keyv
// structurally here instead would only drift from Keyv's own types.

/// <reference types="node" />

import { EventEmitter } from 'node:events';
import type { Keyv, KeyvOptions, StoredData } from 'keyv';
import type { CacheKey, SharedCache, SharedCacheOptions } from './index.js';

/** An entry of setMany(), as Keyv passes it. */
export interface KeyvArenaCacheEntry {
  key: CacheKey;
  value: unknown;
  /** Ms; undefined or 0: the cache's default ttl. */
  ttl?: number | undefined;
}

/**
 * A Keyv storage adapter that stores in a SharedCache, so that every thread
 * (and, with SharedCache.open(), every process) shares the entries. Keyv
 * prefixes keys with "<namespace>:" and the adapter stores that string as the
 * cache key; Keyv's ttl becomes the entry's ttl in the cache.
 *
 * Emits 'error' (only while a listener is attached) when a read fails, and
 * still rejects: Keyv forwards a store's 'error' to its own.
 */
export declare class KeyvArenaCache extends EventEmitter {
  #private;

  /**
   * @param cache a SharedCache (new, attached or opened; the caller keeps
   *   ownership and it must not be closed), or the options of a new one,
   *   which the adapter owns and disconnect() closes
   */
  constructor(cache: SharedCache<any, any> | SharedCacheOptions);

  /** What Keyv reads to decide whether to wire iterator() itself (it does not: see createKeyv()). */
  opts: { dialect: 'arenacache'; url: string };

  /** The SharedCache the adapter stores in. */
  get cache(): SharedCache;

  /**
   * The Keyv namespace (without the ':'), assigned by Keyv; it scopes clear()
   * and iterator(). undefined or '' means the whole cache. Anything but a
   * string or undefined is a TypeError.
   */
  get namespace(): string | undefined;
  set namespace(namespace: string | undefined);

  /** The stored value, or undefined for a miss. */
  get<Value = any>(key: CacheKey): Promise<StoredData<Value> | undefined>;

  /** The stored values in order, undefined for each miss. */
  getMany<Value = any>(keys: readonly CacheKey[]): Promise<Array<StoredData<Value> | undefined>>;

  /** Whether the key has a live, unexpired entry. */
  has(key: CacheKey): Promise<boolean>;

  /** has() for each key. */
  hasMany(keys: readonly CacheKey[]): Promise<boolean[]>;

  /**
   * Stores `value` (Keyv's serialized string, or its object without a
   * serializer); `ttl` in ms, undefined or 0 for the cache's default.
   */
  set(key: CacheKey, value: unknown, ttl?: number): Promise<true>;

  /** Stores the entries in order (every ttl checked first); resolves to one `true` per entry. */
  setMany(entries: readonly KeyvArenaCacheEntry[]): Promise<true[]>;
  // Keyv 5 declares an adapter's setMany() as resolving to void, although
  // Keyv#setMany() returns what it resolves to: this second signature (never
  // chosen by a call, the first one matches first) keeps the adapter
  // assignable to Keyv's KeyvStoreAdapter type.
  setMany(entries: readonly KeyvArenaCacheEntry[]): Promise<void>;

  /** Whether the key had a live entry. */
  delete(key: CacheKey): Promise<boolean>;

  /** Whether every key had a live entry. */
  deleteMany(keys: Iterable<CacheKey>): Promise<boolean>;

  /**
   * Deletes the namespace's entries (string keys starting with
   * "<namespace>:"), or without a namespace every entry of the cache. Not atomic.
   */
  clear(): Promise<void>;

  /**
   * [key, stored value] of each entry of `namespace` (default: this
   * adapter's; every string key without one), keys still prefixed: the form
   * Keyv's generateIterator() expects.
   */
  iterator<Value = any>(namespace?: string): AsyncGenerator<[key: string, value: Value], void, unknown>;

  /** Closes the cache if the adapter created it from options; else does nothing. */
  disconnect(): Promise<void>;
}

/**
 * Keyv's options for createKeyv(): every one but `store`, which createKeyv()
 * makes (given at all, even as undefined, it is a TypeError). Each may be
 * undefined: `serialize: undefined, deserialize: undefined` is how the cache's
 * codec gets Keyv's objects instead of JSON strings.
 */
export type CreateKeyvOptions = { [Option in Exclude<keyof KeyvOptions, 'store'>]?: KeyvOptions[Option] | undefined } & { store?: never };

/**
 * `new Keyv({ ...keyvOptions, store: new KeyvArenaCache(cache) })`, with
 * `keyv.iterator()` wired to the adapter's (Keyv wires iterators only for its
 * own adapters).
 */
export declare function createKeyv<Value = any>(
  cache: SharedCache<any, any> | SharedCacheOptions,
  keyvOptions?: CreateKeyvOptions,
): Keyv<Value> & { iterator: NonNullable<Keyv<Value>['iterator']> };

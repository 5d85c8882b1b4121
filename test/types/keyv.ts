// Type tests of 'arenacache/keyv' (types/keyv.d.ts). Compiled, never run:
// `npx tsc -p test/types`. Every `@ts-expect-error` line is a misuse that
// must not compile.

import { EventEmitter } from 'node:events';
import { workerData } from 'node:worker_threads';
import { createCache } from 'cache-manager';
import { Keyv, type KeyvStoreAdapter } from 'keyv';
import { SharedCache, type SharedCacheHandle } from 'arenacache';
import { createKeyv, KeyvArenaCache, type CreateKeyvOptions, type KeyvArenaCacheEntry } from 'arenacache/keyv';
import { assertType, expectType, type Exact } from './expect.js';



interface Session {
  id: number;
  roles: string[];
}

declare const db: { loadUser(id: string): Promise<{ name: string }> };

async function keyvUsage(): Promise<void> {
  const cache = new SharedCache({ memoryBytes: 256 * 2 ** 20 });

  // The adapter is a Keyv store adapter and an EventEmitter.
  const adapter = new KeyvArenaCache(cache);
  const asStore: KeyvStoreAdapter = adapter;
  const asEmitter: EventEmitter = adapter;
  void [asStore, asEmitter];

  const sessions = new Keyv<Session>({ store: adapter, namespace: 'sessions' });
  sessions.on('error', (error: unknown) => console.error('cache error', error));
  await sessions.set('alice', { id: 1, roles: ['admin'] }, 30 * 60_000);
  const alice = await sessions.get('alice');
  if (alice !== undefined) expectType<number>(alice.id);

  // In a worker thread: attach and wrap in the worker's own Keyv.
  new Keyv({ store: new KeyvArenaCache(SharedCache.attach(workerData.handle as SharedCacheHandle)), namespace: 'sessions' });

  // From options: the adapter owns the cache, disconnect() closes it.
  const owned = new KeyvArenaCache({ memoryBytes: 64 * 2 ** 20, ttl: 60_000, policy: 'lru' });
  expectType<SharedCache>(owned.cache);
  console.log(owned.cache.stats().hitRatio, owned.cache.handle.buffer.byteLength);
  await owned.disconnect();

  // A typed cache can be handed over as it is.
  const typed = new SharedCache<string, string>({ memoryBytes: 2 ** 20 });
  new KeyvArenaCache(typed);

  // @ts-expect-error neither a SharedCache nor its options
  new KeyvArenaCache(new Map());
  // The options of a new cache: memoryBytes has a default.
  new KeyvArenaCache({ ttl: 1000 });
  // @ts-expect-error unknown SharedCache option
  new KeyvArenaCache({ memoryBytes: 2 ** 20, namespace: 'sessions' });

  // Every member, used directly.
  expectType<{ dialect: 'arenacache'; url: string }>(adapter.opts);
  adapter.namespace = 'pages';
  adapter.namespace = undefined;
  const namespace: string | undefined = adapter.namespace;
  // @ts-expect-error a namespace is a string or undefined
  adapter.namespace = 5;

  const stored = await adapter.get<string>('pages:/about');
  expectType<Promise<true>>(adapter.set('pages:/about', '{"value":"<html>","expires":null}', 60_000));
  await adapter.set('pages:/', { value: '<html>', expires: null });
  // @ts-expect-error the ttl is a number of milliseconds
  await adapter.set('pages:/', 'x', '60s');
  const values = await adapter.getMany<string>(['pages:/about', 'pages:/']);
  expectType<boolean>(await adapter.has('pages:/about'));
  expectType<boolean[]>(await adapter.hasMany(['pages:/about', 'pages:/']));
  const entries: KeyvArenaCacheEntry[] = [
    { key: 'pages:/a', value: 'a', ttl: 1000 },
    { key: 'pages:/b', value: 'b' },
  ];
  expectType<true[]>(await adapter.setMany(entries));
  // @ts-expect-error entries are { key, value, ttl } objects
  await adapter.setMany([['pages:/a', 'a']]);
  expectType<boolean>(await adapter.delete('pages:/a'));
  expectType<boolean>(await adapter.deleteMany(['pages:/a', 'pages:/b']));
  await adapter.clear();
  for await (const [key, value] of adapter.iterator('pages')) {
    expectType<string>(key);
    console.log(key, value);
  }
  for await (const entry of adapter.iterator<string>()) assertType<Exact<typeof entry, [key: string, value: string]>>();
  adapter.on('error', (error: Error) => console.error(error.message));
  await adapter.disconnect();
  void [namespace, stored, values];

  // createKeyv(): Keyv with iterator() wired.
  const pages = createKeyv<string>(cache, { namespace: 'pages', ttl: 60_000, throwOnErrors: true });
  assertType<Exact<typeof pages, Keyv<string> & { iterator: NonNullable<Keyv<string>['iterator']> }>>();
  await pages.set('/about', '<html>');
  const page: string | undefined = await pages.get('/about');
  for await (const [key, value] of pages.iterator(undefined)) console.log(key, value);
  createKeyv({ memoryBytes: 2 ** 20 });
  const keyvOptions: CreateKeyvOptions = { namespace: 'users', serialize: undefined, deserialize: undefined, useKeyPrefix: true };
  createKeyv(cache, keyvOptions);
  // @ts-expect-error createKeyv() makes the store itself
  createKeyv(cache, { store: new Map() });
  // @ts-expect-error not a Keyv option
  createKeyv(cache, { prefix: 'users' });
  void page;

  // cache-manager 7 over Keyv stores of the adapter.
  const users = createCache({
    stores: [new Keyv({ store: new KeyvArenaCache(cache), namespace: 'users' })],
    ttl: 10 * 60_000,
  });
  await users.set('42', { name: 'Ada' });
  await users.wrap('43', () => db.loadUser('43'));
  await users.mget(['42', '43']);
  await users.clear();
}

void keyvUsage;

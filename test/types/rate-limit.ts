// Type tests of 'arenacache/rate-limit' (types/rate-limit.d.ts). Compiled,
// never run: `npx tsc -p test/types`. Every `@ts-expect-error` line is a
// misuse that must not compile.

import express from 'express';
import { rateLimit, type ClientRateLimitInfo, type Store } from 'express-rate-limit';
import { SharedCache } from 'arenacache';
import { SharedCacheStore, type SharedCacheStoreInfo, type SharedCacheStoreOptions } from 'arenacache/rate-limit';
import { assertType, expectType, type Exact } from './expect.js';

async function rateLimitUsage(): Promise<void> {
  const cache = SharedCache.open('/dev/shm/app.arena', { memoryBytes: 64 * 2 ** 20 });

  // The store is an express-rate-limit Store, given a cache or a path.
  const store = new SharedCacheStore({ cache, prefix: 'api:' });
  const asStore: Store = store;
  const fromFile: Store = new SharedCacheStore({ path: '/dev/shm/limits.arena', memoryBytes: 2 ** 20 });
  void [asStore, fromFile];

  const app = express();
  app.use(rateLimit({ windowMs: 60_000, limit: 100, store }));

  // Used on its own.
  store.init({ windowMs: 1000 });
  const hit = await store.increment('10.0.0.7');
  expectType<number>(hit.totalHits);
  expectType<Date>(hit.resetTime);
  expectType<ClientRateLimitInfo>(hit);
  assertType<Exact<typeof hit, SharedCacheStoreInfo>>();
  const current = await store.get('10.0.0.7');
  if (current !== undefined) expectType<Date | undefined>(current.resetTime);
  await store.decrement('10.0.0.7');
  await store.resetKey('10.0.0.7');
  await store.resetAll();
  expectType<string>(store.prefix);
  expectType<boolean>(store.localKeys);
  expectType<SharedCache>(store.cache);
  await store.shutdown();

  const options: SharedCacheStoreOptions = { path: '/dev/shm/limits.arena' };
  void options;

  // @ts-expect-error options are required
  new SharedCacheStore();
  // @ts-expect-error the cache must be a SharedCache
  new SharedCacheStore({ cache: new Map() });
  // @ts-expect-error the prefix is a string
  new SharedCacheStore({ cache, prefix: 5 });
  // @ts-expect-error keys are strings
  await store.increment(5);
  // @ts-expect-error init needs windowMs
  store.init({});
}

void rateLimitUsage;

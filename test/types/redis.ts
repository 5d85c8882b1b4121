// Type tests of 'arenacache/redis' (types/redis.d.ts). Compiled, never
// run: `npx tsc -p test/types`. Every `@ts-expect-error` line is a misuse
// that must not compile.

import { Cluster, Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { SharedCache } from 'arenacache';
import { RedisTier, TIER_DEFAULTS, type RedisTierOptions, type RedisTierStats } from 'arenacache/redis';
import { expectType } from './expect.js';

interface User {
  id: number;
  name: string;
}

async function redisTierUsage(): Promise<void> {
  const cache = SharedCache.open('/dev/shm/app.arena', { memoryBytes: 64 * 2 ** 20 });
  // An ioredis Redis and Cluster both fit.
  const redis = new Redis({ host: '127.0.0.1', enableOfflineQueue: false });
  const tier = new RedisTier<User>({ cache, redis, namespace: 'users', deadlineMs: 200, ttl: 60_000, staleWhileRevalidate: 10_000 });
  const cluster = new Cluster([{ host: '127.0.0.1', port: 7000 }]);
  const onCluster = new RedisTier({ cache, redis: cluster, namespace: 'sessions', Redis });
  void onCluster;

  const user = await tier.get('42');
  expectType<User | undefined>(user);
  const stale = await tier.get('42', { allowStale: true });
  expectType<User | undefined>(stale);
  const many = await tier.getMany(['1', '2']);
  expectType<Array<User | undefined>>(many);
  const loaded = await tier.fetch(
    '42',
    async (key, { staleValue }) => {
      expectType<string>(key);
      expectType<User | undefined>(staleValue);
      return { id: Number(key), name: 'Ada' };
    },
    { ttl: 1000, allowStale: true, forceRefresh: false, allowStaleOnFetchRejection: true, acrossHosts: true, loadTimeoutMs: 5000 },
  );
  expectType<User>(loaded);
  await tier.set('42', { id: 42, name: 'Grace' }, { ttl: 5000 });
  await tier.delete('42');
  await tier.clear();
  const stats: RedisTierStats = tier.stats();
  expectType<number>(stats.local.hits);
  expectType<number>(stats.redis.timeouts);
  expectType<boolean>(stats.holder.holding);
  const unregister = tier.registerMetrics(new Registry(), { name: 'users' });
  unregister();
  expectType<number>(TIER_DEFAULTS.deadlineMs);
  expectType<boolean>(tier.closed);
  tier.close();

  // @ts-expect-error the namespace is required
  const noNamespace: RedisTierOptions = { cache, redis };
  // @ts-expect-error a key is a string
  await tier.get(42);
  // @ts-expect-error not a known fetch option
  await tier.fetch('k', () => ({ id: 1, name: 'x' }), { stale: true });
  // @ts-expect-error the loader must return a User
  await tier.fetch('k', () => 'text');
  // @ts-expect-error not a Redis client
  new RedisTier({ cache, redis: { get() {} }, namespace: 'x' });
  void noNamespace;
}
void redisTierUsage;

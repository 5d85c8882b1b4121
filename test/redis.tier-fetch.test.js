// The RedisTier's read-through and bookkeeping on one real redis-server:
// getMany, fetch's stale-while-revalidate (the stale window kept in Redis,
// so any host sees it), stale-if-error for a failing loader, forceRefresh,
// fetch without the cross-host lock, stats() and Prometheus metrics by
// tier, and an InvalidationBus on the same cache that never publishes the
// tier's own writes (entries, claim, lease, generation).
import assert from 'node:assert/strict';
import test from 'node:test';
import { pack } from 'msgpackr';
import { Registry } from 'prom-client';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { RedisTier } from '../lib/redis/tier.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { peer, SECRET } from './helpers/invalidation.js';
import { connectClient, freePort, redisMissing, startRedis, startRedisWithClient } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

const skip = redisMissing() ?? (!nativeAvailable && 'native addon unavailable');


/** A redis-server, a client of it, a cache and a tier over them (options for the tier). */
async function setUp(t, options = {}) {
  const { server, client } = await startRedisWithClient(t, { enableOfflineQueue: false });
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  t.after(() => cache.close());
  const tier = new RedisTier({ cache, redis: client, namespace: 'app', ...options });
  t.after(() => tier.close());
  // Once the holder has a lease, hits are local.
  await until(() => tier.stats().holder.leaseRemainingMs > 0, 'the lease');
  return { server, client, cache, tier };
}

test('getMany: local copies at once, the rest from Redis in one go, in order, undefined for what Redis lacks', { skip, timeout: 30_000 }, async (t) => {
  const { client, tier } = await setUp(t);
  await tier.set('a', 1);
  await client.set('app:b', pack({ b: true }));
  assert.equal(await tier.get('a'), 1);
  const before = tier.stats();
  assert.deepEqual(await tier.getMany(['a', 'b', 'none', 'a']), [1, { b: true }, undefined, 1]);
  const after = tier.stats();
  assert.equal(after.local.hits - before.local.hits, 2, 'a, twice, from the shared cache');
  assert.equal(after.redis.reads - before.redis.reads, 2, 'b and none from Redis');
  assert.equal(after.redis.misses - before.redis.misses, 1);
  assert.deepEqual(await tier.getMany([]), []);
});

test('fetch: a value past its ttl is served stale within staleWhileRevalidate while one refresh runs; past the window it is loaded again', { skip, timeout: 30_000 }, async (t) => {
  const { client, tier } = await setUp(t, { staleWhileRevalidate: 2000 });
  let loads = 0;
  let release;
  const loader = async (key, { staleValue }) => {
    loads++;
    if (loads > 1) await new Promise((resolve) => (release = resolve));
    return { version: loads, staleValue: staleValue ?? null };
  };
  assert.deepEqual(await tier.fetch('feed', loader, { ttl: 150 }), { version: 1, staleValue: null });
  // Redis keeps it for ttl + the window: any host can tell it is stale.
  const pttl = await client.pttl('app:feed');
  assert.ok(pttl > 1500 && pttl <= 2150, `PTTL ${pttl}`);
  await new Promise((resolve) => setTimeout(resolve, 250));
  // Stale: served at once, one refresh starts, and others get the stale value too.
  assert.deepEqual(await tier.fetch('feed', loader, { ttl: 150 }), { version: 1, staleValue: null });
  assert.deepEqual(await tier.fetch('feed', loader, { ttl: 150 }), { version: 1, staleValue: null });
  await until(() => release !== undefined, 'the refresh');
  assert.equal(loads, 2, 'one refresh for both stale reads');
  assert.equal(await tier.get('feed'), undefined, 'get() does not serve a stale value...');
  assert.deepEqual(await tier.get('feed', { allowStale: true }), { version: 1, staleValue: null }, '...unless allowStale');
  release();
  await until(async () => (await tier.get('feed'))?.version === 2, 'the refreshed value');
  assert.deepEqual(await tier.get('feed'), { version: 2, staleValue: { version: 1, staleValue: null } }, 'the loader was given the stale value');
  assert.equal(tier.stats().local.staleWhileRevalidate, 2);

  // allowStale: false waits for the fresh value.
  await new Promise((resolve) => setTimeout(resolve, 250));
  const fresh = tier.fetch('feed', loader, { ttl: 150, allowStale: false });
  await until(() => loads === 3, 'the load');
  release();
  assert.equal((await fresh).version, 3);
});

test('fetch: a failing loader rejects, or with allowStaleOnFetchRejection answers with the stale value; forceRefresh loads over a fresh value', { skip, timeout: 30_000 }, async (t) => {
  const { tier } = await setUp(t, { staleWhileRevalidate: 5000 });
  await tier.fetch('k', () => 'first', { ttl: 100 });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const failing = () => {
    throw Object.assign(new Error('backend down'), { code: 'EDOWN' });
  };
  await assert.rejects(tier.fetch('k', failing, { allowStale: false }), { message: 'backend down' });
  assert.equal(await tier.fetch('k', failing, { allowStale: false, allowStaleOnFetchRejection: true }), 'first');
  assert.equal(tier.stats().local.staleIfError, 1);
  // Fresh values are loaded again on demand.
  await tier.set('k', 'fresh', { ttl: 60_000 });
  assert.equal(await tier.fetch('k', () => 'never'), 'fresh');
  assert.equal(await tier.fetch('k', () => 'forced', { forceRefresh: true }), 'forced');
  assert.equal(await tier.get('k'), 'forced');
});

test('fetch with acrossHosts: false loads without the lock in Redis (one loader per machine still)', { skip, timeout: 30_000 }, async (t) => {
  const { client, tier } = await setUp(t);
  let loads = 0;
  const loader = async () => {
    loads++;
    await new Promise((resolve) => setTimeout(resolve, 50));
    return 'v';
  };
  const monitor = client.duplicate();
  const seen = [];
  await monitor.connect();
  t.after(() => monitor.disconnect());
  const feed = await monitor.monitor();
  feed.on('monitor', (time, args) => seen.push(args.join(' ')));
  t.after(() => feed.disconnect());
  const values = await Promise.all([1, 2, 3].map(() => tier.fetch('solo', loader, { acrossHosts: false })));
  assert.deepEqual(values, ['v', 'v', 'v']);
  assert.equal(loads, 1);
  await until(() => seen.some((line) => line.startsWith('set app:solo')), 'the SET in the monitor feed');
  assert.deepEqual(seen.filter((line) => line.includes('lock')), [], 'no lock key was set');
  assert.equal(tier.stats().loads, 1);
});

test('stats() and registerMetrics(): counts by tier, read at scrape time', { skip, timeout: 30_000 }, async (t) => {
  const { tier } = await setUp(t);
  await tier.set('m', 'value');
  await tier.get('m');
  await tier.get('m');
  await tier.get('absent');
  await tier.fetch('loaded', () => 'l');
  await tier.delete('m');
  const stats = tier.stats();
  assert.equal(stats.gets, 4);
  assert.equal(stats.local.hits, 1);
  assert.equal(stats.redis.hits, 1);
  assert.equal(stats.redis.misses, 2);
  assert.equal(stats.redis.writes, 2);
  assert.equal(stats.redis.deletes, 1);
  assert.equal(stats.loads, 1);
  assert.equal(stats.holder.holding, true);
  assert.ok(stats.holder.generation >= 1);
  const registry = new Registry();
  const unregister = tier.registerMetrics(registry, { name: 'users' });
  const text = await registry.metrics();
  assert.match(text, /arenacache_redis_hits_total\{tier="users",source="local"\} 1/);
  assert.match(text, /arenacache_redis_hits_total\{tier="users",source="redis"\} 1/);
  assert.match(text, /arenacache_redis_misses_total\{tier="users"\} 2/);
  assert.match(text, /arenacache_redis_redis_writes_total\{tier="users",kind="set"\} 2/);
  assert.match(text, /arenacache_redis_loads_total\{tier="users"\} 1/);
  assert.match(text, /arenacache_redis_holding\{tier="users"\} 1/);
  assert.throws(() => tier.registerMetrics(registry, { name: 'users' }), { code: 'ERR_METRICS_DUPLICATE' });
  unregister();
});

test("an InvalidationBus on the tier's cache publishes none of the tier's writes (entries, claim, lease, generation)", { skip, timeout: 30_000 }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const client = await connectClient(t, server.port);
  const a = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const b = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const busA = await new InvalidationBus(a, { secret: SECRET, udp: {} }).start();
  const busB = await new InvalidationBus(b, { secret: SECRET, udp: {} }).start();
  t.after(async () => {
    await busA.close();
    await busB.close();
    a.close();
    b.close();
  });
  await peer(busA, busB);
  const received = [];
  busB.on('received', ({ invalidations }) => received.push(...invalidations));
  const tier = new RedisTier({ cache: a, redis: client, namespace: 'app' });
  t.after(() => tier.close());
  await until(() => tier.stats().holder.leaseRemainingMs > 0, 'the lease');
  await tier.set('k', 1);
  await tier.get('k');
  await tier.fetch('f', () => 2);
  await new Promise((resolve) => setTimeout(resolve, 400)); // several lease renewals and claim renewals
  a.set('user write', 1); // published: when it arrives, anything published before it has too
  await until(() => received.length > 0, 'the user write at B');
  assert.deepEqual(JSON.parse(JSON.stringify(received)).map((invalidation) => invalidation.key ?? invalidation), ['user write']);
});

test('a holder that closes gives the role up at once: the lease ends, and another instance takes over well before the claim would lapse', { skip, timeout: 30_000 }, async (t) => {
  const { client, cache, tier } = await setUp(t);
  const other = new RedisTier({ cache: SharedCache.attach(cache.handle), redis: client, namespace: 'app' });
  t.after(() => other.close());
  await tier.set('k', 'v');
  await tier.get('k');
  assert.equal(tier.stats().holder.holding, true);
  assert.equal(other.stats().holder.holding, false);
  const closedAt = Date.now();
  tier.close();
  assert.equal(other.stats().holder.leaseRemainingMs, 0, 'no copy is vouched for once the holder has gone');
  await until(() => other.stats().holder.holding && other.stats().holder.leaseRemainingMs > 0, 'the other instance holding, with a lease', 2000);
  const tookMs = Date.now() - closedAt;
  assert.ok(tookMs < 500, `took over after ${tookMs} ms (the claim lapses after 600 ms)`);
  t.diagnostic(`taken over ${tookMs} ms after close()`);
  // And it applies invalidations.
  await other.get('k');
  await client.set('app:k', pack('changed'));
  await until(async () => (await other.get('k')) === 'changed', 'the write through the new holder');
});

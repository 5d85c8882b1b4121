// Attacks on the RedisTier from its review, each a test that failed before
// its fix: namespaces whose keys collided, a generation that came back
// after its key was evicted, a key too long for the cache written by another
// client (it crashed the holder), close() with an invalidation in flight or
// right after the constructor, a refresh and a plain fetch sharing a flight,
// a tracking connection gone silent, a value too large for the cache, bytes
// that are not msgpack, and what DEL deleted.
import assert from 'node:assert/strict';
import test from 'node:test';
import { Redis } from 'ioredis';
import { pack } from 'msgpackr';
import { SharedCache } from '../lib/index.js';
import { entryKey, stateKeys } from '../lib/redis/holder.js';
import { RedisTier } from '../lib/redis/tier.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { redisMissing, startRedisCluster, startRedisWithClient } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

const skip = redisMissing() ?? (!nativeAvailable && 'native addon unavailable');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));


const serverAndClient = (t) => startRedisWithClient(t, { enableOfflineQueue: false });

function tierOn(t, cache, client, options) {
  const tier = new RedisTier({ cache, redis: client, namespace: 'app', ...options });
  t.after(() => tier.close());
  return tier;
}

const leased = (tier) => until(() => tier.stats().holder.leaseRemainingMs > 0, 'the lease');

test('no key of one namespace is a key of another: entry keys never equal state keys, for namespaces that extend each other', () => {
  for (const [a, b] of [['a', 'a:1'], ['a:1', 'a'], ['x', 'x:y:2']]) {
    const states = Object.values(stateKeys(b));
    for (const generation of [0, 1, 2, 1795806846570]) {
      for (const key of ['lease', 'gen', 'claim', 'endpoint', 'y:2:lease', '1:lease', 'flight:load:k']) {
        const entry = entryKey(a, generation, key);
        assert.ok(!states.some((state) => entry === state || (state.endsWith(':') && entry.startsWith(state))), `${a}/${generation}/${key} is a state key of ${b}`);
      }
    }
  }
});

test("namespace a's values are its own: keys named like another namespace's bookkeeping read Redis, and cannot move that namespace's generation", { skip, timeout: 30_000 }, async (t) => {
  const { client } = await serverAndClient(t);
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  t.after(() => cache.close());
  const a1 = tierOn(t, cache, client, { namespace: 'a:1' });
  const a = tierOn(t, cache, client, { namespace: 'a' });
  await leased(a1);
  await leased(a);
  for (const key of ['lease', 'claim', 'gen', 'endpoint']) assert.equal(await a.get(key), undefined, key);
  const generation = a1.stats().holder.generation;
  await a.set('gen', 1);
  await a.get('gen');
  assert.equal(a1.stats().holder.generation, generation);
});

test('an evicted generation key never brings old copies back: nothing is served locally until a new, never-used generation', { skip, timeout: 30_000 }, async (t) => {
  const { client } = await serverAndClient(t);
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  t.after(() => cache.close());
  const tier = tierOn(t, cache, client);
  await leased(tier);
  await tier.set('x', 'old');
  await tier.get('x');
  const old = tier.stats().holder.generation;
  // As an eviction would: the generation key goes, the old entry stays.
  cache.delete(stateKeys('app').genKey);
  await client.set('app:x', pack('new'));
  assert.equal(await tier.get('x'), 'new', 'no generation: read from Redis');
  // A lost tracking connection makes the holder start a generation: never the old one.
  await client.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
  await until(() => tier.stats().holder.generation !== 0 && tier.stats().holder.generation !== old && tier.stats().holder.leaseRemainingMs > 0, 'a new generation, with a lease');
  assert.ok(tier.stats().holder.generation > old);
  assert.equal(await tier.get('x'), 'new');
  assert.equal(await tier.get('x'), 'new');
});

test('a key too long for the cache, written by another client, does not crash the holder; the tier reads and writes such keys through Redis', { skip, timeout: 30_000 }, async (t) => {
  const { client } = await serverAndClient(t);
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  t.after(() => cache.close());
  const tier = tierOn(t, cache, client);
  await leased(tier);
  const long = 'k'.repeat(5000);
  await client.set(`app:${long}`, pack('written elsewhere'));
  await sleep(100); // the invalidation reaches the holder (an uncaught throw would end this process)
  assert.equal(await tier.get(long), 'written elsewhere');
  await tier.set(long, 'through the tier');
  assert.equal(await tier.get(long), 'through the tier');
  assert.equal(await tier.fetch(`${long}2`, () => 'loaded'), 'loaded');
  await tier.delete(long);
  assert.equal(await tier.get(long), undefined);
  assert.equal(tier.stats().holder.holding, true);
});

test('close() with an invalidation in flight, or right after the constructor, throws nothing later and leaves no tracking connection', { skip, timeout: 30_000 }, async (t) => {
  const { client } = await serverAndClient(t);
  const tracking = async () => (await client.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).split('\n').filter(Boolean).length;
  for (let round = 0; round < 5; round++) {
    const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
    const tier = new RedisTier({ cache, redis: client, namespace: 'app' });
    await leased(tier);
    await tier.set('k', round);
    await tier.get('k');
    await client.set('app:k', pack('changed'));
    tier.close();
    cache.close();
  }
  // Closed before its first arming finished.
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  new RedisTier({ cache, redis: client, namespace: 'app' }).close();
  cache.close();
  await sleep(500);
  assert.equal(await tracking(), 0);
});

test('a refresh and a plain fetch do not share a flight: forceRefresh and allowStale:false never answer with the stale value or undefined', { skip, timeout: 60_000 }, async (t) => {
  const { client } = await serverAndClient(t);
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  t.after(() => cache.close());
  const tier = tierOn(t, cache, client, { staleWhileRevalidate: 60_000, loadTimeoutMs: 1500 });
  await leased(tier);
  for (const options of [{ forceRefresh: true }, { allowStale: false }]) {
    for (let trial = 0; trial < 5; trial++) {
      const key = `${Object.keys(options)[0]}${trial}`;
      await tier.set(key, 'stale', { ttl: 50 });
      await sleep(80);
      // Another machine holds the key's load lock: the refresh leaves the load to it.
      await client.set(`app\u0001lock:${key}`, 'another machine', 'PX', 400);
      const refreshing = tier.fetch(key, async () => 'loaded');
      await sleep(1);
      const answer = await tier.fetch(key, async () => 'loaded', options);
      assert.equal(await refreshing, 'stale');
      assert.equal(answer, 'loaded', `${JSON.stringify(options)}, trial ${trial}`);
    }
  }
});

test('a tracking connection that goes silent is replaced: its unanswered ping counts as a lost connection', { skip, timeout: 30_000 }, async (t) => {
  const { client } = await serverAndClient(t);
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  t.after(() => cache.close());
  const tier = tierOn(t, cache, client, { deadlineMs: 200 });
  await leased(tier);
  const generation = tier.stats().holder.generation;
  // Redis stops answering every client for a second, without closing anything.
  const pauser = client.duplicate();
  await pauser.connect();
  await pauser.call('CLIENT', 'PAUSE', '1000', 'ALL');
  pauser.disconnect();
  await until(() => tier.stats().holder.trackerLosses > 0, 'the silent tracker counted as lost', 3000);
  await until(() => tier.stats().holder.leaseRemainingMs > 0 && tier.stats().holder.generation > generation, 'a new arming after the pause', 5000);
});

test('values too large for the cache are served from Redis without a copy; bytes that are not msgpack are ERR_REDIS_VALUE; deletes count what DEL deleted', { skip, timeout: 30_000 }, async (t) => {
  const { client } = await serverAndClient(t);
  const cache = new SharedCache({ memoryBytes: 2 ** 20 });
  t.after(() => cache.close());
  const tier = tierOn(t, cache, client);
  await leased(tier);
  const huge = 'h'.repeat(2 * 2 ** 20);
  await client.set('app:huge', pack(huge));
  assert.equal(await tier.get('huge'), huge);
  assert.equal(await tier.fetch('huge2', () => huge), huge);
  assert.equal(await tier.get('huge2'), huge);
  await client.set('app:text', 'plain text');
  await assert.rejects(tier.get('text'), { name: 'ArenaCacheError', code: 'ERR_REDIS_VALUE', message: /^the value of "text" in Redis is not msgpack \(10 bytes\)/ });
  await client.set('app:c1', Buffer.from([0xc1]));
  await assert.rejects(tier.get('c1'), { code: 'ERR_REDIS_VALUE', message: 'the value of "c1" in Redis is not msgpack (it holds the unused type 0xC1)' });
  const before = tier.stats().redis.deletes;
  await tier.delete('absent');
  await tier.delete('huge');
  assert.equal(tier.stats().redis.deletes - before, 1);
});

test('on a Redis Cluster, clear() deletes the namespace across slots', { skip, timeout: 60_000 }, async (t) => {
  const cluster = await startRedisCluster();
  t.after(() => cluster.kill());
  const client = new Redis.Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })), { enableOfflineQueue: true });
  client.on('error', () => {});
  t.after(() => client.disconnect());
  await new Promise((resolve) => client.once('ready', resolve));
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  t.after(() => cache.close());
  const tier = tierOn(t, cache, client);
  for (let i = 0; i < 50; i++) await client.set(`app:k${i}`, pack(i));
  await client.set('other:k', pack('kept'));
  await tier.clear();
  for (let i = 0; i < 50; i++) assert.equal(await client.exists(`app:k${i}`), 0);
  assert.equal(await client.exists('other:k'), 1);
  assert.equal(tier.stats().redis.deletes, 50);
});

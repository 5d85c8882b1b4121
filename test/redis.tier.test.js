// The RedisTier so far (issue 40, in progress): two "hosts" (processes, each
// with a cache file of its own) on one real redis-server. A value set on one
// host is read on the other, then served from that host's shared cache;
// a write by any Redis client (not through the tier) reaches both hosts'
// caches; a delete too.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import test from 'node:test';
import { Redis } from 'ioredis';
import { pack } from 'msgpackr';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { connectClient, freePort, redisMissing, startRedis } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

const skip = redisMissing() ?? (!nativeAvailable && 'native addon unavailable');
const hostFile = new URL('./fixtures/redis-tier-host.js', import.meta.url);

/** A host process on the redis-server on `port`, once it is ready: { child }. */
async function startHostProcess(t, port) {
  const child = fork(hostFile, [JSON.stringify({ path: arenaPath(t), port })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit');
  t.after(() => child.kill('SIGKILL'));
  const [first] = await Promise.race([once(child, 'message'), exited.then(([code]) => [`exited with ${code}`])]);
  assert.equal(first, 'started');
  return { child };
}

/** A host, as a function that asks it to do `op` and resolves with its reply (several may be in flight). */
async function startHost(t, port) {
  const { child } = await startHostProcess(t, port);
  const pending = new Map();
  let next = 0;
  child.on('message', (reply) => {
    const settle = pending.get(reply.id);
    pending.delete(reply.id);
    settle?.(reply);
  });
  return async (op, key, value, options) => {
    const id = ++next;
    const answer = new Promise((resolve) => pending.set(id, resolve));
    child.send({ id, op, key, value, ...options });
    const reply = await answer;
    if (reply.error) throw new Error(reply.error);
    return reply;
  };
}


test('two hosts on one redis-server: reads cached in each host, invalidated by writes from the tier and from any other client', { skip, timeout: 60_000 }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const [a, b] = [await startHost(t, server.port), await startHost(t, server.port)];
  await a('set', 'user:1', { name: 'Ada' });
  assert.deepEqual((await b('get', 'user:1')).result, { name: 'Ada' });
  // Once B's holder has a lease, the next reads are B's own.
  await until(async () => {
    const before = (await b('get', 'user:1')).stats.local.hits;
    return (await b('get', 'user:1')).stats.local.hits > before;
  }, 'a read served from the shared cache');

  // A write by another Redis client reaches B's cache.
  const other = await connectClient(t, server.port);
  await other.set('app:user:1', pack({ name: 'Grace' }));
  await until(async () => (await b('get', 'user:1')).result?.name === 'Grace', 'the other client\'s write on B');
  assert.deepEqual((await a('get', 'user:1')).result, { name: 'Grace' });

  await a('delete', 'user:1');
  await until(async () => (await b('get', 'user:1')).result === null, 'the delete on B');
});

test('no older value after an invalidation: a read whose old reply arrives after the write\'s invalidation does not keep it', { skip, timeout: 60_000 }, async (t) => {
  const { SharedCache } = await import('../lib/index.js');
  const { RedisTier } = await import('../lib/redis/tier.js');
  const { entryKey, stateKeys } = await import('../lib/redis/holder.js');
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const client = await connectClient(t, server.port);
  // The tier's reads go through a pipeline whose reply is held until the test lets it go.
  let hold = null;
  const held = Object.create(client, {
    pipeline: {
      value: () => {
        const pipeline = client.pipeline();
        const exec = pipeline.exec.bind(pipeline);
        pipeline.exec = async () => {
          const reply = await exec();
          if (hold !== null) await hold;
          return reply;
        };
        return pipeline;
      },
    },
  });
  const tier = new RedisTier({ cache, redis: held, Redis, namespace: 'app' });
  t.after(() => tier.close());
  await until(() => (cache.get(stateKeys('app').genKey) ?? 0) >= 1, 'the holder armed');
  await client.set('app:k', pack('old'));
  let release;
  hold = new Promise((resolve) => (release = resolve));
  const reading = tier.get('k');
  // The read's GET has its reply ('old') in hand; now another client writes.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const entry = entryKey('app', cache.get(stateKeys('app').genKey), 'k');
  await client.set('app:k', pack('new'));
  await until(() => cache.get(entry) === undefined, 'the invalidation of the placeholder');
  release();
  assert.equal(await reading, 'old', 'the read returns what it read');
  assert.equal(cache.get(entry), undefined, 'but does not keep it: the write came after its version was noted');
  hold = null;
  assert.equal(await tier.get('k'), 'new');
});

test('on a cluster of 3 masters, writes to keys of every master reach the tier\'s cache', { skip, timeout: 60_000 }, async (t) => {
  const { SharedCache } = await import('../lib/index.js');
  const { RedisTier } = await import('../lib/redis/tier.js');
  const { Cluster } = await import('ioredis');
  const { startRedisCluster } = await import('./helpers/redis-server.js');
  const cluster = await startRedisCluster(3);
  t.after(() => cluster.kill());
  const nodes = cluster.ports.map((port) => ({ host: '127.0.0.1', port }));
  const client = new Cluster(nodes);
  client.on('error', () => {});
  t.after(() => client.disconnect());
  const other = new Cluster(nodes);
  other.on('error', () => {});
  t.after(() => other.disconnect());
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const tier = new RedisTier({ cache, redis: client, Redis, namespace: 'app' });
  t.after(() => tier.close());
  const keys = Array.from({ length: 20 }, (_, i) => `key${i}`);
  for (const key of keys) await tier.set(key, 1);
  await until(async () => {
    for (const key of keys) await tier.get(key);
    return tier.stats().local.hits > 0;
  }, 'reads served from the cache');
  for (const key of keys) await other.set(`app:${key}`, pack(2));
  await until(async () => {
    for (const key of keys) if ((await tier.get(key)) !== 2) return false;
    return true;
  }, 'every key\'s new value');
  const readingReplicas = new Cluster(nodes, { scaleReads: 'slave', lazyConnect: true });
  assert.throws(() => new RedisTier({ cache, redis: readingReplicas, Redis, namespace: 'x' }), {
    name: 'RangeError',
    message: /scaleReads must be 'master' \(got "slave"\)/,
  });
});

test('Redis down: cached values are served (stale-if-error), misses and writes fail fast with a code, and a restarted empty Redis brings back no old value', { skip, timeout: 60_000 }, async (t) => {
  const { SharedCache } = await import('../lib/index.js');
  const { RedisTier } = await import('../lib/redis/tier.js');
  const { stateKeys } = await import('../lib/redis/holder.js');
  const port = await freePort();
  let server = await startRedis(port);
  t.after(() => server.kill());
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const client = await connectClient(t, port, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => 50 });
  const tier = new RedisTier({ cache, redis: client, Redis, namespace: 'app', deadlineMs: 300 });
  t.after(() => tier.close());
  const { genKey } = stateKeys('app');
  await until(() => (cache.get(genKey) ?? 0) >= 1, 'the holder armed');
  await tier.set('k', 'cached');
  assert.equal(await tier.get('k'), 'cached');

  await server.kill();
  const started = Date.now();
  assert.equal(await tier.get('k'), 'cached', 'served from the cache while Redis is down');
  await assert.rejects(tier.get('never-cached'), (error) => ['ERR_REDIS_UNAVAILABLE', 'ERR_REDIS_TIMEOUT'].includes(error.code));
  await assert.rejects(tier.set('k', 'lost write'), (error) => ['ERR_REDIS_UNAVAILABLE', 'ERR_REDIS_TIMEOUT'].includes(error.code));
  assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms for three calls with Redis down (deadline 300 ms)`);
  assert.equal(await tier.get('k'), 'cached', 'a failed write is not applied locally');
  assert.ok(tier.stats().local.staleIfError > 0);
  const generation = cache.get(genKey);

  // Redis comes back empty (no persistence): the holder re-arms and bumps the generation, and the old value is gone.
  server = await startRedis(port);
  await until(() => cache.get(genKey) > generation, 'a new generation after Redis came back', 10_000);
  await until(async () => (await tier.get('k').catch(() => 'error')) === undefined, 'the old value gone', 10_000);
  assert.ok(tier.stats().redis.reconnects > 0);
});

test('fetch across hosts: 3 hosts missing one key at once run one loader; a loader whose host dies lets another load after its lock lapses', { skip, timeout: 60_000 }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const hosts = [await startHost(t, server.port), await startHost(t, server.port), await startHost(t, server.port)];
  const counter = await connectClient(t, server.port);

  const results = await Promise.all(hosts.map((host) => host('fetch', 'report', { rows: 42 }, { delayMs: 200 })));
  assert.deepEqual(results.map(({ result }) => result), [{ rows: 42 }, { rows: 42 }, { rows: 42 }]);
  assert.equal(Number(await counter.get('loads')), 1, 'one loader for the three hosts');
  assert.deepEqual((await hosts[1]('get', 'report')).result, { rows: 42 });

  // A loader that never finishes, on a host that is then killed: its lock lapses, and a waiting host loads.
  const dying = await startHostProcess(t, server.port);
  dying.child.send({ op: 'fetch', key: 'slow', value: 'never', hang: true, loadTimeoutMs: 800 });
  await until(async () => Number(await counter.get('loads')) === 2, 'the dying host\'s loader started');
  const waiting = hosts[0]('fetch', 'slow', 'loaded by a survivor', { loadTimeoutMs: 5000 });
  await new Promise((resolve) => setTimeout(resolve, 200));
  dying.child.kill('SIGKILL');
  const started = Date.now();
  assert.equal((await waiting).result, 'loaded by a survivor');
  assert.equal(Number(await counter.get('loads')), 3);
  t.diagnostic(`a waiting host loaded ${Date.now() - started} ms after the loader's host was killed (its lock: 800 ms)`);
});

test('clear() deletes the namespace in Redis and drops this machine\'s copies; other keys stay', { skip, timeout: 60_000 }, async (t) => {
  const { SharedCache } = await import('../lib/index.js');
  const { RedisTier } = await import('../lib/redis/tier.js');
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const client = await connectClient(t, server.port);
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const tier = new RedisTier({ cache, redis: client, Redis, namespace: 'app' });
  t.after(() => tier.close());
  for (let i = 0; i < 2500; i++) await client.set(`app:k${i}`, pack(i));
  await client.set('other:k1', 'kept');
  assert.equal(await tier.get('k1'), 1);
  await tier.clear();
  assert.equal(await client.dbsize(), 1);
  assert.equal(await client.get('other:k1'), 'kept');
  assert.equal(await tier.get('k1'), undefined);
});

test('a seeded race of reads and writes from 3 hosts: a read that starts a lease after a write returned never serves a value older than it', { skip, timeout: 120_000 }, async (t) => {
  const { seededRandom, testSeed } = await import('./helpers/seeded-random.js');
  const { TIER_DEFAULTS } = await import('../lib/redis/tier.js');
  const seed = testSeed();
  const random = seededRandom(seed);
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const hosts = [await startHost(t, server.port), await startHost(t, server.port), await startHost(t, server.port)];
  const keys = ['a', 'b', 'c'];
  const written = Object.fromEntries(keys.map((key) => [key, 0]));
  const chains = Object.fromEntries(keys.map((key) => [key, Promise.resolve()]));
  const writes = [];
  const reads = [];
  const OPS = 450;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: OPS }, async (_, i) => {
      // Spread over about 3 s, in a seeded order and mix.
      const at = random.int(3000);
      const host = random.int(hosts.length);
      const key = random.pick(keys);
      const isWrite = random() < 0.3;
      await new Promise((resolve) => setTimeout(resolve, at));
      if (!isWrite) {
        const start = Date.now();
        const reply = await hosts[host]('get', key);
        reads.push({ i, host, key, result: reply.result, start, end: Date.now() });
        return;
      }
      // Writes of one key one after another, so that its values grow in the order Redis takes them.
      const previous = chains[key];
      let done;
      chains[key] = new Promise((resolve) => (done = resolve));
      await previous;
      const value = ++written[key];
      const start = Date.now();
      await hosts[host]('set', key, value);
      writes.push({ i, host, key, value, start, end: Date.now() });
      done();
    }),
  );
  // A lease covers what Redis had acknowledged when its ping round began (see lib/redis/holder.js).
  const window = TIER_DEFAULTS.leaseMs + 50;
  const problems = [];
  for (const read of reads) {
    const known = writes.filter((write) => write.key === read.key && write.end < read.start - window);
    const newest = Math.max(0, ...known.map((write) => write.value));
    const got = read.result ?? 0;
    if (got < newest) problems.push(`host ${read.host} read ${read.key} = ${got} at ${read.start - started} ms, after ${newest} was written by ${known.find((w) => w.value === newest).end - started} ms`);
    if (got > written[read.key]) problems.push(`host ${read.host} read ${read.key} = ${got}, never written`);
  }
  assert.deepEqual(problems.slice(0, 5), [], `SEED=${seed}`);
  t.diagnostic(`${reads.length} reads, ${writes.length} writes over ${Date.now() - started} ms (SEED=${seed})`);
});

test('bad input and misconfiguration: clear errors, and a namespace already caching another Redis is refused', { skip, timeout: 30_000 }, async (t) => {
  const { SharedCache } = await import('../lib/index.js');
  const { RedisTier } = await import('../lib/redis/tier.js');
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const port = await freePort();
  const server = await startRedis(port);
  t.after(() => server.kill());
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true });
  client.on('error', () => {});
  t.after(() => client.disconnect());
  const notSupported = 'node-redis clients are not supported (see docs/redis-tier.md)';
  assert.throws(() => new RedisTier({ cache, redis: undefined, Redis, namespace: 'app' }), { name: 'TypeError', message: `options.redis must be an ioredis Redis or Cluster client (got undefined); ${notSupported}` });
  // A node-redis client has no getBuffer/pipeline of ioredis's shape.
  assert.throws(() => new RedisTier({ cache, redis: { options: {}, sendCommand() {}, get() {} }, namespace: 'app' }), { name: 'TypeError', message: `options.redis must be an ioredis Redis or Cluster client (got an instance of Object); ${notSupported}` });
  assert.throws(() => new RedisTier({ cache, redis: client, Redis: 'ioredis', namespace: 'app' }), { name: 'TypeError', message: 'options.Redis must be the ioredis Redis class (got "ioredis")' });
  assert.throws(() => new RedisTier({ cache: {}, redis: client, Redis, namespace: 'app' }), { name: 'TypeError', message: 'options.cache must be a SharedCache (got an instance of Object)' });
  assert.throws(() => new RedisTier({ cache, redis: client, Redis, namespace: '' }), { name: 'TypeError', message: 'options.namespace must be a non-empty string without NUL characters (got "")' });
  assert.throws(() => new RedisTier({ cache, redis: client, namespace: 'app', deadlineMS: 100 }), { name: 'TypeError', message: 'options.deadlineMS is not a known option; did you mean deadlineMs?' });
  assert.throws(() => new RedisTier({ cache, redis: client, namespace: 'app', deadlineMs: 0 }), { name: 'RangeError', message: 'options.deadlineMs must be an integer from 1 to 600000 milliseconds (got 0)' });
  assert.throws(() => new RedisTier({ cache, redis: client, namespace: 'app', staleIfError: 'yes' }), { name: 'TypeError', message: 'options.staleIfError must be a boolean (got "yes")' });
  assert.throws(() => new RedisTier({ cache, redis: client, namespace: 'app', ttl: -1 }), { name: 'RangeError', message: /^options\.ttl must be a number of milliseconds from 0 to/ });
  // Without options.Redis, a standalone client's own class makes the tracking connections.
  const tier = new RedisTier({ cache, redis: client, namespace: 'app' });
  t.after(() => tier.close());
  await assert.rejects(tier.get(7), { name: 'TypeError', message: 'key must be a string (got 7)' });
  await assert.rejects(tier.get('k', { allowstale: true }), { name: 'TypeError', message: 'options.allowstale is not a known option; did you mean allowStale?' });
  await assert.rejects(tier.getMany('k'), { name: 'TypeError', message: 'keys must be an array of strings (got "k")' });
  await assert.rejects(tier.getMany(['a', 1]), { name: 'TypeError', message: 'key must be a string (got 1)' });
  await assert.rejects(tier.fetch('k', 'not a loader'), { name: 'TypeError', message: 'loader must be a function (got "not a loader")' });
  await assert.rejects(tier.fetch('k', () => 1, { acrossHost: false }), { name: 'TypeError', message: 'options.acrossHost is not a known option; did you mean acrossHosts?' });
  await assert.rejects(tier.fetch('k', () => undefined), { name: 'TypeError', message: 'the loader of "k" returned undefined; return null for "no value", or throw' });
  await assert.rejects(tier.set('k', undefined), { name: 'TypeError', message: 'value must not be undefined (delete() removes a key)' });
  await assert.rejects(tier.set('k', 1, { ttl: 'soon' }), { name: 'TypeError', message: 'options.ttl must be a number of milliseconds (got "soon")' });
  const elsewhere = new Redis({ host: '127.0.0.1', port: await freePort(), lazyConnect: true });
  elsewhere.on('error', () => {});
  t.after(() => elsewhere.disconnect());
  assert.throws(() => new RedisTier({ cache, redis: elsewhere, Redis, namespace: 'app' }), { name: 'ArenaCacheError', code: 'ERR_REDIS_NAMESPACE', message: /namespace "app" of this cache already caches redis 127\.0\.0\.1:\d+ db 0; this client is redis 127\.0\.0\.1:\d+ db 0/ });
  // A server nobody listens on: a call fails within the deadline, with a code.
  const other = new RedisTier({ cache, redis: elsewhere, Redis, namespace: 'elsewhere', deadlineMs: 200 });
  t.after(() => other.close());
  const started = Date.now();
  await assert.rejects(other.get('k'), (error) => ['ERR_REDIS_UNAVAILABLE', 'ERR_REDIS_TIMEOUT'].includes(error.code));
  assert.ok(Date.now() - started < 1000);
  assert.equal(other.stats().redis.errors + other.stats().redis.timeouts, 1);
  // A closed tier, or a tier whose cache was closed, refuses calls with a code.
  other.close();
  await assert.rejects(other.get('k'), { name: 'ArenaCacheError', code: 'ERR_CACHE_CLOSED', message: 'the RedisTier is closed' });
  cache.close();
  await assert.rejects(tier.get('k'), { name: 'ArenaCacheError', code: 'ERR_CACHE_CLOSED', message: "the RedisTier's cache is closed" });
});

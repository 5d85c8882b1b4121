// Two tiers for many hosts (examples/redis-tier): arenacache in front of
// Redis through cache-manager, and an InvalidationBus on the same Redis
// keeping each host's first tier coherent. Two hosts are two child processes,
// each with its own cache file and stack, against a real redis-server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import Redis from 'ioredis';
import KeyvRedis from '@keyv/redis';
import { createCache } from 'cache-manager';
import { Keyv } from 'keyv';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable, nativeUnavailableReason } from '../lib/native/addon.js';
import { KeyvArenaCache } from '../lib/keyv/index.js';
import { SECRET, until } from './helpers/invalidation.js';
import { freePort, redisMissing, startRedis } from './helpers/redis-server.js';
import { startProxy, startTierHost } from './helpers/tier-hosts.js';
import { createTieredCache } from '../examples/redis-tier/tiered-cache.js';

const skip = redisMissing() ?? (nativeAvailable ? false : `the native addon is unavailable (cache files need it): ${nativeUnavailableReason}`);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NAMESPACE = 'app';
/** Generous: the machine may be loaded (2 cores, other suites). */
const DEADLINE_MS = 15_000;

/** A redis-server of this test on a free port, killed after it. */
async function redisFor(t) {
  const port = await freePort();
  const server = { current: await startRedis(port), port };
  t.after(() => server.current.kill());
  return server;
}

/** A raw client, to look at (and go around) what the stacks stored in Redis. */
function rawClient(t, url) {
  const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  t.after(() => client.disconnect());
  return client;
}

/** Hosts, each a process with its own cache file, stack and bus, all on one channel; one per Redis URL. */
async function startHosts(t, urls, hostOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'arenacache-tier-'));
  // A generous Redis deadline but where the test is about it: the machine may be loaded.
  const common = { secret: SECRET, namespace: NAMESPACE, channel: 'arenacache:tier-test', redisTimeoutMs: 10_000, ...hostOptions };
  const hosts = [];
  t.after(async () => {
    await Promise.all(hosts.map((host) => host.stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  for (const [i, url] of urls.entries()) {
    const redis = typeof url === 'string' ? { redisUrl: url } : url; // or { redisUrl, busRedisUrl }
    hosts.push(await startTierHost({ ...common, ...redis, path: join(dir, `host-${i}.arena`) }));
  }
  return hosts;
}

/** Hosts A and B. */
async function twoHosts(t, urlA, urlB = urlA, options) {
  const [a, b] = await startHosts(t, [urlA, urlB], options);
  return { a, b };
}

/** Stops the hosts; each must close its stack and exit by itself (nothing left open), with code 0. */
async function stopCleanly(...hosts) {
  const endings = await Promise.all(hosts.map((host) => host.stop()));
  assert.deepEqual(endings, hosts.map(() => ({ code: 0, signal: null, exitedByItself: true })), 'every host exits by itself once its stack is closed');
}

/** Where `host`'s log of applied invalidations ends now. */
async function mark(host) {
  return (await host.call('received')).length;
}

/** Waits until `host`'s bus has applied an invalidation of `key` (from another host) after `from`. */
async function delivered(host, key, from, what) {
  await until(async () => (await host.call('received', { from })).includes(`${NAMESPACE}:${key}`), what ?? `the invalidation of ${key}`, DEADLINE_MS);
}

/** Value of a host answer ({ value }). */
const value = (answer) => answer.value;

/** A Keyv-serialized first-tier entry, parsed (undefined stays undefined). */
const entry = (answer) => (answer.value === undefined ? undefined : JSON.parse(answer.value));

test('read-through: B finds A\'s entry in Redis, copies it into its first tier (unpublished) and then serves it from there', { skip, timeout: 60_000 }, async (t) => {
  const redis = await redisFor(t);
  const raw = rawClient(t, redis.current.url);
  const { a, b } = await twoHosts(t, redis.current.url);

  let from = await mark(b);
  await a.call('set', { key: 'k', value: { n: 1 } });
  await delivered(b, 'k', from, 'A\'s write to reach B (B had no copy: nothing to drop)');
  assert.deepEqual(entry(await a.call('peek', { key: 'k' })), { value: { n: 1 } }, 'A\'s first tier has it');
  assert.deepEqual(JSON.parse(await raw.get(`${NAMESPACE}::k`)), { value: { n: 1 } }, 'Redis has it');
  assert.equal(value(await b.call('peek', { key: 'k' })), undefined, 'B\'s first tier does not, yet');

  assert.deepEqual(value(await b.call('get', { key: 'k' })), { n: 1 }, 'B reads it through Redis');
  assert.deepEqual(entry(await b.call('peek', { key: 'k' })), { value: { n: 1 } }, 'and keeps it in its own cache file');

  // B's fill was not published: A keeps its copy. (B's later delete travels
  // behind anything B had published before it.)
  const fromA = await mark(a);
  await b.call('del', { key: 'sentinel' });
  await delivered(a, 'sentinel', fromA, 'B\'s delete of an unrelated key to reach A');
  assert.deepEqual(await a.call('received', { from: fromA }), [`${NAMESPACE}:sentinel`], 'A was not told to drop k because B filled it');
  assert.deepEqual(entry(await a.call('peek', { key: 'k' })), { value: { n: 1 } });

  // Served by B's first tier: gone from Redis (behind the stacks' back), B still answers.
  assert.equal(await raw.del(`${NAMESPACE}::k`), 1);
  assert.deepEqual(value(await b.call('get', { key: 'k' })), { n: 1 }, 'B\'s get is served by its first tier');
  assert.deepEqual(await b.call('wrap', { key: 'k', value: 'loaded' }), { value: { n: 1 }, loads: 0 }, 'so is wrap(), without loading');

  // cache-manager's own get() reads the tiers in order but copies nothing into the first.
  from = await mark(b);
  await a.call('set', { key: 'k2', value: 'two' });
  await delivered(b, 'k2', from);
  assert.equal(value(await b.call('readsGet', { key: 'k2' })), 'two');
  assert.equal(value(await b.call('peek', { key: 'k2' })), undefined, 'cache-manager get() does not fill the first tier');
  // wrap() does.
  assert.deepEqual(await b.call('wrap', { key: 'k2', value: 'loaded' }), { value: 'two', loads: 0 });
  assert.deepEqual(entry(await b.call('peek', { key: 'k2' })), { value: 'two' }, 'cache-manager wrap() fills it');

  await stopCleanly(a, b);
});

test('coherence: after A updates or deletes a key, B never answers its old first-tier copy once the bus delivered', { skip, timeout: 60_000 }, async (t) => {
  const redis = await redisFor(t);
  const { a, b } = await twoHosts(t, redis.current.url);

  let from = await mark(b);
  await a.call('set', { key: 'c', value: 'v1' });
  await delivered(b, 'c', from);
  assert.equal(value(await b.call('get', { key: 'c' })), 'v1');
  assert.deepEqual(entry(await b.call('peek', { key: 'c' })), { value: 'v1' }, 'B holds v1 in its first tier');

  // Update. Until the bus delivers, B may answer v1 from its first tier; from
  // the first v2 on, and after delivery, only v2.
  from = await mark(b);
  await a.call('set', { key: 'c', value: 'v2' });
  const answers = [];
  let arrived = false;
  await until(async () => {
    arrived ||= (await b.call('received', { from })).includes(`${NAMESPACE}:c`);
    const answer = value(await b.call('get', { key: 'c' }));
    answers.push(answer);
    return arrived && answer === 'v2';
  }, 'B to answer v2 after the bus delivered', DEADLINE_MS);
  const firstNew = answers.indexOf('v2');
  assert.ok(answers.every((answer, i) => (i < firstNew ? answer === 'v1' : answer === 'v2')), `B answered ${answers.join(', ')}`);
  for (let i = 0; i < 20; i++) assert.equal(value(await b.call('get', { key: 'c' })), 'v2');
  assert.deepEqual(entry(await b.call('peek', { key: 'c' })), { value: 'v2' }, 'B refilled its first tier with v2');

  // Delete.
  from = await mark(b);
  await a.call('del', { key: 'c' });
  await delivered(b, 'c', from);
  assert.equal(value(await b.call('peek', { key: 'c' })), undefined, 'the bus dropped B\'s copy');
  assert.equal(value(await b.call('get', { key: 'c' })), undefined, 'and Redis has none');
  assert.deepEqual(await b.call('wrap', { key: 'c', value: 'reloaded' }), { value: 'reloaded', loads: 1 }, 'wrap() loads it again');

  // And the other way round: B writes, A drops its copy.
  from = await mark(a);
  assert.equal(value(await a.call('get', { key: 'c' })), 'reloaded', 'A reads B\'s load through Redis');
  await b.call('set', { key: 'c', value: 'v3' });
  await delivered(a, 'c', from);
  assert.equal(value(await a.call('get', { key: 'c' })), 'v3');

  // Batches and clear() invalidate the same way.
  from = await mark(b);
  await a.call('mset', { list: [{ key: 'm1', value: 1 }, { key: 'm2', value: 2 }] });
  await delivered(b, 'm2', from);
  assert.deepEqual([value(await b.call('get', { key: 'm1' })), value(await b.call('get', { key: 'm2' }))], [1, 2]);
  from = await mark(b);
  await a.call('mdel', { keys: ['m1'] });
  await delivered(b, 'm1', from);
  assert.deepEqual([value(await b.call('get', { key: 'm1' })), value(await b.call('get', { key: 'm2' }))], [undefined, 2]);
  assert.deepEqual(entry(await b.call('peek', { key: 'm2' })), { value: 2 });
  from = await mark(b);
  await a.call('clear');
  await delivered(b, 'm2', from, 'A\'s clear() to reach B');
  assert.equal(value(await b.call('peek', { key: 'm2' })), undefined, 'B\'s copy is gone');
  assert.equal(value(await b.call('get', { key: 'm2' })), undefined, 'and so is Redis\'s');

  const stats = await Promise.all([a.call('status'), b.call('status')]);
  for (const { stats: counters } of stats) assert.equal(counters.invalidationsDropped, 0);
  await stopCleanly(a, b);
});

test('ttl: a ttl given to set() or to cache-manager\'s wrap() reaches Redis and the first tiers, and a copy keeps the entry\'s expiry', { skip, timeout: 60_000 }, async (t) => {
  const redis = await redisFor(t);
  const raw = rawClient(t, redis.current.url);
  const { a, b } = await twoHosts(t, redis.current.url, redis.current.url, { ttl: 60_000 });
  const TTL = 3000; // short, but long enough for the steps before B reads on a loaded machine
  const redisEntry = async (key) => JSON.parse(await raw.get(`${NAMESPACE}::${key}`));

  const from = await mark(b);
  const before = Date.now();
  await a.call('set', { key: 't', value: 'short', ttl: TTL });
  const after = Date.now();
  const pttl = await raw.pttl(`${NAMESPACE}::t`);
  assert.ok(pttl > 0 && pttl <= TTL, `Redis expires it in ${pttl} ms`);
  const { expires } = await redisEntry('t');
  assert.ok(expires >= before + TTL && expires <= after + TTL, 'Keyv\'s expiry in Redis is the set\'s time plus the ttl');
  const local = entry(await a.call('peek', { key: 't' })).expires;
  assert.ok(local >= before + TTL && local <= after + TTL, 'and so is the one in A\'s first tier');
  assert.equal(value(await a.call('ttl', { key: 't' })), local, 'cache-manager ttl() reads it');

  await delivered(b, 't', from);
  assert.equal(value(await b.call('get', { key: 't' })), 'short');
  // B's copy gets the entry's remaining ttl: Keyv adds it to its own clock
  // reading, so the expiry may move by the time the copy took, no more.
  const copied = entry(await b.call('peek', { key: 't' })).expires;
  assert.ok(copied >= expires && copied < expires + TTL / 2, `B's copy expires ${copied - expires} ms after the entry`);

  // cache-manager's wrap() passes its ttl to both Keyv stores, and the adapter to the arena.
  const beforeWrap = Date.now();
  assert.deepEqual(await b.call('wrap', { key: 'w', value: 'loaded', ttl: TTL }), { value: 'loaded', loads: 1 });
  const wrapPttl = await raw.pttl(`${NAMESPACE}::w`);
  assert.ok(wrapPttl > 0 && wrapPttl <= TTL, `Redis expires the load in ${wrapPttl} ms`);
  assert.ok(entry(await b.call('peek', { key: 'w' })).expires <= Date.now() + TTL && entry(await b.call('peek', { key: 'w' })).expires >= beforeWrap + TTL);

  // Gone everywhere: from Redis, and from both arenas themselves (has() on
  // the SharedCache, not Keyv's check of `expires`).
  await until(async () => (await raw.exists(`${NAMESPACE}::t`, `${NAMESPACE}::w`)) === 0, 'Redis to expire the entries', DEADLINE_MS);
  await until(
    async () => (await Promise.all([a.call('peek', { key: 't' }), b.call('peek', { key: 't' }), b.call('peek', { key: 'w' })])).every((answer) => value(answer) === undefined),
    'the first tiers to expire the entries',
    DEADLINE_MS,
  );
  assert.equal(value(await b.call('get', { key: 't' })), undefined);
  assert.equal(value(await b.call('get', { key: 'w' })), undefined);

  // No ttl given: the stack's default (cache-manager's ttl option) in both tiers.
  const beforeDefault = Date.now();
  await a.call('set', { key: 'default', value: 'v' });
  const defaultTtl = await raw.pttl(`${NAMESPACE}::default`);
  assert.ok(defaultTtl > TTL && defaultTtl <= 60_000, `Redis expires it in ${defaultTtl} ms`);
  assert.ok(value(await a.call('ttl', { key: 'default' })) >= beforeDefault + 60_000);

  await stopCleanly(a, b);
});

test('Redis stopped: first tiers keep serving hits, misses and wrap() do not wait, writes and clear() reject and are repaired; all resumes when Redis is back', { skip, timeout: 90_000 }, async (t) => {
  const redis = await redisFor(t);
  const { a, b } = await twoHosts(t, redis.current.url);

  const from = await mark(b);
  await a.call('set', { key: 'd', value: 'v1' });
  await delivered(b, 'd', from);
  assert.equal(value(await b.call('get', { key: 'd' })), 'v1');

  await redis.current.kill();
  await until(async () => !(await a.call('status')).redisReady && !(await b.call('status')).redisReady, 'both stacks to see Redis gone', DEADLINE_MS);

  // Reads: hits from the first tier; a miss is a miss at once (no offline queue).
  assert.equal(value(await b.call('get', { key: 'd' })), 'v1', 'B\'s first tier serves the hit');
  assert.deepEqual(await b.call('wrap', { key: 'd', value: 'x' }), { value: 'v1', loads: 0 });
  assert.equal(value(await b.call('get', { key: 'absent' })), undefined, 'a miss in both tiers resolves undefined');
  assert.deepEqual(await b.call('wrap', { key: 'fresh', value: 'loaded' }), { value: 'loaded', loads: 1 }, 'wrap() loads and answers');
  assert.deepEqual(entry(await b.call('peek', { key: 'fresh' })), { value: 'loaded' }, 'and keeps the load in the first tier');

  // Writes: reject with Redis's error; the key is dropped from the first tier
  // (and, once the bus is back, from the others) and kept for deletion from Redis.
  await assert.rejects(a.call('set', { key: 'd', value: 'v2' }), /offline|closed|ECONNREFUSED|Socket/i);
  assert.equal(value(await a.call('peek', { key: 'd' })), undefined, 'A does not keep a value that Redis did not take');
  assert.equal((await a.call('status')).unsynced, 1);
  await assert.rejects(a.call('del', { key: 'fresh' }), /offline|closed|ECONNREFUSED|Socket/i);
  assert.equal((await a.call('status')).unsynced, 2, 'A will delete both from Redis');
  assert.equal(value(await b.call('get', { key: 'd' })), 'v1', 'B cannot hear of it while Redis is down');
  assert.deepEqual(await a.call('wrap', { key: 'mine', value: 'loaded' }), { value: 'loaded', loads: 1 });
  await assert.rejects(a.call('clear'), /Redis did not clear the namespace app/);
  assert.equal(value(await a.call('peek', { key: 'mine' })), undefined, 'clear() emptied A\'s first tier');
  assert.equal((await a.call('status')).unsynced, 'overflow', 'and will clear the namespace in Redis');

  redis.current = await startRedis(redis.port);
  // The buses come back and apply onReconnect 'clear'; A's stack deletes what it could not write.
  await until(async () => {
    const [sa, sb] = await Promise.all([a.call('status'), b.call('status')]);
    return sa.redisReady && sb.redisReady && sa.unsynced === 0 && sa.stats.redisReconnects >= 1 && sb.stats.redisReconnects >= 1;
  }, 'both stacks and buses to reconnect and A to repair', DEADLINE_MS);
  await until(async () => value(await b.call('peek', { key: 'd' })) === undefined, 'B to drop what may have missed invalidations', DEADLINE_MS);
  assert.equal(value(await b.call('get', { key: 'd' })), undefined, 'B does not serve v1 again');

  // Working again.
  const again = await mark(b);
  await a.call('set', { key: 'd', value: 'v3' });
  await delivered(b, 'd', again);
  assert.equal(value(await b.call('get', { key: 'd' })), 'v3');
  await stopCleanly(a, b);
});

test('races with the bus: a Redis answer older than an invalidation applied meanwhile is not kept in the first tier', { skip, timeout: 60_000 }, async (t) => {
  const redis = await redisFor(t);
  // B's second tier goes through a proxy that can hold Redis's replies; its bus does not.
  const proxy = await startProxy(redis.port);
  t.after(() => proxy.close());
  // (Replies are held for as long as the test takes: no Redis deadline in the way.)
  const { a, b } = await twoHosts(t, redis.current.url, { redisUrl: proxy.url, busRedisUrl: redis.current.url }, { redisTimeoutMs: 120_000 });
  const held = (what) => until(() => proxy.heldBytes > 0, what, DEADLINE_MS);

  // A fill: B's GET is answered v1 by Redis, A writes v2 and B's bus applies
  // its invalidation, then the v1 answer reaches B.
  let from = await mark(b);
  await a.call('set', { key: 'g', value: 'v1' });
  await delivered(b, 'g', from);
  proxy.hold();
  const read = b.call('get', { key: 'g' });
  await held('Redis to answer B\'s GET');
  from = await mark(b);
  await a.call('set', { key: 'g', value: 'v2' });
  await delivered(b, 'g', from, 'A\'s invalidation to reach B while B\'s GET answer is held');
  proxy.release();
  assert.equal(value(await read), 'v1', 'B answers what Redis had when it read');
  assert.equal(value(await b.call('peek', { key: 'g' })), undefined, 'but does not keep it');
  assert.equal(value(await b.call('get', { key: 'g' })), 'v2');

  // A write: B writes v3, Redis takes it (reply held), A writes v4 and B's
  // bus applies A's invalidation before B's write is done: B cannot tell
  // which write Redis kept last, so it keeps neither.
  proxy.hold();
  const write = b.call('set', { key: 'g', value: 'v3' });
  await held('Redis to answer B\'s SET');
  from = await mark(b);
  await a.call('set', { key: 'g', value: 'v4' });
  await delivered(b, 'g', from, 'A\'s invalidation to reach B while B\'s SET answer is held');
  const fromA = await mark(a);
  proxy.release();
  await write;
  assert.equal(value(await b.call('peek', { key: 'g' })), undefined, 'B does not keep v3');
  await delivered(a, 'g', fromA, 'B\'s invalidation (instead of its copy) to reach A');
  assert.equal(value(await a.call('peek', { key: 'g' })), undefined, 'nor does A keep v4');
  assert.equal(value(await b.call('get', { key: 'g' })), 'v4', 'both read what Redis kept');
  assert.equal(value(await a.call('get', { key: 'g' })), 'v4');
  await stopCleanly(a, b);
});

test('A cut off from Redis while Redis keeps its data: A\'s failed write is not undone by Redis\'s old value once A is back', { skip, timeout: 90_000 }, async (t) => {
  const redis = await redisFor(t);
  const raw = rawClient(t, redis.current.url);
  const proxy = await startProxy(redis.port);
  t.after(() => proxy.close());
  const { a, b } = await twoHosts(t, proxy.url, redis.current.url);

  const from = await mark(b);
  await a.call('set', { key: 'p', value: 'v1' });
  await delivered(b, 'p', from);
  assert.equal(value(await b.call('get', { key: 'p' })), 'v1');

  proxy.cut();
  await until(async () => !(await a.call('status')).redisReady, 'A to lose Redis', DEADLINE_MS);
  await assert.rejects(a.call('set', { key: 'p', value: 'v2' }));
  assert.equal((await a.call('status')).unsynced, 1);
  assert.deepEqual(JSON.parse(await raw.get(`${NAMESPACE}::p`)), { value: 'v1' }, 'Redis still holds v1');
  assert.equal(value(await b.call('get', { key: 'p' })), 'v1', 'and so does B (nothing can reach it)');

  const fromB = await mark(b);
  proxy.restore();
  // Back: A deletes p from Redis, then invalidates it again; its bus sends the backlog.
  await until(async () => (await a.call('status')).unsynced === 0, 'A to repair', DEADLINE_MS);
  assert.equal(await raw.exists(`${NAMESPACE}::p`), 0, 'A deleted the value its write could not replace');
  await delivered(b, 'p', fromB, 'A\'s invalidation of p to reach B');
  assert.equal(value(await b.call('get', { key: 'p' })), undefined, 'B reads neither its old copy nor Redis\'s');
  await stopCleanly(a, b);
});

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
(async () => {
  const { SharedCache } = await import(workerData.lib);
  const { createTieredCache } = await import(workerData.tiered);
  const cache = SharedCache.attach(workerData.handle);
  const tier = await createTieredCache({ ...workerData.options, cache, startBus: false });
  await tier.set('w', 'v2 from a worker');
  const read = await tier.get('r');
  await tier.close();
  cache.close();
  parentPort.postMessage({ read });
})();
`;

test('Redis stalled (connected, not answering): reads miss and writes reject after redisTimeoutMs, and the write is undone once Redis answers', { skip, timeout: 60_000 }, async (t) => {
  const redis = await redisFor(t);
  const raw = rawClient(t, redis.current.url);
  const proxy = await startProxy(redis.port);
  t.after(() => proxy.close());
  const [a] = await startHosts(t, [{ redisUrl: proxy.url, busRedisUrl: redis.current.url }], { redisTimeoutMs: 1000 });

  await a.call('set', { key: 's', value: 'v1' });
  assert.equal(value(await a.call('get', { key: 's' })), 'v1');
  proxy.hold(); // requests reach Redis, answers do not come back
  assert.equal(value(await a.call('get', { key: 's' })), 'v1', 'a first-tier hit does not need Redis');
  assert.equal(value(await a.call('get', { key: 'other' })), undefined, 'a miss gives up on Redis');
  await assert.rejects(a.call('set', { key: 's', value: 'v2' }), /Redis did not answer SET within 1000 ms/);
  assert.equal(value(await a.call('peek', { key: 's' })), undefined, 'A keeps no copy of a write Redis may not have taken');
  assert.deepEqual(JSON.parse(await raw.get(`${NAMESPACE}::s`)), { value: 'v2' }, 'this one it did take');
  assert.equal((await a.call('status')).unsynced, 1);

  proxy.release();
  await until(async () => (await a.call('status')).unsynced === 0, 'A to delete the key it could not confirm', DEADLINE_MS);
  assert.equal(await raw.exists(`${NAMESPACE}::s`), 0);
  assert.equal(value(await a.call('get', { key: 's' })), undefined);
  await stopCleanly(a);
});

test('worker threads: a stack in a worker (startBus: false, cache attached by handle) is published by its process\'s bus', { skip, timeout: 60_000 }, async (t) => {
  const redis = await redisFor(t);
  const options = { secret: SECRET, namespace: NAMESPACE, channel: 'arenacache:tier-test', redisUrl: redis.current.url };
  // Host A: this process, its bus in this thread. Host B: a child process.
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const tier = await createTieredCache({ ...options, cache });
  t.after(async () => {
    await tier.close();
    cache.close();
  });
  const receivedHere = [];
  tier.bus.on('received', ({ invalidations }) => receivedHere.push(...invalidations.map(({ key }) => key)));
  const [b] = await startHosts(t, [redis.current.url]);

  let from = await mark(b);
  await tier.set('w', 'v1');
  await delivered(b, 'w', from);
  assert.equal(value(await b.call('get', { key: 'w' })), 'v1');
  await b.call('set', { key: 'r', value: 'from B' });
  await until(() => receivedHere.includes(`${NAMESPACE}:r`), 'B\'s write to reach A', DEADLINE_MS);

  from = await mark(b);
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      lib: new URL('../lib/index.js', import.meta.url).href,
      tiered: new URL('../examples/redis-tier/tiered-cache.js', import.meta.url).href,
      handle: cache.handle,
      options,
    },
  });
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  const [{ read }] = await once(worker, 'message'); // rejects on the worker's 'error'
  assert.equal(await exited, 0, 'the worker exits by itself once its stack is closed');
  assert.equal(read, 'from B', 'the worker reads through Redis');
  assert.equal(cache.get(`${NAMESPACE}:r`), '{"value":"from B"}', 'into the arena it shares with this thread');

  await delivered(b, 'w', from, 'the worker\'s write, published by this thread\'s bus, to reach B');
  assert.equal(value(await b.call('get', { key: 'w' })), 'v2 from a worker');
  await stopCleanly(b);
});

test('for comparison: cache-manager over @keyv/redis with its defaults waits for Redis to come back (the offline queue)', { skip, timeout: 60_000 }, async (t) => {
  const redis = await redisFor(t);
  const cache = new SharedCache({ memoryBytes: 4 * 2 ** 20 });
  t.after(() => cache.close());
  const store = new KeyvRedis(redis.current.url);
  const errors = [];
  const first = new Keyv({ store: new KeyvArenaCache(cache), namespace: NAMESPACE });
  const second = new Keyv({ store, namespace: NAMESPACE, useKeyPrefix: false });
  second.on('error', (error) => errors.push(error));
  const manager = createCache({ stores: [first, second] });
  t.after(() => store.disconnect(true));

  await manager.set('hit', 'v1');
  await redis.current.kill();
  await until(() => !store.client.isReady, 'the client to see Redis gone', DEADLINE_MS);

  assert.equal(await manager.get('hit'), 'v1', 'a first-tier hit does not touch Redis');
  const settled = new Set();
  const write = manager.set('queued', 'v2').finally(() => settled.add('write'));
  const miss = manager.get('absent').finally(() => settled.add('miss'));
  await setImmediate();
  assert.equal(cache.get(`${NAMESPACE}:queued`), '{"value":"v2"}', 'the first tier took the write at once');
  assert.equal(await manager.get('hit'), 'v1');
  assert.deepEqual([...settled], [], 'the write and the first-tier miss wait in the offline queue for Redis');

  redis.current = await startRedis(redis.port);
  assert.equal(await write, 'v2', 'the write completes when Redis is back');
  assert.equal(await miss, undefined, 'and so does the miss');
  const raw = rawClient(t, redis.current.url);
  assert.deepEqual(JSON.parse(await raw.get(`${NAMESPACE}::queued`)), { value: 'v2' });
  assert.ok(errors.length > 0, 'the outage was reported on the Keyv\'s error event');
});

test('examples/redis-tier runs against this redis-server and shows a read-through and an invalidation', { skip, timeout: 60_000 }, async (t) => {
  const redis = await redisFor(t);
  const child = spawn(process.execPath, ['examples/redis-tier/index.js'], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: redis.current.url },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(code, 0, `the example failed:\n${stdout}\n${stderr}`);
  assert.match(stdout, /host B read user:42 through Redis: \{"name":"Ada","plan":"free"\}/);
  assert.match(stdout, /host B's first tier now holds it: true/);
  assert.match(stdout, /host B's bus dropped its first-tier copy [\d.]+ ms later: true/);
  assert.match(stdout, /host B now reads \{"name":"Ada","plan":"pro"\}/);
  assert.match(stdout, /host A deleted user:42: host B reads undefined/);
});

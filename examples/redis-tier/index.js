// arenacache/redis: one machine's cache in front of Redis, invalidated by
// Redis itself. This process and its worker threads share one cache file;
// they read through the tier, and a write made by another Redis client (as
// another service or redis-cli would) drops the machine's copy.
//
//   REDIS_URL=redis://127.0.0.1:6379 node examples/redis-tier/index.js
//
// Every process of the machine that opens the same file shares the copies
// (one tracking connection for all of them): run it twice at once to see.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { pack } from 'msgpackr'; // values travel through Redis as msgpack
import { SharedCache } from 'arenacache';
import { RedisTier } from 'arenacache/redis';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const WORKERS = 2;

/** A tier over `cache`, with a client of its own (each thread has one). */
async function openTier(cache) {
  const redis = new Redis(redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', () => {}); // failures reach the calls, with a code
  await redis.connect();
  const tier = new RedisTier({ cache, redis, namespace: 'example', ttl: 60_000 });
  return { redis, tier };
}

/** What a request handler does: the user, from this machine, Redis, or the database (once for the whole deployment). */
async function loadUser(tier, id) {
  return tier.fetch(`user:${id}`, async () => {
    await new Promise((resolve) => setTimeout(resolve, 20)); // the database
    return { id, name: 'Ada', plan: 'free', loadedBy: isMainThread ? 'main thread' : `worker ${workerData.index}` };
  });
}

if (!isMainThread) {
  const cache = SharedCache.attach(workerData.handle);
  const { redis, tier } = await openTier(cache);
  parentPort.on('message', async (message) => {
    if (message === 'stop') {
      tier.close();
      redis.disconnect();
      cache.close();
      parentPort.close();
      return;
    }
    const user = await loadUser(tier, 42);
    parentPort.postMessage({ user, stats: tier.stats() });
  });
  parentPort.postMessage('ready');
} else {
  const dir = mkdtempSync(path.join(tmpdir(), 'arenacache-redis-tier-'));
  const cache = SharedCache.open(path.join(dir, 'machine.arena'), { memoryBytes: 32 * 2 ** 20 });
  let opened;
  try {
    opened = await openTier(cache);
  } catch (error) {
    console.error(`could not reach Redis at ${redisUrl} (set REDIS_URL): ${error.message}`);
    cache.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(1);
  }
  const { redis, tier } = opened;
  const workers = [];
  let failed = false;
  try {
    await redis.del('example:user:42');
    for (let index = 0; index < WORKERS; index++) {
      const worker = new Worker(new URL(import.meta.url), { workerData: { handle: cache.handle, index } });
      await new Promise((resolve) => worker.once('message', resolve));
      workers.push(worker);
    }
    const ask = (worker) => new Promise((resolve) => worker.once('message', resolve));

    // Cold: every thread asks at once, the loader runs once.
    const first = await Promise.all([loadUser(tier, 42), ...workers.map((worker) => (worker.postMessage('get'), ask(worker)))]);
    const loads = tier.stats().loads + first.slice(1).reduce((sum, { stats }) => sum + stats.loads, 0);
    console.log(`${1 + WORKERS} threads asked for user:42 at once: loaded ${loads} time(s), by the ${first[0].loadedBy}`);

    // Warm: once the machine's tracking holds a lease, reads are local (no round trip).
    while (tier.stats().holder.leaseRemainingMs === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await loadUser(tier, 42);
    const before = tier.stats();
    for (let i = 0; i < 1000; i++) await loadUser(tier, 42);
    const after = tier.stats();
    console.log(`1000 more reads: ${after.local.hits - before.local.hits} from this machine's shared cache, ${after.redis.reads - before.redis.reads} from Redis`);

    // Another Redis client changes the user: Redis tells the machine, whose copy goes.
    const other = new Redis(redisUrl);
    await other.set('example:user:42', pack({ id: 42, name: 'Ada', plan: 'pro', loadedBy: 'another client' }));
    other.disconnect();
    const started = Date.now();
    let seen = await loadUser(tier, 42);
    // (Yielding to the event loop, as a server between requests does: this thread applies Redis's messages.)
    while (seen.plan !== 'pro' && Date.now() - started < 5000) {
      await new Promise((resolve) => setImmediate(resolve));
      seen = await loadUser(tier, 42);
    }
    const [fromWorker] = await Promise.all(workers.slice(0, 1).map((worker) => (worker.postMessage('get'), ask(worker))));
    console.log(`another client set plan "pro": this thread reads "${seen.plan}" after ${Date.now() - started} ms, worker 0 reads "${fromWorker.user.plan}"`);
    if (first.some((user) => (user.user ?? user).plan !== 'free') || loads !== 1 || seen.plan !== 'pro' || fromWorker.user.plan !== 'pro') {
      throw new Error('the example did not see what it expected');
    }
    const { holder } = tier.stats();
    console.log(`tracking: ${holder.holding ? 'this thread' : 'another thread'} holds the machine's connection; ${after.local.hits} local hits in this thread`);
  } catch (error) {
    console.error(error);
    failed = true;
  } finally {
    for (const worker of workers) worker.postMessage('stop');
    await Promise.all(workers.map((worker) => new Promise((resolve) => worker.once('exit', resolve))));
    tier.close();
    redis.disconnect();
    cache.close();
    rmSync(dir, { recursive: true, force: true });
  }
  process.exitCode = failed ? 1 : 0;
}

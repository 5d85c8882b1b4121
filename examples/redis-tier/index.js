// arenacache in front of Redis, for many hosts: a read-through and an
// invalidation, with two "hosts" (two caches, two buses) in one process.
//
//   REDIS_URL=redis://127.0.0.1:6379 node examples/redis-tier/index.js
//
// Each host: a SharedCache as the first tier, Redis as the second (shared),
// and an InvalidationBus on Redis that drops a host's first-tier copy when
// another host writes the key. See tiered-cache.js for the setup.
import { once } from 'node:events';
import { SharedCache } from 'arenacache';
import { createTieredCache } from './tiered-cache.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const secret = process.env.CACHE_SECRET ?? 'the arenacache redis-tier example secret';
const namespace = 'arenacache-example';
const key = 'user:42';
const arenaKey = `${namespace}:${key}`; // how the first tier stores it

/** Resolves once `host`'s bus has applied an invalidation of `arenaKey` from another host. */
function invalidationOf(host) {
  const signal = AbortSignal.timeout(10_000);
  return (async () => {
    for (;;) {
      const [{ invalidations }] = await once(host.bus, 'received', { signal });
      if (invalidations.some((invalidation) => invalidation.key === arenaKey || invalidation.op === 'clear')) return;
    }
  })();
}

async function host(name) {
  const cache = new SharedCache({ memoryBytes: 16 * 2 ** 20 });
  const tier = await createTieredCache({
    cache,
    secret,
    redisUrl,
    namespace,
    channel: 'arenacache:example',
    ttl: 60_000,
    onError: (error) => console.error(`[${name}] ${error?.message ?? error}`),
  });
  return { name, cache, tier, bus: tier.bus };
}

let a;
let b;
try {
  a = await host('host A');
  b = await host('host B');
} catch (error) {
  console.error(`could not set the stack up against ${redisUrl} (set REDIS_URL): ${error.message}`);
  for (const started of [a, b]) await started?.tier.close();
  process.exit(1);
}
let failed = false;
try {
  // Read-through: A writes both tiers; B finds the entry in Redis and keeps a copy.
  let delivered = invalidationOf(b); // A's write tells B to drop any copy: let it arrive first
  await a.tier.set(key, { name: 'Ada', plan: 'free' });
  await delivered;
  console.log(`${a.name} set ${key} in its first tier and in Redis`);
  const read = await b.tier.get(key);
  console.log(`${b.name} read ${key} through Redis: ${JSON.stringify(read)}`);
  console.log(`${b.name}'s first tier now holds it: ${b.cache.has(arenaKey)} (ttl copied: expires ${new Date(await b.tier.ttl(key)).toISOString()})`);

  // Invalidation: A updates the key; B's bus drops B's copy, B reads the new value.
  delivered = invalidationOf(b);
  const sent = performance.now();
  await a.tier.set(key, { name: 'Ada', plan: 'pro' });
  await delivered;
  console.log(`${a.name} updated ${key}; ${b.name}'s bus dropped its first-tier copy ${(performance.now() - sent).toFixed(1)} ms later: ${!b.cache.has(arenaKey)}`);
  const reread = await b.tier.get(key);
  console.log(`${b.name} now reads ${JSON.stringify(reread)}`);
  if (read?.plan !== 'free' || reread?.plan !== 'pro' || !b.cache.has(arenaKey)) throw new Error('the example did not see what it expected');

  delivered = invalidationOf(b);
  await a.tier.del(key);
  await delivered;
  console.log(`${a.name} deleted ${key}: ${b.name} reads ${await b.tier.get(key)}`);
} catch (error) {
  console.error(error);
  failed = true;
} finally {
  for (const { tier, cache } of [a, b]) {
    await tier.close();
    cache.close();
  }
}
process.exitCode = failed ? 1 : 0;

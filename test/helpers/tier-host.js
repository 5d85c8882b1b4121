// A host of the Redis-tier tests, run as a child process (fork): its own
// cache file (SharedCache.open) as the first tier, the shared Redis as the
// second, its own InvalidationBus on Redis; the stack of
// examples/redis-tier/tiered-cache.js. Driven by IPC messages:
//
//   { id, cmd: 'set', key, value, ttl }   { id, cmd: 'del', key }   { id, cmd: 'clear' }
//   { id, cmd: 'mset', list: [{ key, value, ttl }] }   { id, cmd: 'mdel', keys }
//   { id, cmd: 'get', key }        the tier's read-through get
//   { id, cmd: 'readsGet', key }   cache-manager's own get over the read tiers (no fill)
//   { id, cmd: 'wrap', key, value, ttl } wrap with a loader that returns value (result: { value, loads })
//   { id, cmd: 'ttl', key }        the entry's expiry time (cache-manager's ttl())
//   { id, cmd: 'peek', key }       the first tier's entry, read from the SharedCache itself
//   { id, cmd: 'received', from }  keys of the invalidations the bus applied, from index `from` on
//   { id, cmd: 'status' }          { redisReady, unsynced, busRunning, stats, errors }
//   { id, cmd: 'close' }           closes the stack and the cache, then lets the process exit by itself
//
// Answers: { id, result } with values wrapped as { value } (so undefined
// survives IPC), or { id, error: { name, message } }. On start: { ready: true }.
import { SharedCache } from '../../lib/index.js';
import { createTieredCache } from '../../examples/redis-tier/tiered-cache.js';

const options = JSON.parse(process.argv[2]);
const cache = SharedCache.open(options.path, { memoryBytes: 8 * 2 ** 20 });
const errors = [];
const received = [];
let tier;
try {
  tier = await createTieredCache({
    cache,
    secret: options.secret,
    redisUrl: options.redisUrl,
    busRedisUrl: options.busRedisUrl,
    namespace: options.namespace,
    channel: options.channel,
    ttl: options.ttl,
    redisTimeoutMs: options.redisTimeoutMs,
    onError: (error) => errors.push(String(error?.message ?? error)),
  });
} catch (error) {
  cache.close();
  process.send({ startError: error.message }, () => process.disconnect());
}
if (tier !== undefined) {
  tier.bus.on('received', ({ invalidations }) => {
    for (const { op, key } of invalidations) received.push(op === 'clear' ? '*clear*' : op === 'clearPrefix' ? `*clear ${key}*` : String(key));
  });
  tier.bus.on('reconnect', () => received.push('*reconnect*'));

  const wrapped = (value) => ({ value });
  let loads = 0;
  const commands = {
    set: async ({ key, value, ttl }) => wrapped(await tier.set(key, value, ttl)),
    del: async ({ key }) => wrapped(await tier.del(key)),
    clear: async () => wrapped(await tier.clear()),
    mset: async ({ list }) => wrapped(await tier.mset(list)),
    mdel: async ({ keys }) => wrapped(await tier.mdel(keys)),
    get: async ({ key }) => wrapped(await tier.get(key)),
    readsGet: async ({ key }) => wrapped(await tier.reads.get(key)),
    wrap: async ({ key, value, ttl }) => {
      const before = loads;
      const result = await tier.wrap(
        key,
        async () => {
          loads++;
          return value;
        },
        ttl,
      );
      return { value: result, loads: loads - before };
    },
    ttl: async ({ key }) => wrapped(await tier.ttl(key)),
    peek: ({ key }) => wrapped(cache.get(`${options.namespace}:${key}`)),
    received: ({ from = 0 }) => received.slice(from),
    status: () => {
      const stats = cache.stats();
      return {
        redisReady: tier.redisReady,
        unsynced: tier.unsynced === Infinity ? 'overflow' : tier.unsynced,
        busRunning: tier.bus.running,
        stats: { redisReconnects: stats.redisReconnects, redisKeysSent: stats.redisKeysSent, redisKeysReceived: stats.redisKeysReceived, invalidationsDropped: stats.invalidationsDropped },
        errors: errors.length,
      };
    },
    close: async () => {
      await tier.close();
      cache.close();
      // No process.exit(): the test checks that nothing is left to keep this process alive.
      setImmediate(() => process.disconnect());
      return null;
    },
  };

  process.on('message', async ({ id, cmd, ...args }) => {
    try {
      process.send({ id, result: (await commands[cmd](args)) ?? null });
    } catch (error) {
      process.send({ id, error: { name: error?.name, message: String(error?.message ?? error) } });
    }
  });
  process.send({ ready: true });
}

// The tracking holder of npm run bench:redis, in a process of its own (as on
// a machine with several worker processes: whichever holds the role, the
// others read the lease it keeps in the shared file). argv[2] is JSON
// { path, port, namespace }. It sends 'ready' once it holds the role and
// the lease is current, and stops on 'stop'.
import { Redis } from 'ioredis';
import { SharedCache } from '../../lib/index.js';
import { RedisTier } from '../../lib/redis/tier.js';

const { path, port, namespace } = JSON.parse(process.argv[2]);
const cache = SharedCache.open(path, { memoryBytes: 16 * 2 ** 20 });
const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableOfflineQueue: false });
redis.on('error', () => {});
await redis.connect();
const tier = new RedisTier({ cache, redis, Redis, namespace });
const deadline = Date.now() + 10_000;
while (tier.stats().holder.leaseRemainingMs === 0) {
  if (Date.now() > deadline) throw new Error('the holder process held no lease within 10 s');
  await new Promise((resolve) => setTimeout(resolve, 10));
}
process.send('ready');
process.on('message', (message) => {
  if (message !== 'stop') return;
  tier.close();
  redis.disconnect();
  cache.close();
  process.disconnect();
});

// One host of npm run demo:redis, in a process of its own (a machine of the
// deployment): `workers` worker threads (demo/redis/worker.js) serving the
// request stream. With the first tier, the host has an arena file of its own
// and its main thread keeps a RedisTier too, so that it is the one holding
// the tracking role (its event loop is idle; the workers' are busy); the
// workers attach to the same cache and read through tiers of their own.
// argv[2] is JSON { mode, port, path, host, namespace, workers, requests,
// keys, alpha, seed, loadMs, concurrency, memoryBytes }.
// IPC: sends 'ready' once every worker is, takes 'go', sends { host,
// results } when the workers are done, takes 'stop' and exits.

import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { Redis } from 'ioredis';
import { SharedCache } from '../../lib/index.js';
import { RedisTier } from '../../lib/redis/tier.js';

const options = JSON.parse(process.argv[2]);
const { mode, port, path, host, namespace, workers, memoryBytes } = options;

let cache = null;
let redis = null;
let tier = null;
if (mode === 'tier') {
  cache = SharedCache.open(path, { memoryBytes });
  redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  redis.on('error', () => {});
  await redis.connect();
  tier = new RedisTier({ cache, redis, Redis, namespace });
  // Serve nothing before the holder's lease is there (100-300 ms after it starts).
  const deadline = Date.now() + 10_000;
  while (tier.stats().holder.leaseRemainingMs === 0) {
    if (Date.now() > deadline) throw new Error(`host ${host}: no tracking lease within 10 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const threads = [];
const exits = [];
for (let w = 0; w < workers; w++) {
  const worker = new Worker(new URL('./worker.js', import.meta.url), {
    workerData: { ...options, handle: cache?.handle ?? null, seed: options.seed + host * 1000 + w },
  });
  worker.on('error', (error) => {
    console.error(`host ${host}, worker ${w}: ${error.stack ?? error}`);
    process.exit(1);
  });
  threads.push(worker);
  exits.push(once(worker, 'exit'));
}
await Promise.all(threads.map((worker) => once(worker, 'message')));
const reports = threads.map((worker) => once(worker, 'message'));
process.send('ready');

process.on('message', async (message) => {
  if (message === 'go') {
    for (const worker of threads) worker.postMessage('go');
    const results = (await Promise.all(reports)).map(([result]) => ({ ...result, latencies: Array.from(result.latencies), localLatencies: Array.from(result.localLatencies), otherLatencies: Array.from(result.otherLatencies) }));
    await Promise.all(exits);
    process.send({ host, results });
  } else if (message === 'stop') {
    tier?.close();
    redis?.disconnect();
    cache?.close();
    process.disconnect();
  }
});

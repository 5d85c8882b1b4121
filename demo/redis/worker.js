// A worker thread of a demo host (demo/redis/host.js): serves its share of
// the request stream, `concurrency` requests at a time, each request
// arriving as an event-loop turn of its own (as from a socket), for
// Zipf-popular keys. A request is a read through one of the two ways:
//   tier    tier.fetch(key, loader): the machine's SharedCache under the
//           holder's lease, else Redis, else the loader (one per key in the
//           deployment);
//   plain   today's way: GET from Redis (msgpack), on a miss the loader and
//           a SET.
// The loader stands for the backend (a database query): it waits loadMs and
// counts its calls.
// workerData: { mode, port, handle, namespace, requests, keys, alpha, seed,
// loadMs, concurrency }. Messages: 'go' in; { requests, loaderCalls,
// latencies (and split: localLatencies, otherLatencies), keys (the distinct
// keys it asked for), errors (failed requests by code), localHits,
// redisReads, lockWaits }
// out, then it closes and exits.

import { parentPort, workerData } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { pack, unpack } from 'msgpackr';
import { SharedCache } from '../../lib/index.js';
import { RedisTier } from '../../lib/redis/tier.js';
import { zipfKeys } from '../cache/zipf.js';

const { mode, port, handle, namespace, requests, keys, alpha, seed, loadMs, concurrency } = workerData;

const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
redis.on('error', () => {});
await redis.connect();
const cache = mode === 'tier' ? SharedCache.attach(handle) : null;
const tier = mode === 'tier' ? new RedisTier({ cache, redis, Redis, namespace }) : null;

let loaderCalls = 0;
async function loader(key) {
  loaderCalls++;
  await sleep(loadMs);
  const id = Number(key.slice(key.indexOf(':') + 1));
  return { id, name: `item ${id}`, tags: ['demo', id % 2 === 0 ? 'even' : 'odd'] };
}

let plainReads = 0;
async function plainFetch(key) {
  const redisKey = `${namespace}:${key}`;
  plainReads++;
  const bytes = await redis.getBuffer(redisKey);
  if (bytes !== null) return unpack(bytes);
  const value = await loader(key);
  await redis.set(redisKey, pack(value));
  return value;
}

const serve = mode === 'tier' ? (key) => tier.fetch(key, loader) : plainFetch;
const next = zipfKeys(keys, alpha, seed);
const stream = Array.from({ length: requests }, () => `item:${next()}`);
const latencies = new Float64Array(requests);
/** 1 for a request the host's SharedCache answered (tier only). */
const local = new Uint8Array(requests);
/** Failed requests by error code. */
const errors = {};

parentPort.once('message', async () => {
  let cursor = 0;
  const lane = async () => {
    while (cursor < requests) {
      const i = cursor++;
      // A request arrives: a turn of the event loop of its own.
      await new Promise(setImmediate);
      const started = performance.now();
      let value;
      try {
        const before = tier === null ? 0 : tier.stats().local.hits;
        const answer = serve(stream[i]);
        // A local hit is counted before fetch() returns its promise: this request's, not another lane's.
        if (tier !== null && tier.stats().local.hits > before) local[i] = 1;
        value = await answer;
      } catch (error) {
        // A failed request is an error answer, counted by its code; its time counts too.
        const code = error.code ?? error.name;
        errors[code] = (errors[code] ?? 0) + 1;
        value = null;
      }
      latencies[i] = performance.now() - started;
      if (value !== null && value?.name === undefined) throw new Error(`request ${i} (${stream[i]}) got ${JSON.stringify(value)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const stats = tier?.stats();
  const counts = tier === null ? { localHits: 0, redisReads: plainReads, lockWaits: 0 } : { localHits: stats.local.hits, redisReads: stats.redis.reads, lockWaits: stats.lockWaits };
  tier?.close();
  redis.disconnect();
  cache?.close();
  const localLatencies = latencies.filter((_, i) => local[i] === 1);
  const otherLatencies = latencies.filter((_, i) => local[i] === 0);
  parentPort.postMessage({ requests, loaderCalls, latencies, localLatencies, otherLatencies, keys: [...new Set(stream)], errors, ...counts }, [latencies.buffer]);
});
parentPort.postMessage('ready');

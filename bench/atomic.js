// npm run bench:atomic — what a shared counter costs: SharedCache.incr()
// against what a service would do instead, in the same run, over two key
// sets (one hot key, and string keys drawn from Zipf(0.99) over
// BENCH_KEYS in a seeded order):
//
//   1. one thread: incr() (default options, so with the near cache, which
//      an increment passes by), against a private lru-cache's get and set of
//      a number (what a counter costs when each thread keeps its own, which
//      counts one thread's hits only), a Map's get and set, and Redis INCR
//      through ioredis on a redis-server this script starts on loopback
//      (one await per increment, how a request handler calls it, and
//      pipelines of 100), in alternating rounds;
//   2. worker threads: aggregate incr() rate of 2 threads on one cache
//      against 1, and the final count checked against the increments made
//      (they must match exactly).
//
// Without redis-server (.ci/run installs it) or with BENCH_REDIS=0 the Redis
// rows are skipped, with the reason printed.
//
// Environment: BENCH_KEYS (100000), BENCH_ZIPF (0.99), BENCH_TIME_MS per task
// and round (300), BENCH_ROUNDS (5), BENCH_WORKERS (1,2), BENCH_WORKER_MS
// (1000), BENCH_REDIS=0, BENCH_JSON=path (or --json path).

import { writeFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { once } from 'node:events';
import { LRUCache } from 'lru-cache';
import { Redis } from 'ioredis';
import { SharedCache } from '../lib/index.js';
import { intList, jsonPath, positiveInt, positiveNumber } from './lib/env.js';
import { formatRate, printTable } from './lib/format.js';
import { roundRatios, SpreadTracker } from './lib/spread.js';
import { zipfOrder } from './lib/hot-workload.js';
import { REDIS_PIPELINE, startRedisPeer } from './lib/hot-redis.js';
import { describeMachine } from './lib/machine.js';

const config = {
  keys: positiveInt('BENCH_KEYS', 100_000),
  s: positiveNumber('BENCH_ZIPF', 0.99),
  timeMs: positiveInt('BENCH_TIME_MS', 300),
  rounds: positiveInt('BENCH_ROUNDS', 5),
  workerCounts: intList('BENCH_WORKERS', [1, 2]),
  workerMs: positiveInt('BENCH_WORKER_MS', 1000),
  seed: 12345,
};
const json = jsonPath();
/** The access sequence's length (a power of two: indexes wrap with a mask). */
const ACCESSES = 2 ** 20;

/** The key sets: the hot key alone, or Zipf-drawn keys. */
function workloads() {
  const names = Array.from({ length: config.keys }, (_, i) => `count:${i}`);
  const zipf = zipfOrder({ keys: config.keys, s: config.s, length: ACCESSES, seed: config.seed });
  return [
    { name: 'one hot key', keys: ['count:hot'], order: new Uint32Array(ACCESSES) },
    { name: `Zipf(${config.s}) over ${config.keys} keys`, keys: names, order: zipf },
  ];
}

/** Ops per second of `step(i)` run for timeMs (synchronous contenders). */
function rateOf(step) {
  const until = performance.now() + config.timeMs;
  let done = 0;
  while (performance.now() < until) {
    for (let k = 0; k < 1024; k++) step(done++);
  }
  return done / ((performance.now() - until + config.timeMs) / 1000);
}

/** Ops per second of `step(i)` (a promise per `batch` ops) run for timeMs. */
async function asyncRateOf(step, batch) {
  const started = performance.now();
  const until = started + config.timeMs;
  let done = 0;
  while (performance.now() < until) {
    await step(done);
    done += batch;
  }
  return done / ((performance.now() - started) / 1000);
}

async function singleThread(redisPort) {
  const results = [];
  for (const { name, keys, order } of workloads()) {
    const cache = new SharedCache({ memoryBytes: 64 * 2 ** 20 });
    const lru = new LRUCache({ max: keys.length });
    const map = new Map();
    const mask = ACCESSES - 1;
    const key = (i) => keys[order[i & mask]];
    const contenders = {
      arenacache: () => rateOf((i) => cache.incr(key(i))),
      'lru-cache get+set': () => rateOf((i) => {
        const k = key(i);
        lru.set(k, (lru.get(k) ?? 0) + 1);
      }),
      'Map get+set': () => rateOf((i) => {
        const k = key(i);
        map.set(k, (map.get(k) ?? 0) + 1);
      }),
    };
    let redis = null;
    if (redisPort !== null) {
      redis = new Redis({ host: '127.0.0.1', port: redisPort, lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
      redis.on('error', () => {});
      await redis.connect();
      await redis.flushall();
      contenders['Redis INCR'] = () => asyncRateOf((i) => redis.incr(key(i)), 1);
      contenders[`Redis INCR ×${REDIS_PIPELINE}`] = () =>
        asyncRateOf((i) => {
          const pipeline = redis.pipeline();
          for (let k = 0; k < REDIS_PIPELINE; k++) pipeline.incr(key(i + k));
          return pipeline.exec();
        }, REDIS_PIPELINE);
    }
    const names = Object.keys(contenders);
    const rates = Object.fromEntries(names.map((contender) => [contender, []]));
    try {
      for (let round = 0; round < config.rounds; round++) {
        // Alternating order: a contender is not always the one after the same other.
        const sequence = round % 2 === 0 ? names : [...names].reverse();
        for (const contender of sequence) rates[contender].push(await contenders[contender]());
      }
      // Every increment counted: the cache's total is what it was asked for.
      const made = cache.stats().increments;
      let total = 0;
      for (const k of new Set(keys)) total += cache.get(k) ?? 0;
      if (total !== made) throw new Error(`${name}: the counters add up to ${total}, but ${made} increments were made`);
    } finally {
      redis?.disconnect();
      cache.close();
    }
    results.push({ workload: name, rates });
  }
  return results;
}

/** Aggregate incr() ops/s of `threads` workers on one cache, and whether the count is exact. */
async function threaded(threads, workload) {
  const cache = new SharedCache({ memoryBytes: 64 * 2 ** 20 });
  const start = new Int32Array(new SharedArrayBuffer(4));
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.url).then(({ SharedCache }) => {
      const cache = SharedCache.attach(workerData.handle);
      const { keys, order, ms, start } = workerData;
      parentPort.postMessage('ready');
      Atomics.wait(start, 0, 0);
      const mask = order.length - 1;
      let done = 0;
      const until = performance.now() + ms;
      const began = performance.now();
      while (performance.now() < until) {
        for (let k = 0; k < 256; k++) cache.incr(keys[order[(done + k) & mask]]);
        done += 256;
      }
      const seconds = (performance.now() - began) / 1000;
      cache.close();
      parentPort.postMessage({ done, seconds });
    });`;
  const workers = [];
  for (let t = 0; t < threads; t++) {
    // Each thread starts at another place in the sequence.
    const order = workload.order.slice();
    order.copyWithin(0, (t * 7919) % order.length);
    const worker = new Worker(code, {
      eval: true,
      workerData: { url: new URL('../lib/index.js', import.meta.url).href, handle: cache.handle, keys: workload.keys, order, ms: config.workerMs, start },
    });
    workers.push({ worker, exited: once(worker, 'exit') });
  }
  await Promise.all(workers.map(({ worker }) => once(worker, 'message')));
  const reports = workers.map(({ worker }) => once(worker, 'message'));
  Atomics.store(start, 0, 1);
  Atomics.notify(start, 0);
  const results = (await Promise.all(reports)).map(([report]) => report);
  await Promise.all(workers.map(({ exited }) => exited));
  let total = 0;
  for (const k of new Set(workload.keys)) total += cache.get(k) ?? 0;
  const done = results.reduce((sum, { done }) => sum + done, 0);
  cache.close();
  return { rate: results.reduce((sum, { done, seconds }) => sum + done / seconds, 0), exact: total === done, done, total };
}

const machine = describeMachine();
console.log(`bench:atomic on ${machine.cpu} (${machine.cores} cores), Node ${machine.node}, load average ${machine.loadAverage.map((n) => n.toFixed(2)).join(' ')}`);
console.log(`${config.rounds} rounds of ${config.timeMs} ms per contender, alternating\n`);
const redisServer = await startRedisPeer();
if (redisServer.reason) console.log(`Redis rows skipped: ${redisServer.reason}\n`);
let single;
try {
  single = await singleThread(redisServer.port ?? null);
} finally {
  await redisServer.stop?.();
}
const spread = new SpreadTracker();
const rateRows = [];
const ratioRows = [];
for (const { workload, rates } of single) {
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  rateRows.push({ workload, ...Object.fromEntries(Object.entries(rates).map(([name, xs]) => [name, formatRate(median(xs))])) });
  const row = { workload };
  for (const peer of Object.keys(rates)) if (peer !== 'arenacache') row[`arenacache/${peer}`] = spread.ratio(roundRatios(rates.arenacache, rates[peer]));
  ratioRows.push(row);
}
console.log('Single thread, increments per second (median of the rounds)');
printTable(rateRows);
console.log('\nSingle thread, ratios (each round its own; median, range in brackets; above 1, arenacache is faster)');
printTable(ratioRows);
spread.report(config.rounds, 'more BENCH_ROUNDS and a longer BENCH_TIME_MS');

const threadRows = [];
const threadResults = [];
for (const workload of workloads()) {
  const base = {};
  for (const threads of config.workerCounts) {
    const result = await threaded(threads, workload);
    if (!result.exact) throw new Error(`${threads} threads, ${workload.name}: ${result.done} increments made, the counters add up to ${result.total}`);
    base.rate ??= result.rate;
    threadResults.push({ workload: workload.name, threads, rate: result.rate, increments: result.done });
    threadRows.push({ workload: workload.name, threads, 'incr/s': formatRate(result.rate), [`vs ${config.workerCounts[0]} thread(s)`]: (result.rate / base.rate).toFixed(2), 'count exact': 'yes' });
  }
}
console.log(`\nWorker threads on one cache (aggregate, ${config.workerMs} ms; ${machine.cores} cores)`);
printTable(threadRows);

if (json) writeFileSync(json, `${JSON.stringify({ machine, config, redis: redisServer.version ?? null, single, threads: threadResults }, null, 2)}\n`);

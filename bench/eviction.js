// npm run bench:eviction — the cost of the eviction path: a full cache read
// through (get, then set on a miss) on a seeded Zipf trace, so that most
// misses insert a new entry and evict another. bench:core and bench:hot keep
// every key cached; this is the path a policy's decisions run on (placing,
// ghosts, promotions, second chances).
//
// Each round replays the same requests into a fresh cache of every
// contender, in rotating order: SharedCache with each policy, bound by
// `max` (the adaptive hybrid) and, for hybrid, by memory alone; lru-cache
// with the same `max` as the peer. Reported: requests per second (median),
// each contender's hit ratio, and each SharedCache row's same-run ratio to
// lru-cache per round (median with range).
//
// Environment: BENCH_KEYS (100000), BENCH_REQUESTS (300000), BENCH_ZIPF
// (0.99), BENCH_CAPACITY (entries, 5000), BENCH_ROUNDS (5), BENCH_JSON=path
// (or --json path).

import { writeFileSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { SharedCache } from '../lib/index.js';
import { zipfTrace } from './hit-ratio/traces.js';
import { jsonPath, positiveInt, positiveNumber } from './lib/env.js';
import { formatRate, printTable } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { progressReporter } from './lib/progress.js';
import { roundRatios, SpreadTracker } from './lib/spread.js';

const config = {
  keys: positiveInt('BENCH_KEYS', 100_000),
  requests: positiveInt('BENCH_REQUESTS', 300_000),
  alpha: positiveNumber('BENCH_ZIPF', 0.99),
  capacity: positiveInt('BENCH_CAPACITY', 5000),
  rounds: positiveInt('BENCH_ROUNDS', 5),
};
const json = jsonPath();
const { progress, done: clearProgress } = progressReporter();

const trace = zipfTrace({ keys: config.keys, requests: config.requests, alpha: config.alpha, seed: 11 });
const names = Array.from({ length: config.keys }, (_, i) => `key:${i}`);
const value = Buffer.alloc(64, 7);
/** Room for `capacity` records of this size with a fifth to spare, so that memory binds for the memory-bound row. */
const memoryFor = (capacity) => Math.max(2 ** 20, Math.round(capacity * 140));

/** The contenders: name → a fresh cache. */
const contenders = {
  'hybrid, max': () => new SharedCache({ memoryBytes: 4 * memoryFor(config.capacity), max: config.capacity, nearCache: 0 }),
  'lru, max': () => new SharedCache({ memoryBytes: 4 * memoryFor(config.capacity), max: config.capacity, policy: 'lru', nearCache: 0 }),
  'lfu, max': () => new SharedCache({ memoryBytes: 4 * memoryFor(config.capacity), max: config.capacity, policy: 'lfu', nearCache: 0 }),
  'hybrid, memory': () => new SharedCache({ memoryBytes: memoryFor(config.capacity), nearCache: 0 }),
  'lru-cache, max': () => new LRUCache({ max: config.capacity }),
};
const PEER = 'lru-cache, max';

/** Replays the trace read-through into `cache`: { rate (requests/s), hitRatio }. */
function readThrough(cache) {
  let hits = 0;
  const started = performance.now();
  for (let i = 0; i < trace.length; i++) {
    const key = names[trace[i]];
    if (cache.get(key) !== undefined) hits++;
    else cache.set(key, value);
  }
  const rate = trace.length / ((performance.now() - started) / 1000);
  cache.close?.();
  return { rate, hitRatio: hits / trace.length };
}

const contenderNames = Object.keys(contenders);
const rates = Object.fromEntries(contenderNames.map((name) => [name, []]));
const hitRatios = {};
// A warm-up replay each, so that every round runs compiled code.
for (const name of contenderNames) readThrough(contenders[name]());
for (let round = 0; round < config.rounds; round++) {
  for (let k = 0; k < contenderNames.length; k++) {
    const name = contenderNames[(round + k) % contenderNames.length];
    progress(`round ${round + 1}/${config.rounds}: ${name}`);
    const { rate, hitRatio } = readThrough(contenders[name]());
    rates[name].push(rate);
    hitRatios[name] = hitRatio;
  }
}
clearProgress();

const machine = describeMachine();
const spread = new SpreadTracker();
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log(`arenacache eviction path — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date}`);
console.log(
  `read-through of ${config.requests} Zipf(${config.alpha}) requests over ${config.keys} keys into ${config.capacity} entries, 64 B values, ${config.rounds} rounds (median shown)\n`,
);
printTable(
  contenderNames.map((name) => ({
    contender: name,
    'requests/s': formatRate(median(rates[name])),
    'hit ratio': `${(hitRatios[name] * 100).toFixed(1)}%`,
    [`/${PEER}`]: name === PEER ? '-' : spread.ratio(roundRatios(rates[name], rates[PEER])),
  })),
);
console.log(`\nRatios are requests/s over ${PEER}'s in the same round (above 1, faster).`);
spread.report(config.rounds, 'more BENCH_ROUNDS and BENCH_REQUESTS');
if (json) {
  writeFileSync(json, `${JSON.stringify({ machine, config, rates, hitRatios }, null, 2)}\n`);
  console.log(`wrote ${json}`);
}

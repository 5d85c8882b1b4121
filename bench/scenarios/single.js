// One single-thread scenario in a process of its own (so its memory deltas
// are its own), in the shape of npm run bench: warm-up (fill every key and
// read it once), a timed set loop, a timed get loop; then a latency pass that times
// operations one by one (kept apart so that timer calls do not slow the
// throughput loops). Prints one JSON line.

import { makeKeys, makePayload } from '../lib/keys.js';
import { randomIndexes, summarizeLatency } from '../lib/latency.js';
import { createStore } from './stores.js';

const { store: kind, policy, payload, entries, setOps, getOps, latencyOps, seed } = JSON.parse(process.argv[2]);
const keys = makeKeys(entries);
const value = makePayload(payload);
const setOrder = randomIndexes(setOps, entries, seed);
const getOrder = randomIndexes(getOps, entries, seed + 1);
const latencyOrder = randomIndexes(latencyOps, entries, seed + 2);
const before = process.memoryUsage();

const store = createStore(kind, { entries, payload, policy });
let started = performance.now();
for (const key of keys) store.set(key, value);
// Read every key once too, so that the timed get loop runs compiled code.
for (const key of keys) store.get(key);
const warmMs = performance.now() - started;

started = performance.now();
for (let i = 0; i < setOps; i++) store.set(keys[setOrder[i]], value);
const setMs = performance.now() - started;

let hits = 0;
let misses = 0;
started = performance.now();
for (let i = 0; i < getOps; i++) {
  if (store.get(keys[getOrder[i]]) !== undefined) hits++;
  else misses++;
}
const getMs = performance.now() - started;

const setTimes = new Float64Array(latencyOps);
const getTimes = new Float64Array(latencyOps);
for (let i = 0; i < latencyOps; i++) {
  const key = keys[latencyOrder[i]];
  const t0 = performance.now();
  store.set(key, value);
  const t1 = performance.now();
  store.get(key);
  getTimes[i] = performance.now() - t1;
  setTimes[i] = t1 - t0;
}
const after = process.memoryUsage();
const stats = store.stats();
store.close();

console.log(
  JSON.stringify({
    store: kind,
    policy: kind === 'arenacache' ? policy : null,
    payload,
    warmMs,
    setMs,
    getMs,
    elapsedMs: setMs + getMs,
    counts: {
      set: setOps,
      get: getOps,
      hit: hits,
      miss: misses,
      expire: stats?.expirations ?? null,
      evictions: stats?.evictions ?? null,
      sweeps: stats?.sweeps ?? null,
      sweepFreed: stats?.sweptEntries ?? null,
    },
    latency: { set: summarizeLatency(setTimes), get: summarizeLatency(getTimes) },
    memory: { rssDelta: after.rss - before.rss, heapDelta: after.heapUsed - before.heapUsed },
  }),
);

// Benchmark worker: reads (or writes) random keys for a fixed time, either
// from the shared arena (mode "arena") or from a private lru-cache filled with
// the same entries (mode "lru", the way users run it today: one per worker).
// Keys come in a seeded random order, or drawn from Zipf(zipf.s) when `zipf`
// is given ({ s, length }); `attachOptions` go to SharedCache.attach().
import { parentPort, workerData } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { SharedCache } from '../../lib/index.js';
import { zipfOrder } from '../lib/hot-workload.js';
import { makeKeys, makePayload, shuffledOrder } from '../lib/keys.js';

const { mode, op, handle, entries, payload, durationMs, barrier, parties, seed, zipf, attachOptions } = workerData;
const keys = makeKeys(entries);
const order = zipf === undefined ? shuffledOrder(entries, seed) : zipfOrder({ keys: entries, s: zipf.s, length: zipf.length, seed });
const length = order.length;
const value = makePayload(payload);
let cache;
if (mode === 'arena') {
  cache = SharedCache.attach(handle, attachOptions);
} else {
  cache = new LRUCache({ max: entries });
  for (const key of keys) cache.set(key, value);
}
// Warm up (let the JIT optimize the loop) before the clock starts.
for (let n = 0, j = 0; n < 300_000; n++) {
  if (op === 'get') cache.get(keys[order[j]]);
  else cache.set(keys[order[j]], value);
  if (++j === length) j = 0;
}
const gate = new Int32Array(barrier);
Atomics.add(gate, 0, 1);
while (Atomics.load(gate, 0) < parties) Atomics.wait(gate, 1, 0, 1);

const BATCH = 1000;
let ops = 0;
let hits = 0;
let i = 0;
const start = performance.now();
let elapsed = 0;
while (elapsed < durationMs) {
  if (op === 'get') {
    for (let n = 0; n < BATCH; n++) {
      if (cache.get(keys[order[i]]) !== undefined) hits++;
      if (++i === length) i = 0;
    }
  } else {
    for (let n = 0; n < BATCH; n++) {
      cache.set(keys[order[i]], value);
      if (++i === length) i = 0;
    }
  }
  ops += BATCH;
  elapsed = performance.now() - start;
}
parentPort.postMessage({ ops, hits, elapsedMs: elapsed, heapUsed: process.memoryUsage().heapUsed });

// One worker thread of a multi-worker scenario: after an untimed warm-up,
// its share of the set loop, then its share of the get loop as a
// read-through (a miss sets the key),
// on the one shared SharedCache or on a private lru-cache holding its share
// of the entry budget (warmed with that many keys).
import { parentPort, workerData } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { SharedCache } from '../../lib/index.js';
import { makeKeys, makePayload } from '../lib/keys.js';
import { randomIndexes } from '../lib/latency.js';

const { mode, handle, entries, payload, setOps, getOps, budget, barrier, parties, seed } = workerData;
const keys = makeKeys(entries);
const value = makePayload(payload);
const setOrder = randomIndexes(setOps, entries, seed);
const getOrder = randomIndexes(getOps, entries, seed + 1);
let cache;
if (mode === 'arenacache') cache = SharedCache.attach(handle);
else {
  cache = new LRUCache({ max: budget });
  const warm = randomIndexes(budget, entries, seed + 2);
  for (let i = 0; i < budget; i++) cache.set(keys[warm[i]], value);
}
// Untimed warm-up of the same loops, so that the timed ones measure compiled
// code: a fresh worker thread starts interpreted, and its share of a few
// thousand operations would otherwise mostly time the JIT.
const warmOrder = randomIndexes(Math.min(20_000, setOps + getOps), entries, seed + 3);
for (let i = 0; i < warmOrder.length; i++) {
  const key = keys[warmOrder[i]];
  if (cache.get(key) === undefined || i % 3 === 0) cache.set(key, value);
}
const gate = new Int32Array(barrier);
Atomics.add(gate, 0, 1);
while (Atomics.load(gate, 0) < parties) Atomics.wait(gate, 1, 0, 1);

let started = performance.now();
for (let i = 0; i < setOps; i++) cache.set(keys[setOrder[i]], value);
const setMs = performance.now() - started;
let hits = 0;
let misses = 0;
started = performance.now();
for (let i = 0; i < getOps; i++) {
  const key = keys[getOrder[i]];
  if (cache.get(key) !== undefined) hits++;
  else {
    misses++;
    cache.set(key, value);
  }
}
const getMs = performance.now() - started;
parentPort.postMessage({ setMs, getMs, hits, misses });

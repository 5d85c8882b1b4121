// get/set ops/s of a file-backed SharedCache against an in-memory one, on the
// same keys, payloads and random order: what the mapping costs.

import { Bench } from 'tinybench';
import { SharedCache } from '../../lib/index.js';
import { arenaBytesFor, makeKeys, makePayload, shuffledOrder } from '../lib/keys.js';
import { median } from '../lib/stats.js';

const BATCH = 1000;


export async function cacheOps({ entries, payload, path, timeMs, rounds }) {
  const keys = makeKeys(entries);
  const order = shuffledOrder(entries);
  const value = makePayload(payload);
  const options = { memoryBytes: arenaBytesFor(entries, payload), max: entries };
  const caches = { memory: new SharedCache(options), file: SharedCache.open(path, { ...options, reset: true }) };
  try {
    for (const cache of Object.values(caches)) for (const key of keys) cache.set(key, value);
    let cursor = 0;
    let found = 0;
    const get = (cache) => () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        if (cache.get(keys[order[i]]) !== undefined) found++;
        if (++i === entries) i = 0;
      }
      cursor = i;
    };
    const set = (cache) => () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        cache.set(keys[order[i]], value);
        if (++i === entries) i = 0;
      }
      cursor = i;
    };
    const tasks = { 'memory get': get(caches.memory), 'file get': get(caches.file), 'memory set': set(caches.memory), 'file set': set(caches.file) };
    const samples = Object.fromEntries(Object.keys(tasks).map((name) => [name, []]));
    for (let round = 0; round < rounds; round++) {
      const bench = new Bench({ time: timeMs, warmupTime: Math.min(100, timeMs) });
      for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
      await bench.run();
      for (const task of bench.tasks) samples[task.name].push((BATCH * 1000) / task.result.period);
    }
    if (found === 0) throw new Error('bench: no lookup found anything');
    const result = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, median(list)]));
    return { ...result, samples };
  } finally {
    for (const cache of Object.values(caches)) cache.close();
  }
}

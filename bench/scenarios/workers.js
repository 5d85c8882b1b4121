// One multi-worker scenario in a process of its own: N worker threads split
// the set and get loops, either on one SharedCache holding every entry, or
// each on a private lru-cache holding 1/N of the same entry budget (what a
// worker pool runs today). The key space is the whole budget, so a private
// cache misses on the keys beyond its share. Prints one JSON line.

import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { arenaBytesFor, makeKeys, makePayload } from '../lib/keys.js';

const { mode, workers, payload, entries, setOps, getOps, policy, seed } = JSON.parse(process.argv[2]);
const before = process.memoryUsage();
let cache = null;
if (mode === 'arenacache') {
  cache = new SharedCache({ memoryBytes: arenaBytesFor(entries, payload), max: entries, policy });
  const value = makePayload(payload);
  for (const key of makeKeys(entries)) cache.set(key, value);
}
const barrier = new SharedArrayBuffer(8);
const threads = Array.from(
  { length: workers },
  (_, i) =>
    new Worker(new URL('../workers/mix.js', import.meta.url), {
      workerData: {
        mode,
        handle: cache?.handle ?? null,
        entries,
        payload,
        setOps: Math.ceil(setOps / workers),
        getOps: Math.ceil(getOps / workers),
        budget: Math.max(1, Math.floor(entries / workers)),
        barrier,
        parties: workers,
        seed: seed + 17 * i,
      },
    }),
);
const reports = await Promise.all(threads.map(async (thread) => (await once(thread, 'message'))[0]));
// All threads are still alive here: their caches count in the memory figure.
const after = process.memoryUsage();
await Promise.all(threads.map((thread) => thread.terminate()));
const sum = (f) => reports.reduce((total, report) => total + f(report), 0);
const hits = sum((r) => r.hits);
const misses = sum((r) => r.misses);
console.log(
  JSON.stringify({
    mode,
    policy: mode === 'arenacache' ? policy : null,
    workers,
    payload,
    setOpsPerSecond: sum((r) => Math.ceil(setOps / workers) / (r.setMs / 1000)),
    getOpsPerSecond: sum((r) => Math.ceil(getOps / workers) / (r.getMs / 1000)),
    opsPerSecond: sum((r) => (Math.ceil(setOps / workers) + Math.ceil(getOps / workers)) / ((r.setMs + r.getMs) / 1000)),
    hits,
    misses,
    hitRatio: hits / (hits + misses),
    memory: { rssDelta: after.rss - before.rss, rss: after.rss },
  }),
);

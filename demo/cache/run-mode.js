// One demo run in its own process (so memory figures are its own): a piscina
// pool serving the request stream with one caching mode.
import { Piscina } from 'piscina';
import { SharedCache } from '../../lib/index.js';
import { zipfKeys } from './zipf.js';

const options = JSON.parse(process.argv[2]);
const { mode, workers, requests, keySpace, alpha, cacheEntries, entryBytes, dataDir, seed } = options;

let shared = null;
if (mode === 'shared') {
  // The same memory budget as the private caches together: cacheEntries entries.
  shared = new SharedCache({ memoryBytes: Math.max(2 ** 20, cacheEntries * entryBytes), max: cacheEntries });
}
const pool = new Piscina({
  filename: new URL('./worker.js', import.meta.url).href,
  minThreads: workers,
  maxThreads: workers,
  idleTimeout: 60_000,
  workerData: { mode, dataDir, handle: shared?.handle ?? null, perWorkerEntries: Math.max(1, Math.floor(cacheEntries / workers)) },
});

const next = zipfKeys(keySpace, alpha, seed);
const stream = Array.from({ length: requests }, next);
const BATCH = 50;
const start = performance.now();
const results = [];
for (let i = 0; i < stream.length; i += BATCH) results.push(pool.run(stream.slice(i, i + BATCH)));
const done = await Promise.all(results);
const elapsedMs = performance.now() - start;
const queries = done.reduce((sum, r) => sum + r.queries, 0);
const hits = done.reduce((sum, r) => sum + r.hits, 0);
const memory = process.memoryUsage();
await pool.destroy();
console.log(
  JSON.stringify({
    mode,
    requests,
    elapsedMs,
    queries,
    hits,
    hitRatio: hits / requests,
    rssBytes: memory.rss,
    sharedStats: shared ? shared.stats() : null,
  }),
);

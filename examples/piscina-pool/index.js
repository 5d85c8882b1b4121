// One SharedCache for a whole piscina pool: every worker thread attaches to
// the same shared memory, so an expensive result computed by one thread is a
// hit for all the others, and concurrent misses on the same key run the
// loader once (fetch() is single-flight across threads).
//
//   node examples/piscina-pool/index.js
//
// The main thread creates the cache and passes `cache.handle` to the pool
// once, through piscina's workerData; each worker thread attaches to it once,
// at module level (see worker.js). The tasks ask for reports on a few ids
// many times over; the output compares loader runs with tasks.
import os from 'node:os';
import { Piscina } from 'piscina';
import { SharedCache } from 'arenacache';

const TASKS = Number(process.env.TASKS ?? 200);
const DISTINCT = Number(process.env.DISTINCT ?? 20);

const cache = new SharedCache({ memoryBytes: 16 * 2 ** 20 });

const pool = new Piscina({
  filename: new URL('./worker.js', import.meta.url).href,
  workerData: { handle: cache.handle }, // a SharedArrayBuffer inside: shared, not copied
  maxThreads: Math.max(2, Math.min(4, os.availableParallelism())),
});

const started = performance.now();
const reports = await Promise.all(Array.from({ length: TASKS }, (_, i) => pool.run({ id: i % DISTINCT })));
const elapsed = performance.now() - started;

const { fetches, fetchLoads, fetchWaits, entries } = cache.stats();
const threads = new Set(reports.map((report) => report.thread)).size;
console.log(`tasks: ${TASKS} over ${DISTINCT} ids, on ${threads} worker threads, in ${elapsed.toFixed(0)} ms`);
console.log(`loader runs: ${fetchLoads} (fetches: ${fetches}, waited for another thread's load: ${fetchWaits})`);
console.log(`cache entries: ${entries}`);
console.log(`report 7: ${JSON.stringify(reports[7].report)}`);

await pool.destroy();
cache.close();

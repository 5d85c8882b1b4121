// Aggregate throughput of N worker threads: all on one shared SharedCache,
// versus N private lru-caches (one per worker, each holding every entry).

import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { arenaBytesFor, makeKeys, makePayload } from './keys.js';
import { median } from './stats.js';

const readerFile = new URL('../workers/reader.js', import.meta.url);

/**
 * Aggregate ops/s of `workers` reader threads started together. `extra` goes
 * to each worker as is (see bench/workers/reader.js: zipf, attachOptions).
 */
export async function runWorkers({ mode, op, handle, workers, entries, payload, durationMs, extra }) {
  const barrier = new SharedArrayBuffer(8);
  const threads = Array.from(
    { length: workers },
    (_, i) =>
      new Worker(readerFile, {
        workerData: { mode, op, handle, entries, payload, durationMs, barrier, parties: workers, seed: 1000 + i, ...extra },
      }),
  );
  const results = await Promise.all(threads.map(async (thread) => (await once(thread, 'message'))[0]));
  await Promise.all(threads.map((thread) => thread.terminate()));
  const opsPerSecond = results.reduce((sum, result) => sum + result.ops / (result.elapsedMs / 1000), 0);
  const hits = results.reduce((sum, result) => sum + result.hits, 0);
  const ops = results.reduce((sum, result) => sum + result.ops, 0);
  return { opsPerSecond, hitRatio: op === 'get' ? hits / ops : null };
}


/**
 * Aggregate ops/s for each worker count, for the shared arena and for
 * per-worker lru-caches: the median of `rounds` runs, arena and lru-cache
 * alternating so that drifts of machine speed hit both alike.
 */
export async function multiThread({ entries, payload, workerCounts, durationMs, rounds, progress }) {
  const keys = makeKeys(entries);
  const value = makePayload(payload);
  // The same entry bound as the lru-cache peer (it also sizes the dictionary).
  const cache = new SharedCache({ memoryBytes: arenaBytesFor(entries, payload), max: entries });
  for (const key of keys) cache.set(key, value);
  const rows = [];
  for (const workers of workerCounts) {
    for (const op of ['get', 'set']) {
      const arena = [];
      const lru = [];
      let hitRatio = null;
      for (let round = 0; round < rounds; round++) {
        progress?.(`${workers} worker(s), ${op}, round ${round + 1}/${rounds}`);
        // Which goes first alternates, so a slow moment does not always fall on the same one.
        const runArena = () => runWorkers({ mode: 'arena', op, handle: cache.handle, workers, entries, payload, durationMs });
        const runLru = () => runWorkers({ mode: 'lru', op, handle: null, workers, entries, payload, durationMs });
        let shared;
        let own;
        if (round % 2 === 0) {
          shared = await runArena();
          own = await runLru();
        } else {
          own = await runLru();
          shared = await runArena();
        }
        arena.push(shared.opsPerSecond);
        lru.push(own.opsPerSecond);
        hitRatio = shared.hitRatio;
      }
      rows.push({ workers, op, arena: median(arena), lru: median(lru), arenaHitRatio: hitRatio, arenaRuns: arena, lruRuns: lru });
    }
  }
  return rows;
}

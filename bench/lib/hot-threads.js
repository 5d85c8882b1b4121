// Worker-thread scaling under the Zipf workload: aggregate get and set ops/s
// of N threads on one SharedCache against one thread, for each SharedCache
// setup (near cache on or off). Rounds go through every worker count and
// setup in turn, so that drifts of machine speed hit all alike.

import { runWorkers } from './multi-thread.js';
import { median } from './stats.js';

/**
 * @param {object} options
 * @param {{ store: string, attachOptions: object | undefined }[]} options.setups
 * @returns {Promise<object[]>} one row per setup, op and worker count
 */
export async function hotThreads({ handle, setups, keys, s, accesses, payload, workerCounts, durationMs, rounds, progress }) {
  const extra = (setup) => ({ zipf: { s, length: accesses }, attachOptions: setup.attachOptions });
  const rows = [];
  for (const op of ['get', 'set']) {
    const runs = new Map();
    for (let round = 0; round < rounds; round++) {
      for (const workers of workerCounts) {
        for (const setup of setups) {
          progress?.(`${op}, ${workers} thread(s), ${setup.store}, round ${round + 1}/${rounds}`);
          const result = await runWorkers({ mode: 'arena', op, handle, workers, entries: keys, payload, durationMs, extra: extra(setup) });
          const key = `${setup.store}|${workers}`;
          if (!runs.has(key)) runs.set(key, []);
          runs.get(key).push(result);
        }
      }
    }
    for (const setup of setups) {
      const base = median(runs.get(`${setup.store}|${workerCounts[0]}`).map((run) => run.opsPerSecond));
      for (const workers of workerCounts) {
        const mine = runs.get(`${setup.store}|${workers}`);
        const opsPerSecond = median(mine.map((run) => run.opsPerSecond));
        rows.push({
          store: setup.store,
          op,
          workers,
          opsPerSecond,
          vsFirst: opsPerSecond / base,
          hitRatio: op === 'get' ? Math.min(...mine.map((run) => run.hitRatio)) : null,
          runs: mine.map((run) => run.opsPerSecond),
        });
      }
    }
  }
  return rows;
}

// npm run bench:cachefs — CacheFS against plain node:fs and a copy-on-read
// Map of file contents, in one run: seven scenarios (ReadHit, a real
// ReadMiss, WriteThrough, SequentialReads, RandomAccess, EvictionLRU and
// SmallFiles), each for every layer; then ConcurrentReads with worker threads.
// CacheFS/fs and CacheFS/Map compare write-through; write-back/fs compares
// write-back (writes deferred, flushed every second in the background).
//
// Environment: BENCH_TIME_MS (300), BENCH_ROUNDS (3), BENCH_ITERATIONS (at
// least 4 calls per round), BENCH_WORKERS (1,2,4),
// BENCH_WORKER_MS (1000), BENCH_SCENARIOS (all), BENCH_DIR (the system temp
// directory), BENCH_JSON=path (or --json path).

import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { Bench } from 'tinybench';
import { SharedCache } from '../lib/index.js';
import { isRacy } from '../lib/fs/racy.js';
import { createLayer, LAYERS, NO_NEAR } from './cachefs/peers.js';
import { makeData, SCENARIOS } from './cachefs/scenarios.js';
import { intList, jsonPath, positiveInt } from './lib/env.js';
import { formatRate, printTable, ratio } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { median } from './lib/stats.js';
import { progressReporter } from './lib/progress.js';

const { progress, done: clearProgress } = progressReporter();

const config = {
  timeMs: positiveInt('BENCH_TIME_MS', 300),
  rounds: positiveInt('BENCH_ROUNDS', 3),
  iterations: positiveInt('BENCH_ITERATIONS', 4),
  workers: intList('BENCH_WORKERS', [1, 2, 4]),
  workerMs: positiveInt('BENCH_WORKER_MS', 1000),
  scenarios: (process.env.BENCH_SCENARIOS ?? Object.keys(SCENARIOS).join(',')).split(',').map((s) => s.trim()),
  dir: process.env.BENCH_DIR ?? os.tmpdir(),
};
for (const name of config.scenarios) if (!SCENARIOS[name]) throw new RangeError(`BENCH_SCENARIOS must list scenarios from ${Object.keys(SCENARIOS).join(', ')} (got "${name}")`);
const json = jsonPath();
const scratch = mkdtempSync(path.join(config.dir, 'arenacache-cachefs-bench-'));
const machine = describeMachine();

/**
 * Waits until `file`, the last one written, is old enough for CacheFS to
 * cache (the racily clean rule, lib/fs/racy.js): as in a real tree, where
 * files are not read within milliseconds of being written; otherwise the
 * first reads would measure the disk.
 */
async function untilCacheable(file) {
  while (isRacy(statSync(file), Date.now(), 0)) await sleep(10);
}

async function scenario(name) {
  const { files, ops, maxFiles } = SCENARIOS[name];
  const samples = Object.fromEntries(LAYERS.map((layer) => [layer, []]));
  const runs = {};
  const roots = {};
  for (const layer of LAYERS) {
    // Every layer gets a tree of its own, so writes do not meet.
    const root = path.join(scratch, `${name}-${layer.replace(/\W+/g, '-')}`);
    mkdirSync(root);
    for (const file of files) writeFileSync(path.join(root, file.path), file.data);
    roots[layer] = root;
  }
  await untilCacheable(path.join(roots[LAYERS.at(-1)], files.at(-1).path));
  for (const layer of LAYERS) {
    const root = roots[layer];
    const files$ = createLayer(layer, root, { maxFiles });
    const payload = makeData(files[0].data.length, 99);
    runs[layer] = {
      files: files$,
      run: async () => {
        for (const { op, index } of ops) {
          if (op === 'read') await files$.readFile(files[index].path);
          else await files$.writeFile(files[index].path, payload);
        }
      },
    };
    await runs[layer].run(); // the first pass fills the caches
  }
  // Rounds go through every layer in turn, so that the machine's drifts
  // (other tenants, the disk's journal) hit all of them alike.
  for (let round = 0; round < config.rounds; round++) {
    for (const layer of LAYERS) {
      progress(`${name}: ${layer}, round ${round + 1}/${config.rounds}`);
      // A call can read a thousand files: a few iterations, not tinybench's default 64, fill the time.
      const bench = new Bench({ time: config.timeMs, iterations: config.iterations, warmupTime: Math.min(50, config.timeMs), warmupIterations: 1 });
      bench.add(layer, runs[layer].run);
      await bench.run();
      const task = bench.tasks[0];
      if (task.result.state !== 'completed') throw new Error(`${name}/${layer} did not complete: ${task.result.state}`, { cause: task.result.error });
      samples[layer].push((ops.length * 1000) / task.result.period);
    }
  }
  const hitRatios = Object.fromEntries(LAYERS.map((layer) => [layer, runs[layer].files.hitRatio()]));
  return { name, ops: Object.fromEntries(LAYERS.map((layer) => [layer, median(samples[layer])])), hitRatios, samples };
}

async function concurrentReads(workers, layer) {
  const count = 100;
  const root = path.join(scratch, `concurrent-${workers}-${layer.replace(/\W+/g, '-')}`);
  mkdirSync(root);
  for (let i = 0; i < count; i++) writeFileSync(path.join(root, `f${i}.bin`), makeData(1024, i));
  await untilCacheable(path.join(root, `f${count - 1}.bin`));
  const cache = layer.startsWith('CacheFS (shared') ? new SharedCache({ memoryBytes: 16 * 2 ** 20 }) : null;
  const barrier = new SharedArrayBuffer(8);
  const threads = Array.from(
    { length: workers },
    (_, i) =>
      new Worker(new URL('./workers/cachefs-reader.js', import.meta.url), {
        workerData: { layer, root, handle: cache?.handle ?? null, count, durationMs: config.workerMs, seed: 1 + i, barrier, parties: workers },
      }),
  );
  const reports = await Promise.all(threads.map(async (thread) => (await once(thread, 'message'))[0]));
  return reports.reduce((sum, { reads, elapsedMs }) => sum + reads / (elapsedMs / 1000), 0);
}

const results = { machine, config, scenarios: [], concurrent: [] };
try {
  for (const name of config.scenarios) results.scenarios.push(await scenario(name));
  for (const workers of config.workers) {
    const row = { workers };
    for (const layer of ['fs', 'Map copy-on-read', 'CacheFS (shared)', 'CacheFS (shared, no near cache)']) {
      progress(`ConcurrentReads: ${workers} worker(s), ${layer}`);
      row[layer] = await concurrentReads(workers, layer);
    }
    results.concurrent.push(row);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
  clearProgress();
}

console.log(`arenacache CacheFS benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date}`);
console.log(`${config.rounds} rounds of ${config.timeMs} ms per scenario and layer (median shown); files in ${config.dir}\n`);
console.log('File operations per second (and hit ratio of the caching layers)');
printTable(
  results.scenarios.map(({ name, ops, hitRatios }) => ({
    scenario: name,
    ...Object.fromEntries(
      LAYERS.map((layer) => [layer, hitRatios[layer] === null ? formatRate(ops[layer]) : `${formatRate(ops[layer])} (${Math.round(hitRatios[layer] * 100)}%)`]),
    ),
    'CacheFS/fs': ratio(ops['CacheFS write-through'], ops.fs),
    'CacheFS/Map': ratio(ops['CacheFS write-through'], ops['Map copy-on-read']),
    'no near/Map': ratio(ops[NO_NEAR], ops['Map copy-on-read']),
    'write-back/fs': ratio(ops['CacheFS write-back'], ops.fs),
  })),
);
console.log(`\nConcurrentReads: worker threads reading 100 files of 1 KB at random (aggregate reads per second)`);
printTable(
  results.concurrent.map((row) => ({
    workers: row.workers,
    fs: formatRate(row.fs),
    'Map copy-on-read (one per worker)': formatRate(row['Map copy-on-read']),
    'CacheFS (one shared cache)': formatRate(row['CacheFS (shared)']),
    'CacheFS, no near cache': formatRate(row['CacheFS (shared, no near cache)']),
    'CacheFS/fs': ratio(row['CacheFS (shared)'], row.fs),
  })),
);
const scenarios = Object.fromEntries(results.scenarios.map((s) => [s.name, s.ops]));
if (scenarios.EvictionLRU && scenarios.ReadMiss) {
  const cost = (ops) => 1 / ops['CacheFS write-through'];
  console.log(`\nEvictionLRU cost / ReadMiss cost (CacheFS write-through): ${(cost(scenarios.EvictionLRU) / cost(scenarios.ReadMiss)).toFixed(2)}`);
}
if (json) {
  writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`wrote ${json}`);
}

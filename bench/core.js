// npm run bench:core — SharedCache against its peers in one run.
//
//   1. single thread: get and set ops/s for SharedCache, lru-cache, Map,
//      lmdb and the floor (a minimal seqlock cache written for the
//      measurement, bench/lib/floor-cache.js: what hash, lock, probe and
//      copy cost alone) on the same keys, payloads and random access order;
//   2. N workers: aggregate ops/s on one shared SharedCache versus N private
//      lru-caches;
//   3. memory efficiency: live key+value bytes / memoryBytes when full.
//
// Only ratios measured in the same run mean anything on a shared machine.
// Environment: BENCH_ENTRIES (20000), BENCH_PAYLOADS (64,512,1024,4096),
// BENCH_WORKERS (1,2,4), BENCH_TIME_MS per task and round (300),
// BENCH_ROUNDS (3), BENCH_WORKER_MS (1000), BENCH_MEMORY_MIB for the memory
// efficiency runs (64), BENCH_JSON=path (or --json path).

import { writeFileSync } from 'node:fs';
import { intList, jsonPath, positiveInt } from './lib/env.js';
import { formatRate, printTable } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { memoryEfficiency } from './lib/memory-efficiency.js';
import { multiThread } from './lib/multi-thread.js';
import { singleThread } from './lib/single-thread.js';
import { progressReporter } from './lib/progress.js';
import { roundRatios, SpreadTracker } from './lib/spread.js';

const { progress, done: clearProgress } = progressReporter();

const config = {
  entries: positiveInt('BENCH_ENTRIES', 20_000),
  payloads: intList('BENCH_PAYLOADS', [64, 512, 1024, 4096]),
  workers: intList('BENCH_WORKERS', [1, 2, 4]),
  timeMs: positiveInt('BENCH_TIME_MS', 300),
  rounds: positiveInt('BENCH_ROUNDS', 3),
  workerMs: positiveInt('BENCH_WORKER_MS', 1000),
  memoryMiB: positiveInt('BENCH_MEMORY_MIB', 64),
};
const json = jsonPath();
const spread = new SpreadTracker();

const machine = describeMachine();
console.log(`arenacache core benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date}`);
console.log(`entries ${config.entries}, payloads ${config.payloads.join('/')} B, ${config.rounds} rounds of ${config.timeMs} ms per task (median shown)\n`);

const single = [];
for (const payload of config.payloads) {
  const result = await singleThread({
    entries: config.entries,
    payload,
    timeMs: config.timeMs,
    rounds: config.rounds,
    progress: (message) => progress(`single thread, ${payload} B: ${message}`),
  });
  single.push({ payload, ...result });
}
clearProgress();
console.log(`Single thread (ops/s, median of ${config.rounds} rounds; ratios are arenacache / peer, each round's own, median with range;`);
console.log('get/floor and set/floor are time per operation instead, arenacache / floor: 1.10 is 10% slower than the floor)');
printTable(
  single.map((r) => ({
    payload: `${r.payload} B`,
    'arena get': formatRate(r['arenacache get']),
    'lru get': formatRate(r['lru-cache get']),
    'Map get': formatRate(r['Map get']),
    'lmdb get': formatRate(r['lmdb getBinaryFast']),
    'get/lru': spread.ratio(roundRatios(r.samples['arenacache get'], r.samples['lru-cache get'])),
    'get/lmdb': spread.ratio(roundRatios(r.samples['arenacache get'], r.samples['lmdb getBinaryFast'])),
    'floor get': formatRate(r['floor get']),
    'get/floor': spread.ratio(roundRatios(r.samples['floor get'], r.samples['arenacache get'])),
    'arena set': formatRate(r['arenacache set']),
    'lru set': formatRate(r['lru-cache set']),
    'lmdb set': formatRate(r['lmdb putSync (txn)']),
    'set/lru': spread.ratio(roundRatios(r.samples['arenacache set'], r.samples['lru-cache set'])),
    'set/lmdb': spread.ratio(roundRatios(r.samples['arenacache set'], r.samples['lmdb putSync (txn)'])),
    'floor set': formatRate(r['floor set']),
    'set/floor': spread.ratio(roundRatios(r.samples['floor set'], r.samples['arenacache set'])),
  })),
);

const workerPayload = config.payloads[0];
const multi = await multiThread({
  entries: config.entries,
  payload: workerPayload,
  workerCounts: config.workers,
  durationMs: config.workerMs,
  rounds: config.rounds,
  progress: (message) => progress(`workers: ${message}`),
});
clearProgress();
const base = (op) => multi.find((row) => row.op === op && row.workers === config.workers[0]);
console.log(`\nWorkers, ${workerPayload} B (aggregate ops/s, median of ${config.rounds} runs: one shared arena vs one private lru-cache per worker)`);
printTable(
  multi.map((row) => ({
    workers: row.workers,
    op: row.op,
    arena: formatRate(row.arena),
    [`arena vs ${config.workers[0]} worker(s)`]: (row.arena / base(row.op).arena).toFixed(2),
    'lru-cache (private)': formatRate(row.lru),
    'arena/lru': spread.ratio(roundRatios(row.arenaRuns, row.lruRuns)),
  })),
);

progress('memory efficiency');
const memory = [
  memoryEfficiency({ memoryBytes: config.memoryMiB * 2 ** 20, minBytes: 64, maxBytes: 4096 }),
  ...config.payloads.map((size) => memoryEfficiency({ memoryBytes: config.memoryMiB * 2 ** 20, minBytes: size, maxBytes: size })),
];
clearProgress();
console.log('\nMemory efficiency when full (live key+value bytes / memoryBytes)');
printTable(memory.map((m) => ({ values: `${m.valueBytes} B`, entries: m.entries, efficiency: `${(m.efficiency * 100).toFixed(1)}%` })));

console.log('');
spread.report(config.rounds, 'more BENCH_ROUNDS and a longer BENCH_TIME_MS');

if (json) {
  writeFileSync(json, `${JSON.stringify({ machine, config, single, multi, memory, worstSpread: spread.worst }, null, 2)}\n`);
  console.log(`\nwrote ${json}`);
}

// npm run bench — arenacache's throughput, latency and memory per payload
// size, with its peers side by side in the same run. For each payload,
// every store runs the same scenario in a process of its own: a warm-up
// fill of BENCH_ENTRIES keys, a timed loop of BENCH_SET_OPS sets, a timed
// loop of BENCH_GET_OPS gets, and a latency pass; then worker-thread
// scenarios: one shared arena against one private lru-cache per worker with
// the same total entry budget.
//
// Environment (names and defaults): BENCH_ENTRIES (20000),
// BENCH_SET_OPS (50000), BENCH_GET_OPS (100000), BENCH_PAYLOADS
// (64,512,1024,4096); and BENCH_WORKERS (1,2,4), BENCH_POLICIES (hybrid),
// BENCH_LATENCY_OPS (20000), BENCH_RUNS (3: each single-thread scenario
// runs that many times, stores in rotating order, and every ratio is shown
// as the median with its range over the runs), BENCH_QUICK=1 (a quick run:
// 2000/2000/4000, payload 64, workers 1,2), BENCH_JSON=path or --json path,
// BENCH_CHART=path or --chart path (SVG; default next to the JSON).

import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { POLICY_NAMES } from '../lib/arena/common/layout.js';
import { renderChart } from './lib/chart.js';
import { intList, jsonPath, positiveInt } from './lib/env.js';
import { formatRate, printTable } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { PEERS } from './scenarios/stores.js';
import { progressReporter } from './lib/progress.js';
import { SpreadTracker } from './lib/spread.js';

const { progress, done: clearProgress } = progressReporter();

const quick = process.env.BENCH_QUICK === '1';
const config = {
  entries: positiveInt('BENCH_ENTRIES', quick ? 2000 : 20_000),
  setOps: positiveInt('BENCH_SET_OPS', quick ? 2000 : 50_000),
  getOps: positiveInt('BENCH_GET_OPS', quick ? 4000 : 100_000),
  payloads: intList('BENCH_PAYLOADS', quick ? [64] : [64, 512, 1024, 4096]),
  workers: intList('BENCH_WORKERS', quick ? [1, 2] : [1, 2, 4]),
  policies: (process.env.BENCH_POLICIES ?? 'hybrid').split(',').map((name) => name.trim()),
  latencyOps: positiveInt('BENCH_LATENCY_OPS', quick ? 2000 : 20_000),
  runs: positiveInt('BENCH_RUNS', 3),
};
/** Ratios that move more than this (max / min over the runs) make a run too noisy to trust. */
for (const policy of config.policies) {
  if (!POLICY_NAMES.includes(policy)) throw new RangeError(`BENCH_POLICIES must list policies from ${POLICY_NAMES.join(', ')} (got "${policy}")`);
}
const json = jsonPath();
const chartFlag = process.argv.indexOf('--chart');
const chartPath = chartFlag >= 0 ? process.argv[chartFlag + 1] : (process.env.BENCH_CHART ?? (json ? json.replace(/\.json$/, '') + '.svg' : null));

const singleFile = fileURLToPath(new URL('./scenarios/single.js', import.meta.url));
const workersFile = fileURLToPath(new URL('./scenarios/workers.js', import.meta.url));
const stores = [...config.policies.map((policy) => ({ store: 'arenacache', policy })), ...PEERS.map((store) => ({ store, policy: null }))];
const total = config.payloads.length * (stores.length * config.runs + config.workers.length * (config.policies.length + 1));
let done = 0;
const started = performance.now();
function runScenario(file, settings, name) {
  done++;
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  progress(`[${done}/${total}, ${seconds} s] ${name}`);
  const output = execFileSync(process.execPath, [file, JSON.stringify({ ...settings, seed: 12345 })], { encoding: 'utf8' });
  return JSON.parse(output.trim().split('\n').pop());
}
const label = (store, policy) => (store === 'arenacache' && config.policies.length > 1 ? `arenacache (${policy})` : store);

const machine = describeMachine();
const single = [];
const workers = [];
for (const payload of config.payloads) {
  // Every store runs config.runs times, in an order that rotates, so that a
  // slow moment of a shared machine does not always fall on the same store;
  // each ratio is taken within one run, and its median and range reported.
  const runsOf = stores.map(() => []);
  for (let run = 0; run < config.runs; run++) {
    for (let i = 0; i < stores.length; i++) {
      const index = (i + run) % stores.length;
      const { store, policy } = stores[index];
      const row = runScenario(singleFile, { store, policy, payload, entries: config.entries, setOps: config.setOps, getOps: config.getOps, latencyOps: config.latencyOps }, `${label(store, policy)}, ${payload} B, run ${run + 1}/${config.runs}`);
      runsOf[index][run] = { ...row, label: label(store, policy), setOpsPerSecond: config.setOps / (row.setMs / 1000), getOpsPerSecond: config.getOps / (row.getMs / 1000), opsPerSecond: (config.setOps + config.getOps) / (row.elapsedMs / 1000) };
    }
  }
  const arenaRuns = runsOf[0];
  stores.forEach((_, index) => {
    const runs = runsOf[index];
    const ratios = (field) => runs.map((row, run) => row[field] / arenaRuns[run][field]);
    // The run whose get rate is the median stands for the store in the tables.
    const middle = [...runs].sort((a, b) => a.getOpsPerSecond - b.getOpsPerSecond)[Math.floor(runs.length / 2)];
    single.push({ ...middle, runs: runs.length, setRatios: ratios('setOpsPerSecond'), getRatios: ratios('getOpsPerSecond') });
  });
  for (const count of config.workers) {
    for (const mode of [...config.policies.map((policy) => ({ mode: 'arenacache', policy })), { mode: 'lru-cache', policy: null }]) {
      const name = mode.mode === 'arenacache' ? `${label('arenacache', mode.policy)} shared` : 'lru-cache per worker';
      const row = runScenario(workersFile, { ...mode, workers: count, payload, entries: config.entries, setOps: config.setOps, getOps: config.getOps }, `${count} worker(s), ${name}, ${payload} B`);
      workers.push({ ...row, label: name });
    }
  }
}
clearProgress();

const spread = new SpreadTracker();
const MiB = 2 ** 20;
const mib = (bytes) => (bytes / MiB).toFixed(1);
const us = (x) => (x === undefined || x === null ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(1));
const count = (x) => (x === null ? '-' : String(x));
console.log(`arenacache benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date}`);
console.log(
  `entries ${config.entries}, set ops ${config.setOps}, get ops ${config.getOps}, payloads ${config.payloads.join('/')} B, ` +
    `workers ${config.workers.join('/')}; every scenario in its own process\n`,
);
for (const payload of config.payloads) {
  const rows = single.filter((row) => row.payload === payload);
  console.log(`Payload ${payload} B — one thread: throughput (ratios: store / arenacache, median of ${config.runs} run(s) with their range) and memory`);
  printTable(
    rows.map((row) => ({
      store: row.label,
      'elapsed s': (row.elapsedMs / 1000).toFixed(3),
      'ops/s': formatRate(row.opsPerSecond),
      'set/s': formatRate(row.setOpsPerSecond),
      'get/s': formatRate(row.getOpsPerSecond),
      'set ×': spread.ratio(row.setRatios),
      'get ×': spread.ratio(row.getRatios),
      'RSS Δ MiB': mib(row.memory.rssDelta),
      'heap Δ MiB': mib(row.memory.heapDelta),
    })),
  );
  console.log(`\nPayload ${payload} B — one thread: latency (µs) and counts`);
  printTable(
    rows.map((row) => ({
      store: row.label,
      'set avg/p50/p99/max': ['avgUs', 'p50Us', 'p99Us', 'maxUs'].map((k) => us(row.latency.set?.[k])).join(' / '),
      'get avg/p50/p99/max': ['avgUs', 'p50Us', 'p99Us', 'maxUs'].map((k) => us(row.latency.get?.[k])).join(' / '),
      'set/get/hit/miss': `${row.counts.set}/${row.counts.get}/${row.counts.hit}/${row.counts.miss}`,
      'expire/evict/sweeps/swept': ['expire', 'evictions', 'sweeps', 'sweepFreed'].map((k) => count(row.counts[k])).join('/'),
    })),
  );
  console.log('');
}
console.log('Worker threads — one shared arena vs one private lru-cache per worker (same total entry budget)');
printTable(
  config.payloads.flatMap((payload) =>
    config.workers.flatMap((n) => {
      const rows = workers.filter((row) => row.payload === payload && row.workers === n);
      const arena = rows.find((row) => row.mode === 'arenacache');
      return rows.map((row) => ({
        payload: `${payload} B`,
        workers: n,
        cache: row.label,
        'ops/s': formatRate(row.opsPerSecond),
        'set/s': formatRate(row.setOpsPerSecond),
        'get/s': formatRate(row.getOpsPerSecond),
        'ops ×': (row.opsPerSecond / arena.opsPerSecond).toFixed(2),
        'hit ratio': `${(row.hitRatio * 100).toFixed(1)}%`,
        'RSS Δ MiB': mib(row.memory.rssDelta),
      }));
    }),
  ),
);
console.log(
  '\nLatency is timed per operation in a separate pass (each time includes ~0.05 µs of timer); ' +
    'lmdb reads with getBinaryFast and writes one putSync transaction per set (noSync).',
);
spread.report(config.runs, 'more BENCH_RUNS and larger BENCH_SET_OPS/BENCH_GET_OPS', 'runs');
const worstSpread = spread.worst;
const result = { machine, config, single, workers, worstSpread };
if (json) {
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${json}`);
}
if (chartPath) {
  writeFileSync(chartPath, await renderChart({ single, workers, title: `arenacache ${machine.date.slice(0, 10)}: ${machine.cpu}, ${machine.cores} cores` }));
  console.log(`wrote ${chartPath}`);
}

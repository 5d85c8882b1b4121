// npm run bench:hit-ratio — hit ratio of each eviction policy on traces,
// against references computed in the same run. Two modes:
//
//   generated (default): seeded Zipf, scan and shifting traces of HIT_KEYS
//     keys and HIT_REQUESTS requests; references lru-cache (an exact LRU)
//     and Belady's offline optimum.
//   recorded: HIT_TRACES=<directory> (or --traces <directory>) replays every
//     trace file in it (formats and compression: bench/hit-ratio/
//     trace-files.js); references an exact LRU, S3-FIFO as its paper
//     describes it, and Belady, simulated here on the same requests. Sizes
//     are shares of each trace's distinct objects.
//
// Environment: HIT_SIZES (percent of keys or objects: 0.1,1,10),
// BENCH_POLICIES (lru,lfu,ttl,hybrid generated; lru,hybrid recorded),
// HIT_KEYS (100000), HIT_REQUESTS (1000000), BENCH_JSON=path (or --json path).

import { writeFileSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { SharedCache } from '../lib/index.js';
import { beladyHitRatio } from './hit-ratio/belady.js';
import { lruHitRatio, s3fifoHitRatio } from './hit-ratio/references.js';
import { replay } from './hit-ratio/run.js';
import { readTraceDirectory } from './hit-ratio/trace-files.js';
import { keySpace, scanTrace, shiftingTrace, zipfTrace } from './hit-ratio/traces.js';
import { jsonPath, nameList, numberList } from './lib/env.js';
import { printTable } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { progressReporter } from './lib/progress.js';

const { progress, done: clearProgress } = progressReporter();

const POLICIES = ['lru', 'lfu', 'ttl', 'hybrid'];
const traceFlag = process.argv.indexOf('--traces');
const traceDirectory = traceFlag >= 0 ? process.argv[traceFlag + 1] : process.env.HIT_TRACES;
const recorded = traceDirectory !== undefined && traceDirectory !== '';
const keys = numberList('HIT_KEYS', [100_000])[0];
const requests = numberList('HIT_REQUESTS', [1_000_000])[0];
const sizes = numberList('HIT_SIZES', [0.1, 1, 10]);
const policies = nameList('BENCH_POLICIES', POLICIES, recorded ? ['lru', 'hybrid'] : POLICIES);
const json = jsonPath();

/** The cache of `policy` holding at most `capacity` entries (values small enough that only max binds). */
const cacheFor = (policy, capacity) => new SharedCache({ memoryBytes: Math.max(2 ** 20, capacity * 256), max: capacity, policy });

/** The traces to replay: [name, { trace, objects }] with objects the number of distinct keys. */
function tracesToReplay() {
  if (recorded) return readTraceDirectory(traceDirectory).map(({ name, trace, objects }) => [name, { trace, objects }]);
  const generated = {
    'zipf 0.8': zipfTrace({ keys, requests, alpha: 0.8, seed: 1 }),
    'zipf 0.99': zipfTrace({ keys, requests, alpha: 0.99, seed: 2 }),
    'zipf + scan': scanTrace({ keys, requests, seed: 3, scanKeys: Math.round(keys / 5) }),
    shifting: shiftingTrace({ keys, requests, seed: 4, phase: Math.round(requests / 10) }),
  };
  // Sizes of generated traces are shares of the key space asked for.
  return Object.entries(generated).map(([name, trace]) => [name, { trace, objects: keys }]);
}

const rows = [];
for (const [traceName, { trace, objects }] of tracesToReplay()) {
  const names = Array.from({ length: keySpace(trace) }, (_, i) => `key:${i}`);
  for (const percent of sizes) {
    const capacity = Math.max(1, Math.round((objects * percent) / 100));
    const row = { trace: traceName, size: `${percent}%`, entries: capacity, requests: trace.length, objects };
    for (const policy of policies) {
      progress(`${traceName}, ${percent}%: ${policy}`);
      row[policy] = replay(trace, names, cacheFor(policy, capacity));
    }
    if (recorded) {
      progress(`${traceName}, ${percent}%: exact LRU`);
      row['exact LRU'] = lruHitRatio(trace, capacity);
      progress(`${traceName}, ${percent}%: S3-FIFO`);
      row['S3-FIFO'] = s3fifoHitRatio(trace, capacity);
    } else {
      progress(`${traceName}, ${percent}%: lru-cache`);
      row['lru-cache'] = replay(trace, names, new LRUCache({ max: capacity }));
    }
    progress(`${traceName}, ${percent}%: Belady`);
    row.belady = beladyHitRatio(trace, capacity);
    rows.push(row);
  }
}
clearProgress();

const machine = describeMachine();
const percent = (x) => `${(x * 100).toFixed(1)}`;
const points = (x) => (100 * x).toFixed(1);
if (recorded) {
  console.log(`arenacache hit ratios on recorded traces from ${traceDirectory}, ${machine.date}\n`);
  printTable(
    rows.map((row) => {
      const best = Math.max(row['exact LRU'], row['S3-FIFO']);
      return {
        trace: row.trace,
        'requests / objects': `${row.requests} / ${row.objects}`,
        size: row.size,
        entries: row.entries,
        ...Object.fromEntries(policies.map((p) => [p, percent(row[p])])),
        'exact LRU': percent(row['exact LRU']),
        'S3-FIFO': percent(row['S3-FIFO']),
        belady: percent(row.belady),
        ...(row.hybrid !== undefined ? { 'hybrid − best of LRU, S3-FIFO': points(row.hybrid - best), 'hybrid − S3-FIFO': points(row.hybrid - row['S3-FIFO']), 'belady − hybrid': points(row.belady - row.hybrid) } : {}),
      };
    }),
  );
} else {
  console.log(`arenacache hit ratios — ${keys} keys, ${requests} requests per trace, ${machine.date}\n`);
  printTable(
    rows.map((row) => ({
      trace: row.trace,
      size: row.size,
      ...Object.fromEntries(policies.map((p) => [p, percent(row[p])])),
      'lru-cache': percent(row['lru-cache']),
      belady: percent(row.belady),
      ...(row.lru !== undefined ? { 'lru − lru-cache': points(row.lru - row['lru-cache']) } : {}),
      ...(row.hybrid !== undefined ? { 'hybrid − lru-cache': points(row.hybrid - row['lru-cache']) } : {}),
      ...(row.hybrid !== undefined ? { 'belady − hybrid': points(row.belady - row.hybrid) } : {}),
    })),
  );
}
console.log('\nHit ratios in percent; differences in percentage points.');
if (json) {
  writeFileSync(json, `${JSON.stringify({ machine, mode: recorded ? 'recorded' : 'generated', ...(recorded ? { traces: traceDirectory } : { keys, requests }), sizes, policies, rows }, null, 2)}\n`);
  console.log(`wrote ${json}`);
}

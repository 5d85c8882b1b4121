// npm run bench:hit-ratio — hit ratio of each eviction policy on seeded
// traces, against lru-cache (exact LRU) and Belady's offline optimum, in one
// run. Environment: HIT_KEYS (100000), HIT_REQUESTS (1000000), HIT_SIZES
// (percent of keys: 0.1,1,10), BENCH_POLICIES (lru,lfu,ttl,hybrid),
// BENCH_JSON=path (or --json path).

import { writeFileSync } from 'node:fs';
import { LRUCache } from 'lru-cache';
import { SharedCache } from '../lib/index.js';
import { beladyHitRatio } from './hit-ratio/belady.js';
import { replay } from './hit-ratio/run.js';
import { keySpace, scanTrace, shiftingTrace, zipfTrace } from './hit-ratio/traces.js';
import { jsonPath, numberList } from './lib/env.js';
import { printTable } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { progressReporter } from './lib/progress.js';

const { progress, done: clearProgress } = progressReporter();

const keys = numberList('HIT_KEYS', [100_000])[0];
const requests = numberList('HIT_REQUESTS', [1_000_000])[0];
const sizes = numberList('HIT_SIZES', [0.1, 1, 10]);
const policies = (process.env.BENCH_POLICIES ?? 'lru,lfu,ttl,hybrid').split(',').map((p) => p.trim());
const json = jsonPath();

const traces = {
  'zipf 0.8': zipfTrace({ keys, requests, alpha: 0.8, seed: 1 }),
  'zipf 0.99': zipfTrace({ keys, requests, alpha: 0.99, seed: 2 }),
  'zipf + scan': scanTrace({ keys, requests, seed: 3, scanKeys: Math.round(keys / 5) }),
  shifting: shiftingTrace({ keys, requests, seed: 4, phase: Math.round(requests / 10) }),
};

const rows = [];
for (const [traceName, trace] of Object.entries(traces)) {
  const names = Array.from({ length: keySpace(trace) }, (_, i) => `key:${i}`);
  for (const percent of sizes) {
    const capacity = Math.max(1, Math.round((keys * percent) / 100));
    const row = { trace: traceName, size: `${percent}%`, entries: capacity };
    for (const policy of policies) {
      progress(`${traceName}, ${percent}%: ${policy}`);
      const cache = new SharedCache({ memoryBytes: Math.max(2 ** 20, capacity * 256), max: capacity, policy });
      row[policy] = replay(trace, names, cache);
    }
    progress(`${traceName}, ${percent}%: lru-cache`);
    row['lru-cache'] = replay(trace, names, new LRUCache({ max: capacity }));
    progress(`${traceName}, ${percent}%: Belady`);
    row.belady = beladyHitRatio(trace, capacity);
    rows.push(row);
  }
}
clearProgress();

const machine = describeMachine();
console.log(`arenacache hit ratios — ${keys} keys, ${requests} requests per trace, ${machine.date}\n`);
const percent = (x) => `${(x * 100).toFixed(1)}`;
printTable(
  rows.map((row) => ({
    trace: row.trace,
    size: row.size,
    ...Object.fromEntries(policies.map((p) => [p, percent(row[p])])),
    'lru-cache': percent(row['lru-cache']),
    belady: percent(row.belady),
    ...(row.lru !== undefined ? { 'lru − lru-cache': (100 * (row.lru - row['lru-cache'])).toFixed(1) } : {}),
    ...(row.hybrid !== undefined ? { 'hybrid − lru-cache': (100 * (row.hybrid - row['lru-cache'])).toFixed(1) } : {}),
    ...(row.hybrid !== undefined ? { 'belady − hybrid': (100 * (row.belady - row.hybrid)).toFixed(1) } : {}),
  })),
);
console.log('\nHit ratios in percent; differences in percentage points.');
if (json) {
  writeFileSync(json, `${JSON.stringify({ machine, keys, requests, sizes, policies, rows }, null, 2)}\n`);
  console.log(`wrote ${json}`);
}

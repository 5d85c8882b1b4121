// npm run bench:floor — SharedCache's get and set against the floor (a
// minimal seqlock cache, bench/lib/floor-cache.js), finely interleaved.
//
// bench:core shows the same ratio, but each of its tasks runs for hundreds
// of milliseconds in turn, so on a shared machine a change of load between
// two tasks moves the ratio more than the 10% this comparison is about.
// Here both run the same keys, payload and random order in short
// alternating slices (BENCH_SLICE operations each, the first of each pair
// alternating), timed by this thread's CPU time, and the ratio is each
// pair's own; the median of the pairs is shown with its quartiles.
//
// Environment: BENCH_ENTRIES (20000), BENCH_PAYLOADS (64), BENCH_PAIRS (60),
// BENCH_SLICE (50000), BENCH_NEAR_CACHE (0: the floor has no near cache;
// "default" for the cache's default), BENCH_JSON=path (or --json path).

import { writeFileSync } from 'node:fs';
import { SharedCache } from '../lib/index.js';
import { intList, jsonPath, positiveInt } from './lib/env.js';
import { FloorCache } from './lib/floor-cache.js';
import { printTable } from './lib/format.js';
import { arenaBytesFor, makeKeys, makePayload, shuffledOrder } from './lib/keys.js';
import { describeMachine } from './lib/machine.js';

const config = {
  entries: positiveInt('BENCH_ENTRIES', 20_000),
  payloads: intList('BENCH_PAYLOADS', [64]),
  pairs: positiveInt('BENCH_PAIRS', 60),
  slice: positiveInt('BENCH_SLICE', 50_000),
  nearCache: nearCacheSetting(),
};
const json = jsonPath();

/** BENCH_NEAR_CACHE: 0 (the default) or "default". */
function nearCacheSetting() {
  const raw = process.env.BENCH_NEAR_CACHE;
  if (!raw || raw === '0') return 0;
  if (raw === 'default') return 'default';
  throw new RangeError(`BENCH_NEAR_CACHE must be 0 or "default" (got "${raw}")`);
}

/** This thread's CPU time in ms: time the process spends descheduled on a loaded machine is not counted. */
function cpuMs() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/**
 * The get and set loops of one contender, compiled apart from the other's
 * (new Function), so that no call site sees both and goes polymorphic.
 */
function loops(cache, keys, order, value, slice) {
  const source = `
    let cursor = 0;
    let found = 0;
    const n = keys.length;
    return {
      get() {
        let i = cursor;
        const start = cpuMs();
        for (let k = 0; k < slice; k++) {
          if (cache.get(keys[order[i]]) !== undefined) found++;
          if (++i === n) i = 0;
        }
        cursor = i;
        return ((cpuMs() - start) * 1e6) / slice;
      },
      set() {
        let i = cursor;
        const start = cpuMs();
        for (let k = 0; k < slice; k++) {
          cache.set(keys[order[i]], value);
          if (++i === n) i = 0;
        }
        cursor = i;
        return ((cpuMs() - start) * 1e6) / slice;
      },
      found: () => found,
    };`;
  return new Function('cache', 'keys', 'order', 'value', 'slice', 'cpuMs', source)(cache, keys, order, value, slice, cpuMs);
}

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

function measure(payload) {
  const keys = makeKeys(config.entries);
  const order = shuffledOrder(config.entries);
  const value = makePayload(payload);
  const memoryBytes = arenaBytesFor(config.entries, payload);
  const cache = new SharedCache({ memoryBytes, max: config.entries, ...(config.nearCache === 0 ? { nearCache: 0 } : {}) });
  const floor = new FloorCache({ memoryBytes, entries: config.entries });
  for (const key of keys) {
    cache.set(key, value);
    floor.set(key, value);
  }
  const arena = loops(cache, keys, order, value, config.slice);
  const base = loops(floor, keys, order, value, config.slice);
  for (let i = 0; i < 3; i++) for (const x of [arena, base]) x.get() + x.set();
  const ns = { arenaGet: [], floorGet: [], arenaSet: [], floorSet: [] };
  for (let pair = 0; pair < config.pairs; pair++) {
    const [first, second] = pair % 2 === 0 ? [arena, base] : [base, arena];
    for (const op of ['Get', 'Set']) {
      const a = first[op.toLowerCase()]();
      const b = second[op.toLowerCase()]();
      ns[`arena${op}`].push(first === arena ? a : b);
      ns[`floor${op}`].push(first === arena ? b : a);
    }
  }
  if (arena.found() === 0 || base.found() === 0) throw new Error('bench: a lookup found nothing');
  const row = { payload };
  for (const op of ['Get', 'Set']) {
    const ratios = ns[`arena${op}`].map((t, i) => t / ns[`floor${op}`][i]).sort((p, q) => p - q);
    const median = (list) => [...list].sort((p, q) => p - q)[list.length >> 1];
    row[`arena${op}Ns`] = median(ns[`arena${op}`]);
    row[`floor${op}Ns`] = median(ns[`floor${op}`]);
    row[`${op.toLowerCase()}Ratio`] = quantile(ratios, 0.5);
    row[`${op.toLowerCase()}RatioQuartiles`] = [quantile(ratios, 0.25), quantile(ratios, 0.75)];
  }
  return row;
}

const machine = describeMachine();
console.log(`arenacache floor benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date}`);
console.log(
  `entries ${config.entries}, near cache ${config.nearCache}, ${config.pairs} pairs of slices of ${config.slice} operations (CPU time; ` +
    'ratios are arenacache / floor time per operation, median of the pairs with their quartiles: 1.10 is 10% slower than the floor)\n',
);
const rows = config.payloads.map(measure);
printTable(
  rows.map((r) => ({
    payload: `${r.payload} B`,
    'arena get ns': r.arenaGetNs.toFixed(0),
    'floor get ns': r.floorGetNs.toFixed(0),
    'get/floor': `${r.getRatio.toFixed(2)} (${r.getRatioQuartiles.map((x) => x.toFixed(2)).join('-')})`,
    'arena set ns': r.arenaSetNs.toFixed(0),
    'floor set ns': r.floorSetNs.toFixed(0),
    'set/floor': `${r.setRatio.toFixed(2)} (${r.setRatioQuartiles.map((x) => x.toFixed(2)).join('-')})`,
  })),
);
if (json) {
  writeFileSync(json, `${JSON.stringify({ machine, config, rows }, null, 2)}\n`);
  console.log(`\nwrote ${json}`);
}

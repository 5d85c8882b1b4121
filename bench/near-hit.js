// A near-cache hit against lru-cache's get, and the floors of the design, in
// one focused loop: the keys, values and Zipf(0.99) order of npm run
// bench:hot, a SharedCache attached with the default near-cache options and
// filled by two passes (every get then a near hit), lru-cache holding every
// key. Each round times every contender over the same gets; the ratios are
// each round's own (lru-cache's time / the contender's: above 1, faster),
// medians over the rounds, as the machine's speed swings between rounds.
//
// Floors (baselines, not products): `Map.get` of the value; that plus one
// typed-array load; `Map.get` of an entry index, then the value from an
// array; and that plus the value's 24-byte neighbourhood and one load of
// shared memory, which is a near hit with nothing else.
//
// Usage: node bench/near-hit.js (npm run bench:near-hit). Environment:
// BENCH_KIND (object, or string: 4 KiB strings), BENCH_KEYS (100000),
// BENCH_GETS per round (262144), BENCH_ROUNDS (41), BENCH_JSON=path (or
// --json path).

import { LRUCache } from 'lru-cache';
import { SharedCache } from '../lib/index.js';
import { KINDS, zipfOrder } from './lib/hot-workload.js';
import { arenaBytesFor, makeKeys } from './lib/keys.js';
import { jsonPath, nameList, positiveInt } from './lib/env.js';
import { writeFileSync } from 'node:fs';
import { median } from './lib/stats.js';

const kinds = nameList('BENCH_KIND', ['object', 'string'], ['object']);
if (kinds.length !== 1) throw new RangeError('BENCH_KIND must be one kind: object or string (one per run, so that one arena does not weigh on another)');
const kind = kinds[0];
const keys = positiveInt('BENCH_KEYS', 100_000);
const gets = positiveInt('BENCH_GETS', 2 ** 18);
const rounds = positiveInt('BENCH_ROUNDS', 41);

const names = makeKeys(keys);
const values = Array.from({ length: keys }, (_, i) => KINDS[kind].make(i));
const cache = new SharedCache({ memoryBytes: arenaBytesFor(keys, KINDS[kind].bytes), max: keys, nearCache: 0 });
for (let k = 0; k < keys; k++) cache.set(names[k], values[k]);
const order = zipfOrder({ keys, s: 0.99, length: 2 ** 20, seed: 12345 });
const near = SharedCache.attach(cache.handle, {});
for (let pass = 0; pass < 2; pass++) for (let i = 0; i < order.length; i++) near.get(names[order[i]]);
const lru = new LRUCache({ max: keys });
for (let k = 0; k < keys; k++) lru.set(names[k], values[k]);

const map = new Map(names.map((name, k) => [name, values[k]]));
// Entries in the order the near cache takes them (first read first), with
// a group in a shared array of 16,384 counts as in a 64-shard arena.
const GROUPS = 16_384;
const counts = new Float64Array(new SharedArrayBuffer(8 * GROUPS));
const indexes = new Map();
const byIndex = [];
const ready = [];
for (let i = 0; i < order.length; i++) {
  const name = names[order[i]];
  if (indexes.has(name)) continue;
  const j = byIndex.length;
  indexes.set(name, j);
  byIndex.push(values[order[i]]);
  ready.push(values[order[i]], (j * 7919) % GROUPS, 0);
}

let found = 0;
let cursor = 0;
// One function per contender, so that each call site sees one store.
const contenders = {
  'arena+near': () => {
    let i = cursor;
    for (let n = 0; n < gets; n++) {
      if (near.get(names[order[i]]) !== undefined) found++;
      if (++i === order.length) i = 0;
    }
  },
  'lru-cache': () => {
    let i = cursor;
    for (let n = 0; n < gets; n++) {
      if (lru.get(names[order[i]]) !== undefined) found++;
      if (++i === order.length) i = 0;
    }
  },
  'floor: Map.get': () => {
    let i = cursor;
    for (let n = 0; n < gets; n++) {
      if (map.get(names[order[i]]) !== undefined) found++;
      if (++i === order.length) i = 0;
    }
  },
  'floor: Map.get + 1 load': () => {
    let i = cursor;
    for (let n = 0; n < gets; n++) {
      const value = map.get(names[order[i]]);
      if (value !== undefined && counts[i & (GROUPS - 1)] === 0) found++;
      if (++i === order.length) i = 0;
    }
  },
  'floor: index, value': () => {
    let i = cursor;
    for (let n = 0; n < gets; n++) {
      const j = indexes.get(names[order[i]]);
      if (j !== undefined && byIndex[j] !== undefined) found++;
      if (++i === order.length) i = 0;
    }
  },
  'floor: index, 24 B, 1 load': () => {
    let i = cursor;
    for (let n = 0; n < gets; n++) {
      const j = indexes.get(names[order[i]]);
      if (j !== undefined) {
        const r = 3 * j;
        if (counts[ready[r + 1]] === ready[r + 2] && ready[r] !== undefined) found++;
      }
      if (++i === order.length) i = 0;
    }
  },
};

const times = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  for (const [name, run] of Object.entries(contenders)) {
    const start = process.hrtime.bigint();
    run();
    times[name].push(Number(process.hrtime.bigint() - start) / gets);
  }
  cursor = (cursor + gets) % order.length;
}
const before = near.stats();
contenders['arena+near']();
const after = near.stats();

const lruTimes = times['lru-cache'];
const nearHits = after.nearHits - before.nearHits;
console.log(`${KINDS[kind].label}, ${keys} keys, Zipf 0.99, ${rounds} rounds of ${gets} gets; near hits ${nearHits} of ${after.gets - before.gets} gets`);
const rows = Object.entries(times).map(([name, own]) => {
  const ratios = own.map((t, r) => lruTimes[r] / t);
  return { name, nsPerGet: median(own), lruRatio: median(ratios), lruRatioRange: [Math.min(...ratios), Math.max(...ratios)] };
});
for (const { name, nsPerGet, lruRatio, lruRatioRange } of rows) {
  console.log(`${name.padEnd(28)} ${nsPerGet.toFixed(1).padStart(7)} ns/get   lru-cache/this ${lruRatio.toFixed(2)} (${lruRatioRange[0].toFixed(2)}-${lruRatioRange[1].toFixed(2)})`);
}
if (found === 0) throw new Error('bench: nothing found');
const json = jsonPath();
if (json) writeFileSync(json, `${JSON.stringify({ config: { kind, keys, gets, rounds }, nearHits, gets: after.gets - before.gets, rows }, null, 2)}\n`);
cache.close();
near.close();

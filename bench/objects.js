// npm run bench:objects — small objects through the default codec: get and
// set of SharedCache against lru-cache (holding the objects themselves) and
// lmdb-js `get`/`putSync` of the same objects (msgpackr, as lmdb-js encodes
// by default, and with its shared structures), in one run.
//
// The object is { id, name, email, roles: [2 strings], active, score }, one
// per key, read in a seeded random order. Then InodeFS, whose inode records
// and directory entries are such objects: statSync of BENCH_INODEFS_FILES
// files in a round robin, more than its path memo keeps (4096), so that each
// stat looks its records up in the inode cache. Only same-run ratios mean
// anything on a shared machine.
// Environment: BENCH_ENTRIES (20000), BENCH_TIME_MS per task and round (300),
// BENCH_ROUNDS (3), BENCH_INODEFS_FILES (8000), BENCH_JSON=path (or --json path).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { open } from 'lmdb';
import { LRUCache } from 'lru-cache';
import { Bench } from 'tinybench';
import { SharedCache } from '../lib/index.js';
import { InodeFS } from '../lib/inode-fs/index.js';
import { jsonPath, positiveInt } from './lib/env.js';
import { formatRate, printTable, ratio } from './lib/format.js';
import { makeKeys, shuffledOrder } from './lib/keys.js';
import { describeMachine } from './lib/machine.js';
import { median } from './lib/stats.js';
import { progressReporter } from './lib/progress.js';

const { progress, done: clearProgress } = progressReporter();

const BATCH = 1000;
const config = {
  entries: positiveInt('BENCH_ENTRIES', 20_000),
  timeMs: positiveInt('BENCH_TIME_MS', 300),
  rounds: positiveInt('BENCH_ROUNDS', 3),
  inodefsFiles: positiveInt('BENCH_INODEFS_FILES', 8000),
};
const json = jsonPath();

function makeObject(i) {
  return { id: i, name: `user ${i}`, email: `user${i}@example.com`, roles: ['reader', i % 7 === 0 ? 'admin' : 'writer'], active: i % 3 !== 0, score: i * 1.5 };
}

const keys = makeKeys(config.entries);
const order = shuffledOrder(config.entries);
const objects = keys.map((_, i) => makeObject(i));
// nearCache 0: this measures the codec and the arena (npm run bench:hot measures the near cache).
const cache = new SharedCache({ memoryBytes: 64 * 2 ** 20, max: config.entries, nearCache: 0 });
const lru = new LRUCache({ max: config.entries });
const dir = mkdtempSync(path.join(os.tmpdir(), 'arenacache-bench-objects-'));
const env = open({ path: dir, noSync: true, compression: false });
const plain = env.openDB('plain');
const shared = env.openDB('shared', { sharedStructuresKey: Symbol.for('structures') });
const dbs = { plain, shared };

for (let i = 0; i < keys.length; i++) {
  cache.set(keys[i], objects[i]);
  lru.set(keys[i], objects[i]);
}
for (const db of Object.values(dbs)) {
  db.transactionSync(() => {
    for (let i = 0; i < keys.length; i++) db.putSync(keys[i], objects[i]);
  });
}
for (const [name, peer] of Object.entries({ cache, plain, shared })) {
  if (!isDeepStrictEqual(peer.get(keys[7]), objects[7])) throw new Error(`bench setup: ${name} did not return the stored object`);
}

let cursor = 0;
let found = 0;
// One explicit loop per task: a shared helper taking the operation as a
// callback would make its call site megamorphic and slow every peer.
const tasks = {
  'arenacache get': () => {
    let i = cursor;
    for (let n = 0; n < BATCH; n++) {
      if (cache.get(keys[order[i]]) !== undefined) found++;
      if (++i === config.entries) i = 0;
    }
    cursor = i;
  },
  'lru-cache get': () => {
    let i = cursor;
    for (let n = 0; n < BATCH; n++) {
      if (lru.get(keys[order[i]]) !== undefined) found++;
      if (++i === config.entries) i = 0;
    }
    cursor = i;
  },
  'lmdb get': () => {
    let i = cursor;
    for (let n = 0; n < BATCH; n++) {
      if (plain.get(keys[order[i]]) !== undefined) found++;
      if (++i === config.entries) i = 0;
    }
    cursor = i;
  },
  'lmdb get (shared structures)': () => {
    let i = cursor;
    for (let n = 0; n < BATCH; n++) {
      if (shared.get(keys[order[i]]) !== undefined) found++;
      if (++i === config.entries) i = 0;
    }
    cursor = i;
  },
  'arenacache set': () => {
    let i = cursor;
    for (let n = 0; n < BATCH; n++) {
      const k = order[i];
      cache.set(keys[k], objects[k]);
      if (++i === config.entries) i = 0;
    }
    cursor = i;
  },
  'lru-cache set': () => {
    let i = cursor;
    for (let n = 0; n < BATCH; n++) {
      const k = order[i];
      lru.set(keys[k], objects[k]);
      if (++i === config.entries) i = 0;
    }
    cursor = i;
  },
  'lmdb putSync (txn)': () => {
    plain.transactionSync(() => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        const k = order[i];
        plain.putSync(keys[k], objects[k]);
        if (++i === config.entries) i = 0;
      }
      cursor = i;
    });
  },
};

const machine = describeMachine();
console.log(`small objects — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date}`);
const storedBytes = Math.round(cache.stats().liveBytes / config.entries);
console.log(`entries ${config.entries}, ${config.rounds} rounds of ${config.timeMs} ms per task (median shown); ${storedBytes} B per entry in the arena (record header, key, value)\n`);
const samples = Object.fromEntries(Object.keys(tasks).map((name) => [name, []]));
try {
  for (let round = 0; round < config.rounds; round++) {
    progress(`round ${round + 1}/${config.rounds}`);
    const bench = new Bench({ time: config.timeMs, warmupTime: Math.min(100, config.timeMs) });
    for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
    await bench.run();
    for (const task of bench.tasks) {
      if (task.result.state !== 'completed') throw new Error(`bench task ${task.name} did not complete: ${task.result.state}`, { cause: task.result.error });
      samples[task.name].push((BATCH * 1000) / task.result.period);
    }
  }
} finally {
  clearProgress();
  env.close();
}

/** Median µs per statSync over `files` paths in a round robin, through the inode cache. */
async function inodefsStat(files) {
  const file = path.join(dir, 'inodefs.lmdb');
  const fileOf = (i) => `/d${i % 10}/f${i}`;
  const filling = await InodeFS.open(file, { cacheSize: 0, durable: false });
  for (let d = 0; d < Math.min(10, files); d++) filling.mkdirSync(`/d${d}`);
  for (let i = 0; i < files; i++) filling.writeFileSync(fileOf(i), Buffer.alloc(100, 0x61));
  filling.close();
  const ifs = await InodeFS.open(file, { cacheSize: 4 * files + 64, durable: false });
  const paths = shuffledOrder(files).map(fileOf);
  for (const p of paths) ifs.statSync(p);
  const before = ifs.cacheStats();
  const times = [];
  for (let round = 0; round < Math.max(3, config.rounds); round++) {
    progress(`InodeFS stat, round ${round + 1}`);
    const start = performance.now();
    for (const p of paths) ifs.statSync(p);
    times.push(((performance.now() - start) * 1000) / files);
  }
  const after = ifs.cacheStats();
  const hitRate = (after.hits - before.hits) / (after.hits + after.misses - before.hits - before.misses);
  ifs.close();
  clearProgress();
  return { micros: median(times), hitRate };
}

let inodefs;
try {
  inodefs = await inodefsStat(config.inodefsFiles);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (found === 0) throw new Error('bench: no lookup found anything');
const r = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, median(list)]));
printTable([
  {
    op: 'get',
    arenacache: formatRate(r['arenacache get']),
    'lru-cache': formatRate(r['lru-cache get']),
    lmdb: formatRate(r['lmdb get']),
    'lmdb (shared structures)': formatRate(r['lmdb get (shared structures)']),
    '/lru': ratio(r['arenacache get'], r['lru-cache get']),
    '/lmdb': ratio(r['arenacache get'], r['lmdb get']),
    '/lmdb shared': ratio(r['arenacache get'], r['lmdb get (shared structures)']),
  },
  {
    op: 'set',
    arenacache: formatRate(r['arenacache set']),
    'lru-cache': formatRate(r['lru-cache set']),
    lmdb: formatRate(r['lmdb putSync (txn)']),
    'lmdb (shared structures)': '',
    '/lru': ratio(r['arenacache set'], r['lru-cache set']),
    '/lmdb': ratio(r['arenacache set'], r['lmdb putSync (txn)']),
    '/lmdb shared': '',
  },
]);
console.log(`\nInodeFS statSync of ${config.inodefsFiles} files in a round robin (the path memo misses; inode cache hit rate ${inodefs.hitRate.toFixed(3)}): ${inodefs.micros.toFixed(2)} µs per stat`);
if (json) {
  writeFileSync(json, `${JSON.stringify({ machine, config, storedBytes, results: r, samples, inodefs }, null, 2)}\n`);
  console.log(`\nwrote ${json}`);
}

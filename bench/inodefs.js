// npm run bench:inodefs — InodeFS against node:fs on a real directory, in
// one run: the path operations (stat of one file and of 100 random
// files with the inode cache on and off, create-and-write, a read-heavy
// 95/5 mix, snapshot creation), persistent snapshot creation as the tree
// grows, and a hit-rate table (cache size x working set, LRU,
// uniform and Zipf access) from real runs.
//
// Environment: BENCH_TIME_MS (300), BENCH_ROUNDS (3), BENCH_FILES (1000),
// BENCH_TREE_SIZES (1000,10000,100000), BENCH_HIT_OPS (20000), BENCH_DIR
// (the system temp directory), BENCH_JSON=path (or --json path).

import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Bench } from 'tinybench';
import { InodeFS } from '../lib/inode-fs/index.js';
import { intList, jsonPath, positiveInt } from './lib/env.js';
import { formatRate, printTable, ratio } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { zipfSampler } from './lib/zipf.js';
import { median } from './lib/stats.js';
import { progressReporter } from './lib/progress.js';

const { progress, done: clearProgress } = progressReporter();

const config = {
  timeMs: positiveInt('BENCH_TIME_MS', 300),
  rounds: positiveInt('BENCH_ROUNDS', 3),
  files: positiveInt('BENCH_FILES', 1000),
  treeSizes: intList('BENCH_TREE_SIZES', [1000, 10_000, 100_000]),
  hitOps: positiveInt('BENCH_HIT_OPS', 20_000),
  dir: process.env.BENCH_DIR ?? os.tmpdir(),
};
const json = jsonPath();
const scratch = mkdtempSync(path.join(config.dir, 'arenacache-inodefs-bench-'));
const machine = describeMachine();
const body = Buffer.alloc(1024, 0x61);
const fileOf = (i) => `/d${i % 10}/f${i}`;

/** A store of `files` files of 1 KB in 10 directories (filled without fsync, then reopened with `options`). */
async function filledStore(name, files, options) {
  const file = path.join(scratch, `${name}.lmdb`);
  const filling = await InodeFS.open(file, { cacheSize: 0, durable: false });
  for (let d = 0; d < Math.min(10, files); d++) filling.mkdirSync(`/d${d}`);
  for (let i = 0; i < files; i++) filling.writeFileSync(fileOf(i), body);
  filling.close();
  return InodeFS.open(file, options);
}

function diskTree(files) {
  const root = path.join(scratch, 'disk');
  for (let d = 0; d < Math.min(10, files); d++) mkdirSync(path.join(root, `d${d}`), { recursive: true });
  for (let i = 0; i < files; i++) writeFileSync(path.join(root, fileOf(i)), body);
  return root;
}

/** Runs `tasks` ({ name: [fn, opsPerCall] }) for config.rounds rounds, all tasks in each; median ops/s per task. */
async function measure(title, tasks) {
  const samples = Object.fromEntries(Object.keys(tasks).map((name) => [name, []]));
  for (let round = 0; round < config.rounds; round++) {
    progress(`${title}, round ${round + 1}/${config.rounds}`);
    const bench = new Bench({ time: config.timeMs, warmupTime: Math.min(50, config.timeMs) });
    for (const [name, [fn]] of Object.entries(tasks)) bench.add(name, fn);
    await bench.run();
    for (const task of bench.tasks) {
      if (task.result.state !== 'completed') throw new Error(`${title}/${task.name} did not complete: ${task.result.state}`, { cause: task.result.error });
      samples[task.name].push((tasks[task.name][1] * 1000) / task.result.period);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}

const results = { machine, config };
try {
  const files = config.files;
  const disk = diskTree(files);
  const cached = await filledStore('cached', files, { cacheSize: 4 * files + 64 });
  const uncached = await filledStore('uncached', files, { cacheSize: 0 });
  const relaxed = await filledStore('relaxed', files, { cacheSize: 4 * files + 64, durable: false });
  const random = seededRandom(7);
  const hundred = Array.from({ length: 100 }, () => fileOf(Math.floor(random() * files)));
  const hundredOnDisk = hundred.map((p) => path.join(disk, p));
  const onDisk = path.join(disk, fileOf(0));
  const first = fileOf(0); // made once: each side looks up the same string
  for (const p of hundred) cached.statSync(p); // warm

  results.stat = await measure('stat', {
    'same: InodeFS cached': [() => cached.statSync(first), 1],
    'same: InodeFS no cache': [() => uncached.statSync(first), 1],
    'same: fs.statSync': [() => statSync(onDisk), 1],
    '100 random: InodeFS cached': [() => hundred.forEach((p) => cached.statSync(p)), 100],
    '100 random: InodeFS no cache': [() => hundred.forEach((p) => uncached.statSync(p)), 100],
    '100 random: fs.statSync': [() => hundredOnDisk.forEach((p) => statSync(p)), 100],
  });

  let created = 0;
  const newFile = () => `/d${created % 10}/new${created++}`;
  results.write = await measure('create-and-write', {
    'InodeFS (durable)': [() => cached.writeFileSync(newFile(), body), 1],
    'InodeFS (durable: false)': [() => relaxed.writeFileSync(newFile(), body), 1],
    'fs.writeFileSync': [() => writeFileSync(path.join(disk, newFile()), body), 1],
    'fs write + fsync': [
      () => {
        const fd = openSync(path.join(disk, newFile()), 'w');
        writeSync(fd, body);
        fsyncSync(fd);
        closeSync(fd);
      },
      1,
    ],
  });

  const mixRandom = seededRandom(9);
  const mix = Array.from({ length: 100 }, (_, i) => ({ write: i % 20 === 0, index: Math.floor(mixRandom() * files) }));
  const mixOn = (read, write) => () => {
    for (const { write: isWrite, index } of mix) (isWrite ? write : read)(fileOf(index));
  };
  results.mix = await measure('read-heavy 95/5', {
    'InodeFS cached (durable)': [mixOn((p) => cached.readFileSync(p), (p) => cached.writeFileSync(p, body)), 100],
    'InodeFS cached (durable: false)': [mixOn((p) => relaxed.readFileSync(p), (p) => relaxed.writeFileSync(p, body)), 100],
    'InodeFS no cache (durable)': [mixOn((p) => uncached.readFileSync(p), (p) => uncached.writeFileSync(p, body)), 100],
    'node:fs': [mixOn((p) => readFileSync(path.join(disk, p)), (p) => writeFileSync(path.join(disk, p), body)), 100],
  });

  results.snapshot = await measure('snapshot creation', {
    'ephemeral: createSnapshot + release': [() => cached.createSnapshot('bench').release(), 1],
  });
  results.cacheStats = cached.cacheStats();
  for (const ifs of [cached, uncached, relaxed]) ifs.close();

  results.persistent = await persistentCreation();
  results.hitRates = await hitRates();
} finally {
  rmSync(scratch, { recursive: true, force: true });
  clearProgress();
}

/**
 * Persistent snapshot creation as the tree grows: the median time of one
 * createSnapshot(name, { persist: true }) after 10 files changed, and the
 * first write of a file after it (which copies the file's record to history).
 */
async function persistentCreation() {
  const rows = [];
  for (const size of config.treeSizes) {
    progress(`persistent snapshots, ${size} files`);
    const ifs = await filledStore(`tree-${size}`, size, { cacheSize: 1000, durable: false });
    const creates = [];
    const firstWrites = [];
    for (let i = 0; i < 31; i++) {
      for (let k = 0; k < 10; k++) ifs.writeFileSync(fileOf((i * 10 + k) % size), body);
      let start = process.hrtime.bigint();
      ifs.createSnapshot(`s${i}`, { persist: true });
      creates.push(Number(process.hrtime.bigint() - start) / 1000);
      start = process.hrtime.bigint();
      ifs.writeFileSync(fileOf(i % size), body);
      firstWrites.push(Number(process.hrtime.bigint() - start) / 1000);
      await ifs.deleteSnapshot(`s${i}`);
    }
    rows.push({ files: size, createMicros: median(creates), firstWriteMicros: median(firstWrites) });
    ifs.close();
  }
  return rows;
}

/**
 * The hit-rate table from real runs: stat() of files drawn from a
 * working set (uniform, or Zipf with s = 1), through an LRU inode cache of
 * the given size. Cache entries are inode records and directory entries
 * (a stat of /d3/f7 looks up 5: inodes /, /d3, /d3/f7 and two entries);
 * "stat hit rate" is the share of stats answered without a miss.
 */
async function hitRates() {
  const table = [
    [10, 100],
    [100, 100],
    [100, 1000],
    [1000, 1000],
    [1000, 5000],
  ];
  const largest = Math.max(...table.map(([, set]) => set));
  const ifs = await filledStore('hit-rates', largest, { cacheSize: 0, durable: false });
  const rows = [];
  for (const [cacheSize, workingSet] of table) {
    for (const access of ['uniform', 'zipf']) {
      progress(`hit rates: cache ${cacheSize}, working set ${workingSet}, ${access}`);
      const random = seededRandom(cacheSize * 31 + workingSet);
      const draw = access === 'uniform' ? () => Math.floor(random() * workingSet) : zipfSampler(workingSet, 1, random);
      ifs.setCacheSize(cacheSize);
      for (let i = 0; i < config.hitOps / 4; i++) ifs.statSync(fileOf(draw())); // warm
      const before = ifs.cacheStats();
      let whole = 0;
      for (let i = 0; i < config.hitOps; i++) {
        const misses = ifs.cacheStats().misses;
        ifs.statSync(fileOf(draw()));
        if (ifs.cacheStats().misses === misses) whole++;
      }
      const after = ifs.cacheStats();
      const lookups = after.hits + after.misses - before.hits - before.misses;
      rows.push({ cacheSize, workingSet, access, lookupHitRate: (after.hits - before.hits) / lookups, statHitRate: whole / config.hitOps });
    }
  }
  ifs.close();
  return rows;
}

const percent = (x) => `${(x * 100).toFixed(1)}%`;
const micros = (opsPerSecond) => `${(1e6 / opsPerSecond).toFixed(2)} µs`;
console.log(`arenacache InodeFS benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date}`);
console.log(`${config.rounds} rounds of ${config.timeMs} ms per measurement (median shown); ${config.files} files of 1 KB; files in ${config.dir}\n`);
const { stat, write, mix, snapshot } = results;
console.log('stat (operations per second, time per stat)');
printTable(
  ['same', '100 random'].map((kind) => ({
    stat: kind,
    'InodeFS cached': `${formatRate(stat[`${kind}: InodeFS cached`])} (${micros(stat[`${kind}: InodeFS cached`])})`,
    'InodeFS no cache': `${formatRate(stat[`${kind}: InodeFS no cache`])} (${micros(stat[`${kind}: InodeFS no cache`])})`,
    'fs.statSync': `${formatRate(stat[`${kind}: fs.statSync`])} (${micros(stat[`${kind}: fs.statSync`])})`,
    'cached/fs': ratio(stat[`${kind}: InodeFS cached`], stat[`${kind}: fs.statSync`]),
    'cached/no cache': ratio(stat[`${kind}: InodeFS cached`], stat[`${kind}: InodeFS no cache`]),
  })),
);
console.log('\ncreate-and-write of 1 KB files (operations per second)');
printTable(Object.entries(write).map(([name, ops]) => ({ writer: name, 'ops/s': formatRate(ops), time: micros(ops), 'vs fs write + fsync': ratio(ops, write['fs write + fsync']) })));
console.log('\nread-heavy mix: 95% readFile, 5% writeFile of 1 KB files (operations per second)');
printTable(Object.entries(mix).map(([name, ops]) => ({ layer: name, 'ops/s': formatRate(ops), 'vs node:fs': ratio(ops, mix['node:fs']) })));
console.log(`\nephemeral snapshot creation (createSnapshot + release): ${micros(snapshot['ephemeral: createSnapshot + release'])}`);
console.log('\npersistent snapshot creation as the tree grows (durable: false; median of 31, after 10 files changed)');
printTable(results.persistent.map((row) => ({ files: row.files, 'createSnapshot(persist)': `${row.createMicros.toFixed(1)} µs`, 'first write after it': `${row.firstWriteMicros.toFixed(1)} µs` })));
console.log('\ninode cache hit rates (LRU; entries are inodes and directory entries)');
printTable(
  results.hitRates.map((row) => ({ 'cache size': row.cacheSize, 'working set': `${row.workingSet} files`, access: row.access, 'lookup hit rate': percent(row.lookupHitRate), 'stat hit rate': percent(row.statHitRate) })),
);
if (json) {
  writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`wrote ${json}`);
}

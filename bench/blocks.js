// npm run bench:blocks — the block write path and file-backed arenas, with
// their peers in the same run:
//
//   1. sequential writes of 4/32/64/128 KiB blocks: memcpy into a
//      SharedArrayBuffer (the ceiling), BlockStore in memory, BlockStore
//      file-backed (/dev/shm), fs.writeSync to a file;
//   2. end to end: files of 1/10/100 MB written in 32 KiB writes and handed
//      off for write-back, against memcpy and fs.writeSync;
//   3. 2 writer threads over 100 files (32 KiB writes), file-backed and
//      in-memory BlockStore against fs.writeSync;
//   4. get/set ops/s of a file-backed SharedCache against an in-memory one.
//
// Environment: BENCH_BLOCK_SIZES (4096,32768,65536,131072), BENCH_E2E_MB
// (1,10,100), BENCH_STORE_MIB (256), BENCH_TIME_MS (300), BENCH_ROUNDS (3),
// BENCH_WORKER_MS (1000), BENCH_WRITERS (2), BENCH_FILES (100),
// BENCH_ENTRIES (20000), BENCH_PAYLOADS (64,1024), BENCH_DIR for the arena
// files (/dev/shm), BENCH_JSON=path (or --json path).

import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { BlockStore } from '../lib/index.js';
import { cacheOps } from './blocks/cache-ops.js';
import { endToEnd } from './blocks/end-to-end.js';
import { sequentialWrites } from './blocks/sequential.js';
import { intList, jsonPath, positiveInt } from './lib/env.js';
import { formatRate, printTable, ratio } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { progressReporter } from './lib/progress.js';

const { progress, done: clearProgress } = progressReporter();

const MiB = 2 ** 20;
const config = {
  blockSizes: intList('BENCH_BLOCK_SIZES', [4096, 32768, 65536, 131072]),
  e2eMB: intList('BENCH_E2E_MB', [1, 10, 100]),
  storeMiB: positiveInt('BENCH_STORE_MIB', 256),
  timeMs: positiveInt('BENCH_TIME_MS', 300),
  rounds: positiveInt('BENCH_ROUNDS', 3),
  workerMs: positiveInt('BENCH_WORKER_MS', 1000),
  writers: positiveInt('BENCH_WRITERS', 2),
  files: positiveInt('BENCH_FILES', 100),
  entries: positiveInt('BENCH_ENTRIES', 20_000),
  payloads: intList('BENCH_PAYLOADS', [64, 1024]),
  dir: process.env.BENCH_DIR ?? '/dev/shm',
};
const json = jsonPath();
const mbps = (x) => x.toFixed(0);

const machine = describeMachine();
console.log(`arenacache block write benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date}`);
console.log(`stores of ${config.storeMiB} MiB (arena files in ${config.dir}), ${config.rounds} rounds of ${config.timeMs} ms per task (median shown)\n`);

const scratch = mkdtempSync(path.join(os.tmpdir(), 'arenacache-blocks-'));
const arenaFile = (name) => path.join(config.dir, `arenacache-bench-${process.pid}-${name}.arena`);
const storeBytes = config.storeMiB * MiB;
const blockBytes = 64 * 1024;
const stores = {
  memory: new BlockStore({ memoryBytes: storeBytes, blockBytes }),
  file: BlockStore.open(arenaFile('blocks'), { memoryBytes: storeBytes, blockBytes, reset: true }),
};
// A fresh SharedArrayBuffer is faulted in page by page on first write, while
// the mapped file is prefaulted when opened: touch every page of the
// in-memory store and of the memcpy target once (writing back the byte that
// is there), so that all of them start warm.
const ceiling = new Uint8Array(new SharedArrayBuffer(storeBytes / 2));
ceiling.fill(1);
const memoryPages = new Uint8Array(stores.memory.handle.buffer);
// eslint-disable-next-line no-self-assign -- the write is the point: it faults the page in
for (let i = 0; i < memoryPages.length; i += 4096) memoryPages[i] = memoryPages[i];

const result = { machine, config, sequential: [], endToEnd: [], concurrent: [], cacheOps: [] };
try {
  for (const size of config.blockSizes) {
    progress(`sequential ${size / 1024} KiB`);
    const row = await sequentialWrites({ size, stores, ceiling, filePath: path.join(scratch, 'sequential'), regionBytes: storeBytes / 2, timeMs: config.timeMs, rounds: config.rounds });
    result.sequential.push({ size, ...row });
  }
  for (const megabytes of config.e2eMB) {
    progress(`end to end ${megabytes} MB`);
    const fileBytes = megabytes * 1e6 - ((megabytes * 1e6) % 32768);
    const row = await endToEnd({ fileBytes, size: 32768, stores, ceiling, filePath: path.join(scratch, 'e2e'), timeMs: config.timeMs, rounds: config.rounds });
    result.endToEnd.push({ megabytes, ...row });
  }
  for (const [name, kind] of [['file', 'store'], ['memory', 'store'], ['writeSync', 'fs']]) {
    progress(`${config.writers} writers over ${config.files} files: ${name}`);
    const runs = [];
    for (let round = 0; round < config.rounds; round++) runs.push(await concurrent(name, kind));
    runs.sort((a, b) => a - b);
    result.concurrent.push({ peer: name, mbps: runs[Math.floor(runs.length / 2)], runs });
  }
  for (const payload of config.payloads) {
    progress(`cache get/set, ${payload} B`);
    const row = await cacheOps({ entries: config.entries, payload, path: arenaFile('cache'), timeMs: config.timeMs, rounds: config.rounds });
    result.cacheOps.push({ payload, ...row });
  }
} finally {
  for (const store of Object.values(stores)) store.close();
  rmSync(arenaFile('blocks'), { force: true });
  rmSync(arenaFile('cache'), { force: true });
  rmSync(scratch, { recursive: true, force: true });
  clearProgress();
}

function concurrentFileBytes() {
  return Math.max(32768, Math.min(MiB, Math.floor(storeBytes / 2 / config.files / 32768) * 32768));
}

async function concurrent(name, kind) {
  const perWriter = Math.ceil(config.files / config.writers);
  // Every file is 1 MiB (32 writes of 32 KiB; less when the store is too
  // small to hold them all twice), rewritten round after round.
  const fileBytes = concurrentFileBytes();
  const barrier = new SharedArrayBuffer(8);
  const workers = Array.from({ length: config.writers }, (_, w) => {
    const files = Array.from({ length: perWriter }, (_, i) => w * perWriter + i + 1);
    const workerData = { files, fileBytes, size: 32768, durationMs: config.workerMs, barrier, parties: config.writers };
    if (kind === 'store') workerData.handle = stores[name].handle;
    else workerData.filePaths = files.map((f) => path.join(scratch, `concurrent-${f}`));
    return new Worker(new URL('./workers/block-writer.js', import.meta.url), { workerData });
  });
  const reports = await Promise.all(workers.map(async (worker) => (await once(worker, 'message'))[0]));
  if (kind === 'store') for (let f = 1; f <= perWriter * config.writers; f++) stores[name].drop(f);
  return reports.reduce((sum, { bytes, elapsedMs }) => sum + bytes / 1e6 / (elapsedMs / 1000), 0);
}

console.log('Sequential block writes (MB/s; file = file-backed BlockStore, memory = in-memory BlockStore, memcpy = plain copy into a SharedArrayBuffer)');
printTable(
  result.sequential.map((row) => ({
    block: `${row.size / 1024} KiB`,
    memcpy: mbps(row.memcpy),
    memory: mbps(row.memory),
    file: mbps(row.file),
    'fs.writeSync': mbps(row.writeSync),
    'file/memcpy': ratio(row.file, row.memcpy),
    'file/memory': ratio(row.file, row.memory),
    'file/writeSync': ratio(row.file, row.writeSync),
  })),
);
console.log('\nEnd to end: a whole file in 32 KiB writes, handed off for write-back (MB/s)');
printTable(
  result.endToEnd.map((row) => ({
    size: `${row.megabytes} MB`,
    memcpy: mbps(row.memcpy),
    memory: mbps(row.memory),
    file: mbps(row.file),
    'fs.writeSync': mbps(row.writeSync),
    'file/memcpy': ratio(row.file, row.memcpy),
    'file/writeSync': ratio(row.file, row.writeSync),
  })),
);
console.log(`\n${config.writers} writer threads over ${config.files} files of ${concurrentFileBytes() / 1024} KiB, 32 KiB writes (aggregate MB/s)`);
printTable(result.concurrent.map((row) => ({ peer: row.peer === 'file' ? 'BlockStore (file)' : row.peer === 'memory' ? 'BlockStore (memory)' : 'fs.writeSync', 'MB/s': mbps(row.mbps) })));
console.log('\nSharedCache get/set: file-backed vs in-memory (ops/s)');
printTable(
  result.cacheOps.map((row) => ({
    payload: `${row.payload} B`,
    'memory get': formatRate(row['memory get']),
    'file get': formatRate(row['file get']),
    'get file/memory': ratio(row['file get'], row['memory get']),
    'memory set': formatRate(row['memory set']),
    'file set': formatRate(row['file set']),
    'set file/memory': ratio(row['file set'], row['memory set']),
  })),
);
if (json) {
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\nwrote ${json}`);
}

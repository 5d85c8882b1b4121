// npm run bench:repair — what recovery costs and what makes it possible.
//
//   1. A dead lock holder: the time to rebuild a full shard from its rings
//      (lib/arena/entries/rebuild.js), against shard size, next to resetting it
//      (what recovery did before, losing every entry). One shard of 1, 4
//      and 16 MiB, filled with entries of 64-1024 B (random sizes, seeded)
//      until it evicts, then rebuilt BENCH_ROUNDS times under its lock as a
//      takeover would; the median is reported. The rebuild walks every
//      record, checks its key hash, re-inserts it in the dictionary and runs
//      verify() on the result.
//   2. Record checksums (file-backed caches): sets into a cache file in
//      /dev/shm with checksums and without, same keys and order, same run;
//      the checksum function against zlib's crc32 (Node's, SIMD) on record
//      sized inputs; and the check a sole opener makes of a full 64 MiB file.
// Environment: BENCH_ROUNDS (5), BENCH_TIME_MS per task and round (300),
// BENCH_JSON=path (or --json path).

import { rmSync, writeFileSync } from 'node:fs';
import zlib from 'node:zlib';
import { SharedCache } from '../lib/index.js';
import { Arena } from '../lib/arena/entries/arena.js';
import { recordChecksum } from '../lib/arena/entries/record.js';
import { jsonPath, positiveInt } from './lib/env.js';
import { formatRate, printTable, ratio } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { measureRates } from './lib/rates.js';
import { median } from './lib/stats.js';

const MiB = 2 ** 20;
const rounds = positiveInt('BENCH_ROUNDS', 5);
const taskMs = positiveInt('BENCH_TIME_MS', 300);
const json = jsonPath();

function timeMs(fn) {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

function measure(shardBytes) {
  // One shard: memoryBytes less the header and tables comes close to shardBytes of data.
  const cache = new SharedCache({ memoryBytes: shardBytes, shards: 1, nearCache: 0 });
  const random = seededRandom(shardBytes);
  const arena = Arena.attach(cache.handle.buffer);
  const shard = arena.shards[0];
  for (let i = 0; cache.stats().evictions === 0; i++) cache.set(`key:${i}`, Buffer.alloc(64 + Math.floor(random() * 960), i));
  const entries = cache.size;
  const locked = (fn) => {
    const held = arena.lock.acquire(shard);
    try {
      return timeMs(fn);
    } finally {
      arena.lock.release(shard, held);
    }
  };
  const rebuilds = [];
  for (let round = 0; round < rounds; round++) rebuilds.push(locked(() => shard.recoverFromDeadHolder()));
  if (cache.size !== entries || cache.stats().lostEntries !== 0) throw new Error('the rebuild lost entries of a healthy shard');
  const reset = locked(() => shard.reset());
  cache.close();
  return { shardMiB: shardBytes / MiB, entries, rebuildMs: median(rebuilds), resetMs: reset };
}

const machine = describeMachine();
console.log(`shard repair — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.date}`);
console.log(`rebuilding one full shard (64-1024 B values), median of ${rounds}\n`);
const rows = [1, 4, 16].map((mib) => measure(mib * MiB));
printTable(
  rows.map((row) => ({
    shard: `${row.shardMiB} MiB`,
    entries: row.entries,
    'rebuild ms': row.rebuildMs.toFixed(1),
    'µs per entry': ((row.rebuildMs * 1000) / row.entries).toFixed(2),
    'reset ms (loses all)': row.resetMs.toFixed(2),
  })),
);

const KEYS = 20_000;
const BATCH = 100;

/** Median ops/s of each task over `rounds` tinybench runs (each call does BATCH operations). */
async function rates(tasks) {
  return (await measureRates(tasks, { rounds, timeMs: taskMs, batch: BATCH })).rates;
}

function arenaFile(name) {
  const path = `/dev/shm/arenacache-bench-${process.pid}-${name}.arena`;
  rmSync(path, { force: true });
  return path;
}

/** Sets of `payload`-byte values into caches with and without record checksums, one run. */
async function checksummedSets(payload) {
  const random = seededRandom(payload);
  const order = Uint32Array.from({ length: 1 << 16 }, () => Math.floor(random() * KEYS));
  const keys = Array.from({ length: KEYS }, (_, i) => `key:${i}`);
  const value = Buffer.alloc(payload, 7);
  const memoryBytes = 64 * MiB;
  const caches = {
    'file, checksums': SharedCache.open(arenaFile('on'), { memoryBytes, checksums: true, nearCache: 0 }),
    'file, no checksums': SharedCache.open(arenaFile('off'), { memoryBytes, checksums: false, nearCache: 0 }),
    memory: new SharedCache({ memoryBytes, nearCache: 0 }),
  };
  try {
    const tasks = {};
    for (const [name, cache] of Object.entries(caches)) {
      for (const key of keys) cache.set(key, value);
      let cursor = 0;
      tasks[name] = () => {
        for (let i = 0; i < BATCH; i++) cache.set(keys[order[(cursor + i) & 0xffff]], value);
        cursor = (cursor + BATCH) & 0xffff;
      };
    }
    return { payload, ...(await rates(tasks)) };
  } finally {
    for (const cache of Object.values(caches)) {
      const path = cache.path;
      cache.close();
      if (path !== null) rmSync(path, { force: true });
    }
  }
}

/** ns per call of recordChecksum and of zlib.crc32 over a view of `bytes` of shared memory. */
async function checksumSpeed(bytes) {
  const memory = new SharedArrayBuffer(1 << 20);
  const u8 = new Uint8Array(memory);
  const u32 = new Uint32Array(memory);
  crypto.getRandomValues(u8.subarray(0, 65536));
  let sink = 0;
  const result = await rates({
    recordChecksum: () => {
      for (let i = 0; i < BATCH; i++) sink ^= recordChecksum(u32, u8, (i * 8) & 0xfff8, ((i * 8) & 0xfff8) + bytes);
    },
    'zlib.crc32': () => {
      for (let i = 0; i < BATCH; i++) sink ^= zlib.crc32(new Uint8Array(memory, (i * 8) & 0xfff8, bytes));
    },
  });
  if (sink === 0.5) console.log(sink);
  return { bytes, recordChecksumNs: 1e9 / result.recordChecksum, crc32Ns: 1e9 / result['zlib.crc32'] };
}

/** ms a sole opener takes to open (and so check) a full 64 MiB cache file, with checksums and without. */
function restartCheck(checksums) {
  const path = arenaFile(`restart-${checksums}`);
  const random = seededRandom(1);
  let cache = SharedCache.open(path, { memoryBytes: 64 * MiB, checksums, nearCache: 0 });
  // stats() sums every thread's counters: asked once per 1,024 sets.
  for (let i = 0; i % 1024 !== 0 || cache.stats().evictions === 0; i++) cache.set(`key:${i}`, Buffer.alloc(64 + Math.floor(random() * 960), i));
  const entries = cache.size;
  cache.close();
  const times = [];
  for (let round = 0; round < rounds; round++) {
    times.push(timeMs(() => {
      cache = SharedCache.open(path);
    }));
    if (cache.size !== entries) throw new Error('reopening lost entries');
    cache.close();
  }
  rmSync(path, { force: true });
  return { checksums, entries, openMs: median(times) };
}

const sets = [];
for (const payload of [64, 512, 4096]) sets.push(await checksummedSets(payload));
console.log('\nSets into a file-backed cache (/dev/shm, 64 MiB, 20,000 keys): record checksums on and off, same run');
printTable(
  sets.map((row) => ({
    payload: `${row.payload} B`,
    'file, checksums': formatRate(row['file, checksums']),
    'file, no checksums': formatRate(row['file, no checksums']),
    memory: formatRate(row.memory),
    'checksums/none': ratio(row['file, checksums'], row['file, no checksums']),
  })),
);

const speeds = [];
for (const bytes of [64, 512, 4096]) speeds.push(await checksumSpeed(bytes));
console.log('\nChecksum of a record in shared memory (ns per call)');
printTable(
  speeds.map((row) => ({
    bytes: row.bytes,
    recordChecksum: row.recordChecksumNs.toFixed(0),
    'zlib.crc32': row.crc32Ns.toFixed(0),
    'GB/s (recordChecksum)': (row.bytes / row.recordChecksumNs).toFixed(2),
  })),
);

const restarts = [true, false].map(restartCheck);
console.log('\nA sole opener checks a full 64 MiB file (verify(), and each record\'s checksum when it has one)');
printTable(restarts.map((row) => ({ checksums: String(row.checksums), entries: row.entries, 'open ms': row.openMs.toFixed(1) })));

if (json) writeFileSync(json, `${JSON.stringify({ machine, rounds, rows, sets, speeds, restarts }, null, 2)}\n`);

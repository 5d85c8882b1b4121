// npm run bench:repair — what a dead lock holder costs: the time to rebuild
// a full shard from its rings (lib/arena/rebuild.js), against shard size,
// next to resetting it (what recovery did before, losing every entry).
//
// One shard of 1, 4 and 16 MiB, filled with entries of 64-1024 B (random
// sizes, seeded) until it evicts, then rebuilt BENCH_ROUNDS times under its
// lock as a takeover would; the median is reported. The rebuild walks every
// record, checks its key hash, re-inserts it in the dictionary and runs
// verify() on the result.
// Environment: BENCH_ROUNDS (5), BENCH_JSON=path (or --json path).

import { writeFileSync } from 'node:fs';
import { SharedCache } from '../lib/index.js';
import { Arena } from '../lib/arena/arena.js';
import { jsonPath, positiveInt } from './lib/env.js';
import { printTable } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { seededRandom } from './lib/random.js';
import { median } from './lib/stats.js';

const MiB = 2 ** 20;
const rounds = positiveInt('BENCH_ROUNDS', 5);
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
if (json) writeFileSync(json, `${JSON.stringify({ machine, rounds, rows }, null, 2)}\n`);

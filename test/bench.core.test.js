// npm run bench:core at tiny sizes reports every figure (single thread
// against its peers, worker threads, memory efficiency), and a bad setting
// is an error naming its variable (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { assertBenchRejects, runBench } from './helpers/bench-run.js';
import { FloorCache } from '../bench/lib/floor-cache.js';
import { seededRandom } from './helpers/seeded-random.js';

test('the core benchmark runs end to end and reports every figure (tiny sizes; speed is not asserted)', () => {
  const { output, result } = runBench('core.js', { BENCH_ENTRIES: '500', BENCH_PAYLOADS: '64,1024', BENCH_WORKERS: '1,2', BENCH_TIME_MS: '20', BENCH_ROUNDS: '1', BENCH_WORKER_MS: '50', BENCH_MEMORY_MIB: '2' });
  assert.match(output, /Single thread/);
  assert.match(output, /get\/floor/);
  assert.match(output, /set\/floor/);
  assert.match(output, /Workers, 64 B/);
  assert.match(output, /Memory efficiency/);
  // One round: no range to show, and the output says so instead of a spread.
  assert.match(output, /^One round only: there is no spread to show/m);
  assert.equal(result.worstSpread, 1);
  assert.equal(result.machine.cores > 0, true);
  assert.deepEqual(result.single.map((row) => row.payload), [64, 1024]);
  for (const row of result.single) {
    for (const task of ['arenacache get', 'lru-cache get', 'Map get', 'lmdb getBinaryFast', 'floor get', 'arenacache set', 'lru-cache set', 'Map set', 'lmdb putSync (txn)', 'floor set']) {
      assert.ok(row[task] > 0, `${task} at ${row.payload} B`);
    }
  }
  assert.deepEqual(result.multi.map((row) => `${row.workers}/${row.op}`), ['1/get', '1/set', '2/get', '2/set']);
  for (const row of result.multi) {
    assert.ok(row.arena > 0 && row.lru > 0);
    if (row.op === 'get') assert.equal(row.arenaHitRatio, 1, 'every key fits, so every read hits');
  }
  assert.equal(result.memory.length, 3);
  for (const row of result.memory) assert.ok(row.efficiency > 0 && row.efficiency < 1);
});

test('the core benchmark rejects bad settings with a message naming the variable', () => {
  assertBenchRejects('core.js', [
    ['BENCH_PAYLOADS', '64,abc', 'BENCH_PAYLOADS must be a comma-separated list of positive integers (got "64,abc")'],
    ['BENCH_ENTRIES', '-3', 'BENCH_ENTRIES must be a positive integer (got "-3")'],
  ]);
});

test('with several rounds, every core ratio shows its range and the run says how far ratios moved', () => {
  const { output, result } = runBench('core.js', { BENCH_ENTRIES: '300', BENCH_PAYLOADS: '64', BENCH_WORKERS: '1', BENCH_TIME_MS: '10', BENCH_ROUNDS: '3', BENCH_WORKER_MS: '30', BENCH_MEMORY_MIB: '2' });
  assert.match(output, /\d\.\d\d \(\d+\.\d\d-\d+\.\d\d\)/, 'a ratio with its range');
  assert.match(output, /^Ratios moved up to \d+\.\d\dx between the 3 rounds\.$/m);
  assert.ok(result.worstSpread >= 1);
  if (result.worstSpread > 1.25) assert.match(output, /^WARNING: this machine was too noisy/m);
  else assert.doesNotMatch(output, /WARNING/);
});

test('the floor cache of bench:core returns what was set, or nothing after it emptied a full shard', () => {
  // A baseline that answered wrongly would make its figures meaningless.
  const floor = new FloorCache({ memoryBytes: 8 * 2 ** 20, entries: 8000, shards: 4 });
  const model = new Map();
  const random = seededRandom(38);
  for (let i = 0; i < 50_000; i++) {
    const key = `key:${random.int(6000)}${random() < 0.05 ? 'é' : ''}`;
    if (random() < 0.5) {
      const value = Buffer.alloc(1 + random.int(300), i & 255);
      floor.set(key, value);
      model.set(key, value);
    } else {
      const got = floor.get(key);
      if (got !== undefined) assert.deepEqual(got, model.get(key), key);
    }
  }
  let found = 0;
  for (const [key, value] of model) {
    const got = floor.get(key);
    if (got === undefined) continue;
    found++;
    assert.deepEqual(got, value, key);
  }
  assert.ok(found > 1000, `most keys are still held (${found} of ${model.size})`);
});

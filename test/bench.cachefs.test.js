// npm run bench:cachefs at tiny sizes runs its seven scenarios for every file
// layer and ConcurrentReads with worker threads; ReadHit hits and ReadMiss
// really misses (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { runBench } from './helpers/bench-run.js';

test('the CacheFS benchmark runs every scenario for every layer (tiny sizes; speed is not asserted)', () => {
  const { output, result } = runBench('cachefs.js', { BENCH_TIME_MS: '10', BENCH_ROUNDS: '1', BENCH_ITERATIONS: '1', BENCH_WORKERS: '1,2', BENCH_WORKER_MS: '50' });
  assert.match(output, /File operations per second/);
  assert.match(output, /ConcurrentReads/);
  assert.deepEqual(result.scenarios.map((s) => s.name), ['ReadHit', 'ReadMiss', 'WriteThrough', 'SequentialReads', 'RandomAccess', 'EvictionLRU', 'SmallFiles']);
  for (const scenario of result.scenarios) {
    for (const layer of ['fs', 'fs sync', 'Map copy-on-read', 'CacheFS write-through', 'CacheFS write-back', 'CacheFS write-around', 'CacheFS no near cache']) assert.ok(scenario.ops[layer] > 0, `${scenario.name} ${layer}`);
  }
  const hit = result.scenarios.find((s) => s.name === 'ReadHit');
  assert.ok(hit.hitRatios['CacheFS write-through'] > 0.99, 'ReadHit hits (all but the first read)');
  const miss = result.scenarios.find((s) => s.name === 'ReadMiss');
  assert.ok(miss.hitRatios['CacheFS write-through'] < 0.5, 'ReadMiss really misses');
  assert.deepEqual(result.concurrent.map((row) => row.workers), [1, 2]);
  for (const row of result.concurrent) assert.ok(row['CacheFS (shared)'] > 0 && row['CacheFS (shared, no near cache)'] > 0, JSON.stringify(row));
});

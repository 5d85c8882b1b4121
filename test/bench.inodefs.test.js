// npm run bench:inodefs at tiny sizes runs every measurement: stat, writes,
// the mix, snapshots, persistent snapshots as the tree grows, and the inode
// cache's hit-rate table (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { runBench } from './helpers/bench-run.js';

test('the InodeFS benchmark runs every measurement (tiny sizes; speed is not asserted)', () => {
  const { output, result } = runBench('inodefs.js', { BENCH_TIME_MS: '10', BENCH_ROUNDS: '1', BENCH_FILES: '100', BENCH_TREE_SIZES: '100,200', BENCH_HIT_OPS: '200' });
  assert.match(output, /stat \(operations per second/);
  assert.match(output, /inode cache hit rates/);
  for (const group of ['stat', 'write', 'mix', 'snapshot']) {
    for (const [name, ops] of Object.entries(result[group])) assert.ok(ops > 0, `${group}: ${name}`);
  }
  assert.equal(Object.keys(result.stat).length, 6);
  assert.deepEqual(result.persistent.map((row) => row.files), [100, 200]);
  for (const row of result.persistent) assert.ok(row.createMicros > 0 && row.firstWriteMicros > 0);
  assert.equal(result.hitRates.length, 10);
  for (const row of result.hitRates) assert.ok(row.lookupHitRate >= 0 && row.lookupHitRate <= 1 && row.statHitRate <= row.lookupHitRate + 1e-9, JSON.stringify(row));
  // With the whole working set in the cache, nearly every lookup hits.
  const fits = result.hitRates.find((row) => row.cacheSize === 1000 && row.workingSet === 1000 && row.access === 'zipf');
  assert.ok(fits.lookupHitRate > 0.5, JSON.stringify(fits));
});

// npm run bench:floor at tiny sizes reports SharedCache's get and set time
// against the floor's, and a bad setting is an error naming its variable
// (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { assertBenchRejects, runBench } from './helpers/bench-run.js';

test('the floor benchmark runs end to end and reports every figure (tiny sizes; speed is not asserted)', () => {
  const { output, result } = runBench('floor.js', { BENCH_ENTRIES: '300', BENCH_PAYLOADS: '64,1024', BENCH_PAIRS: '4', BENCH_SLICE: '500', BENCH_NEAR_CACHE: 'default' });
  assert.match(output, /get\/floor/);
  assert.match(output, /set\/floor/);
  assert.equal(result.config.nearCache, 'default');
  assert.deepEqual(result.rows.map((row) => row.payload), [64, 1024]);
  for (const row of result.rows) {
    for (const figure of ['arenaGetNs', 'floorGetNs', 'arenaSetNs', 'floorSetNs', 'getRatio', 'setRatio']) {
      assert.ok(row[figure] > 0, `${figure} at ${row.payload} B`);
    }
    assert.ok(row.getRatioQuartiles[0] <= row.getRatio && row.getRatio <= row.getRatioQuartiles[1]);
  }
});

test('the floor benchmark rejects bad settings with a message naming the variable', () => {
  assertBenchRejects('floor.js', [
    ['BENCH_NEAR_CACHE', 'big', 'BENCH_NEAR_CACHE must be 0 or "default" (got "big")'],
    ['BENCH_PAIRS', '0', 'BENCH_PAIRS must be a positive integer (got "0")'],
  ]);
});

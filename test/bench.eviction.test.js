// npm run bench:eviction at tiny sizes reports every contender's rate and
// hit ratio on the read-through path of a full cache, with its ratio to
// lru-cache, and a bad setting is an error naming its variable (speed is
// not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { assertBenchRejects, runBench } from './helpers/bench-run.js';

test('the eviction benchmark runs end to end and reports every contender (tiny sizes; speed is not asserted)', () => {
  const { output, result } = runBench('eviction.js', { BENCH_KEYS: '3000', BENCH_REQUESTS: '20000', BENCH_CAPACITY: '200', BENCH_ROUNDS: '2' });
  assert.match(output, /\/lru-cache, max/);
  const contenders = ['hybrid, max', 'lru, max', 'lfu, max', 'hybrid, memory', 'lru-cache, max'];
  assert.deepEqual(Object.keys(result.rates), contenders);
  for (const name of contenders) {
    assert.equal(result.rates[name].length, 2, name);
    assert.ok(result.rates[name].every((rate) => rate > 0), name);
    // A Zipf trace over 15 times the cache: some hits, many misses (each evicts).
    assert.ok(result.hitRatios[name] > 0.05 && result.hitRatios[name] < 0.95, `${name}: ${result.hitRatios[name]}`);
  }
});

test('the eviction benchmark rejects bad settings with a message naming the variable', () => {
  assertBenchRejects('eviction.js', [
    ['BENCH_CAPACITY', '0', 'BENCH_CAPACITY must be a positive integer (got "0")'],
    ['BENCH_ZIPF', 'x', 'BENCH_ZIPF must be a positive number (got "x")'],
  ]);
});

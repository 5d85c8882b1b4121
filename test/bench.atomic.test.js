// npm run bench:atomic at tiny settings: every contender and thread count
// measured, the counts checked exact, bad settings named (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { assertBenchRejects, runBench } from './helpers/bench-run.js';

test('the atomic benchmark measures incr against its peers and checks the counts (tiny settings; speed is not asserted)', { timeout: 120_000 }, () => {
  const { output, result } = runBench('atomic.js', { BENCH_KEYS: '1000', BENCH_TIME_MS: '20', BENCH_ROUNDS: '2', BENCH_WORKER_MS: '50' });
  assert.deepEqual(result.single.map(({ workload }) => workload), ['one hot key', 'Zipf(0.99) over 1000 keys']);
  for (const { rates } of result.single) {
    for (const name of ['arenacache', 'lru-cache get+set', 'Map get+set']) {
      assert.equal(rates[name].length, 2);
      assert.ok(rates[name].every((rate) => rate > 0), `${name}: ${rates[name]}`);
    }
    // Redis rows where redis-server is installed (.ci/run installs it); skipped with the reason otherwise.
    if (result.redis !== null) assert.ok(rates['Redis INCR'].every((rate) => rate > 0));
  }
  if (result.redis === null) assert.match(output, /Redis rows skipped: /);
  assert.deepEqual(result.threads.map(({ threads }) => threads), [1, 2, 1, 2]);
  for (const row of result.threads) assert.ok(row.rate > 0 && row.increments > 0);
  assert.match(output, /^workload\s+arenacache\s+lru-cache get\+set/m);
  assert.match(output, /count exact/);
  assert.doesNotMatch(output, /NaN|undefined/);
});

test('the atomic benchmark names a bad setting', () => {
  assertBenchRejects('atomic.js', [
    ['BENCH_ROUNDS', '0', 'BENCH_ROUNDS must be a positive integer (got "0")'],
    ['BENCH_WORKERS', 'two', 'BENCH_WORKERS must be a comma-separated list of positive integers (got "two")'],
  ]);
});

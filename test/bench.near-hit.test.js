// bench/near-hit.js at tiny sizes: every get of its loop is a near hit, and
// it reports arena+near, lru-cache and the floors (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { assertBenchRejects, runBench } from './helpers/bench-run.js';

test('the near-hit benchmark runs end to end and reports every contender (tiny sizes; speed is not asserted)', () => {
  for (const kind of ['object', 'string']) {
    const { output, result } = runBench('near-hit.js', { BENCH_KIND: kind, BENCH_KEYS: '300', BENCH_GETS: '2000', BENCH_ROUNDS: '3' });
    assert.match(output, /lru-cache\/this/);
    assert.equal(result.config.kind, kind);
    assert.equal(result.nearHits, result.gets, 'every get of the timed loop is a near hit');
    assert.deepEqual(result.rows.map((row) => row.name), ['arena+near', 'lru-cache', 'floor: Map.get', 'floor: Map.get + 1 load', 'floor: index, value', 'floor: index, 24 B, 1 load']);
    for (const row of result.rows) assert.ok(row.nsPerGet > 0 && row.lruRatio > 0, row.name);
  }
});

test('the near-hit benchmark rejects bad settings with a message naming the variable', () => {
  assertBenchRejects('near-hit.js', [
    ['BENCH_KIND', 'object,string', 'BENCH_KIND must be one kind'],
    ['BENCH_ROUNDS', '0', 'BENCH_ROUNDS must be a positive integer (got "0")'],
  ]);
});

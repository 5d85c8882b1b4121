import assert from 'node:assert/strict';
import test from 'node:test';
import { runBench } from './helpers/bench-run.js';

test('the repair benchmark rebuilds a full shard of each size without losing an entry (one round; speed is not asserted)', () => {
  const { output, result } = runBench('repair.js', { BENCH_ROUNDS: '1' });
  assert.match(output, /shard\s+entries\s+rebuild ms\s+µs per entry\s+reset ms \(loses all\)/);
  assert.deepEqual(result.rows.map((row) => row.shardMiB), [1, 4, 16]);
  for (const row of result.rows) {
    assert.ok(row.entries > 1000, `${row.shardMiB} MiB: ${row.entries} entries`);
    assert.ok(row.rebuildMs > 0 && row.resetMs >= 0, `${row.shardMiB} MiB`);
  }
  // A shard four times as large holds about four times the entries.
  assert.ok(result.rows[2].entries > 3 * result.rows[1].entries);
});

// npm run bench:repair, one round: full shards of 1, 4 and 16 MiB are rebuilt
// without losing an entry, and sets with and without record checksums,
// checksum speeds and warm restarts are measured (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { runBench } from './helpers/bench-run.js';

test('the repair benchmark rebuilds a full shard of each size without losing an entry, and measures record checksums (one round; speed is not asserted)', () => {
  const { output, result } = runBench('repair.js', { BENCH_ROUNDS: '1', BENCH_TIME_MS: '20' });
  assert.match(output, /shard\s+entries\s+rebuild ms\s+µs per entry\s+reset ms \(loses all\)/);
  assert.deepEqual(result.rows.map((row) => row.shardMiB), [1, 4, 16]);
  for (const row of result.rows) {
    assert.ok(row.entries > 1000, `${row.shardMiB} MiB: ${row.entries} entries`);
    assert.ok(row.rebuildMs > 0 && row.resetMs >= 0, `${row.shardMiB} MiB`);
  }
  // A shard four times as large holds about four times the entries.
  assert.ok(result.rows[2].entries > 3 * result.rows[1].entries);
  assert.match(output, /payload\s+file, checksums\s+file, no checksums\s+memory\s+checksums\/none/);
  assert.deepEqual(result.sets.map((row) => row.payload), [64, 512, 4096]);
  for (const row of result.sets) assert.ok(row['file, checksums'] > 0 && row['file, no checksums'] > 0 && row.memory > 0, `${row.payload} B`);
  assert.deepEqual(result.speeds.map((row) => row.bytes), [64, 512, 4096]);
  for (const row of result.speeds) assert.ok(row.recordChecksumNs > 0 && row.crc32Ns > 0);
  assert.deepEqual(result.restarts.map((row) => row.checksums), [true, false]);
  for (const row of result.restarts) assert.ok(row.entries > 10_000 && row.openMs > 0);
});

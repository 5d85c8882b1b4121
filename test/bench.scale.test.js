// npm run bench:scale at tiny sizes: every figure of every size, the reopen
// after a clean close holding every entry and the one after a killed writer
// measured, the chart written, no cache file left behind; bad settings name
// their variable (speed is not asserted).
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import os from 'node:os';
import test from 'node:test';
import { assertBenchRejects, runBench } from './helpers/bench-run.js';

test('the scale benchmark measures every size end to end and leaves no file behind (tiny sizes; speed is not asserted)', () => {
  const dir = os.tmpdir();
  const { output, result, svg } = runBench('scale.js', { BENCH_SCALE_ENTRIES: '3000,6000', BENCH_SCALE_GETS: '5000', BENCH_SCALE_DIR: dir, BENCH_SCALE_SETTLE_MS: '20' });
  assert.deepEqual(result.config.sizes, [3000, 6000]);
  assert.deepEqual(result.rows.map((row) => row.entries), [3000, 6000]);
  for (const row of result.rows) {
    for (const field of ['fillPerSecond', 'getPerSecond', 'verifyMs', 'verifyCpuMs', 'usedBytes', 'rssBytes']) assert.ok(Number.isFinite(row[field]) && row[field] > 0, `${row.entries}: ${field} ${row[field]}`);
    assert.equal(row.clean.entries, row.entries, 'a clean close keeps every entry');
    assert.equal(row.clean.found, true);
    assert.ok(row.killed.entries > 0 && row.killed.entries <= row.entries, `${row.killed.entries} entries after the kill`);
    for (const reopen of [row.clean, row.killed]) {
      assert.ok(reopen.openMs > 0 && reopen.openCpuMs >= 0 && reopen.blockMs >= 0 && reopen.firstGetMs >= 0);
      assert.equal(typeof reopen.recovery, 'object');
    }
  }
  assert.match(output, /^entries\s+memoryBytes MiB\s+shards\s+B\/entry\s+used B\/entry\s+RSS MiB\s+fill sets\/s\s+random gets\/s\s+verify\(\)\s+verify\(\) CPU/m);
  assert.match(output, /after SIGKILL of a writer child mid-writes/);
  assert.match(output, /^ {2}open\(\) after a clean close$/m);
  assert.doesNotMatch(output, /NaN|undefined/);
  assert.match(svg, /^<svg/);
  assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith(`arenacache-bench-scale-`)), [], 'the cache files are removed');
});

test('the scale benchmark measures a cache in memory without the reopen figures (BENCH_SCALE_BACKING=memory)', () => {
  const { output, result } = runBench('scale.js', { BENCH_SCALE_ENTRIES: '3000', BENCH_SCALE_GETS: '3000', BENCH_SCALE_BACKING: 'memory' });
  assert.equal(result.config.backing, 'memory');
  assert.equal(result.rows.length, 1);
  assert.ok(result.rows[0].fillPerSecond > 0 && result.rows[0].verifyMs > 0);
  assert.equal(result.rows[0].clean, undefined);
  assert.match(output, /in a SharedArrayBuffer \(new SharedCache\)/);
  assert.doesNotMatch(output, /SIGKILL/);
});

test('the scale benchmark rejects bad settings with a message naming the variable', () => {
  assertBenchRejects('scale.js', [
    ['BENCH_SCALE_ENTRIES', '1e6,0', 'BENCH_SCALE_ENTRIES must be a comma-separated list of positive integers (got "1e6,0")'],
    ['BENCH_SCALE_BACKING', 'disk', 'BENCH_SCALE_BACKING must list names from file, memory (got "disk")'],
    ['BENCH_SCALE_GETS', '1.5', 'BENCH_SCALE_GETS must be a positive integer (got "1.5")'],
    ['BENCH_SCALE_BACKING', 'file,memory', 'BENCH_SCALE_BACKING must be one of file, memory (got "file,memory")'],
  ]);
});

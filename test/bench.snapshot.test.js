// npm run bench:snapshot at a small scale measures every tree (snapshot,
// re-snapshot, cloneTree, cp -a, fs.cp) and verify throughput, and goes on
// without XFS, saying why (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { runBench } from './helpers/bench-run.js';

const TREES = ['1000x1KB', '10000x1KB', '1x10MB', 'source', 'deep'];
const TIMES = ['snapshotMs', 'resnapshotMs', 'cloneTreeMs', 'cpMs', 'fsCpMs'];
const RATIOS = ['snapshotVsCp', 'cloneTreeVsCp', 'fsCpVsCp', 'resnapshotSpeedup'];
const ENGINES = ['reflink', 'copy_file_range', 'copy', 'pack', 'reused'];

function checkRows(label, rows) {
  assert.deepEqual(Object.keys(rows), TREES, label);
  for (const [tree, row] of Object.entries(rows)) {
    const where = `${label}/${tree}`;
    assert.ok(row.files > 0 && row.bytes > 0, where);
    for (const key of TIMES) assert.ok(row[key] > 0, `${where}: ${key} = ${row[key]}`);
    for (const key of RATIOS) assert.ok(row.ratios[key] > 0, `${where}: ratios.${key} = ${row.ratios[key]}`);
    if (tree === '10000x1KB') {
      assert.ok(row.snapshotDurableMs > 0, `${where}: snapshotDurableMs`);
      assert.ok(row.ratios.snapshotDurableVsCp > 0, `${where}: ratios.snapshotDurableVsCp`);
    } else assert.equal(row.snapshotDurableMs, undefined, where);
    assert.ok(['reflink', 'copy_file_range', 'copy', 'pack'].includes(row.engine), `${where}: engine ${row.engine}`);
    assert.deepEqual(Object.keys(row.counts).sort(), [...ENGINES].sort(), where);
    // The first snapshot stores every file; the second one reuses them all.
    assert.equal(ENGINES.reduce((sum, engine) => sum + row.counts[engine], 0), row.files, where);
    assert.equal(row.counts.reused, 0, where);
    assert.equal(row.resnapshotCounts.reused, row.files, where);
  }
}

test('the snapshot benchmark measures every tree and the verify throughput (tiny sizes; speed is not asserted)', () => {
  const { output, result } = runBench('snapshot.js', { BENCH_ROUNDS: '1', BENCH_SCALE: '50', BENCH_TREES: '', BENCH_VERIFY_TREES: '' });
  assert.match(output, /workspace snapshot benchmark/);
  assert.match(output, /^ext4 — /m);
  assert.match(output, /verify throughput .*warm page cache/);
  assert.ok(result.machine?.cpu && result.machine.cores > 0);
  checkRows('ext4', result.ext4);
  if (result.xfs === null) {
    assert.equal(typeof result.xfsSkipped, 'string');
    assert.ok(result.xfsSkipped.length > 0);
    assert.match(output, /xfs rows skipped: /);
  } else {
    assert.equal(result.xfsSkipped, null);
    checkRows('xfs', result.xfs);
    assert.match(output, /^xfs — /m);
  }
  assert.deepEqual(Object.keys(result.verify), ['source', '1x10MB', 'verify-200MB']);
  for (const [tree, row] of Object.entries(result.verify)) {
    for (const key of ['files', 'bytes', 'oursMs', 'sha256sumMs', 'oursMBps', 'sha256sumMBps', 'ratio']) assert.ok(row[key] > 0, `verify/${tree}: ${key} = ${row[key]}`);
  }
});

test('the snapshot benchmark goes on without XFS and says why', () => {
  const { output, result } = runBench('snapshot.js', { BENCH_ROUNDS: '1', BENCH_SCALE: '100', BENCH_XFS: '0', BENCH_TREES: 'deep', BENCH_VERIFY_TREES: '1x10MB' });
  assert.equal(result.xfs, null);
  assert.equal(result.xfsSkipped, 'BENCH_XFS=0');
  assert.match(output, /xfs rows skipped: BENCH_XFS=0/);
  assert.deepEqual(Object.keys(result.ext4), ['deep']);
  assert.deepEqual(Object.keys(result.verify), ['1x10MB']);
});

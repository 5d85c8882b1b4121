// npm run bench:objects at tiny sizes reports every peer and InodeFS's stat,
// and a small object's entry stays within 40-85 bytes (its key names are
// stored once, in the structure region).
import assert from 'node:assert/strict';
import test from 'node:test';
import { runBench } from './helpers/bench-run.js';

test('the small-object benchmark runs end to end and reports every peer (tiny sizes; speed is not asserted)', () => {
  const { output, result } = runBench('objects.js', { BENCH_ENTRIES: '300', BENCH_TIME_MS: '20', BENCH_ROUNDS: '1', BENCH_INODEFS_FILES: '50' });
  assert.match(output, /small objects/);
  assert.match(output, /^get /m);
  assert.match(output, /^set /m);
  for (const task of ['arenacache get', 'lru-cache get', 'lmdb get', 'lmdb get (shared structures)', 'arenacache set', 'lru-cache set', 'lmdb putSync (txn)']) {
    assert.ok(result.results[task] > 0, task);
  }
  assert.match(output, /InodeFS statSync of 50 files/);
  assert.ok(result.inodefs.micros > 0 && result.inodefs.hitRate > 0.5, JSON.stringify(result.inodefs));
  // The object's key names are stored once, in the structure region: an entry is its values, key and record header.
  assert.ok(result.storedBytes > 40 && result.storedBytes < 85, `${result.storedBytes} B per entry`);
});

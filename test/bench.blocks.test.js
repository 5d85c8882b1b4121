// npm run bench:blocks at tiny sizes runs end to end: sequential and
// end-to-end block writes against memcpy and writeSync, writer threads over
// several files, and cache operations file-backed against in-memory, every
// figure reported (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { nativeAvailable } from '../lib/native/addon.js';
import { runBench } from './helpers/bench-run.js';

test('the block benchmark runs end to end and reports every figure (tiny sizes; speed is not asserted)', { skip: !nativeAvailable && 'native addon unavailable' }, () => {
  const { output, result } = runBench('blocks.js', { BENCH_BLOCK_SIZES: '4096,32768', BENCH_E2E_MB: '1', BENCH_STORE_MIB: '16', BENCH_TIME_MS: '20', BENCH_ROUNDS: '1', BENCH_WORKER_MS: '50', BENCH_FILES: '10', BENCH_ENTRIES: '500', BENCH_PAYLOADS: '64' });
  for (const heading of ['Sequential block writes', 'End to end', 'writer threads over 10 files', 'file-backed vs in-memory']) assert.ok(output.includes(heading), heading);
  assert.deepEqual(result.sequential.map((row) => row.size), [4096, 32768]);
  for (const row of [...result.sequential, ...result.endToEnd]) {
    for (const peer of ['memcpy', 'memory', 'file', 'writeSync']) assert.ok(row[peer] > 0, `${peer}`);
  }
  assert.deepEqual(result.concurrent.map((row) => row.peer), ['file', 'memory', 'writeSync']);
  for (const row of result.concurrent) assert.ok(row.mbps > 0);
  for (const task of ['memory get', 'file get', 'memory set', 'file set']) assert.ok(result.cacheOps[0][task] > 0, task);
});

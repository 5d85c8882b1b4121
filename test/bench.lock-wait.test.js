// npm run bench:lock-wait, briefly: threads of two processes sharing a file,
// with verify() running, are timed call by call in both shard
// configurations, and no lock is taken over (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { nativeAvailable } from '../lib/native/addon.js';
import { runBench } from './helpers/bench-run.js';

test('the lock-wait benchmark times every call of threads in two processes sharing a file, with verify() running, in both configurations (speed is not asserted)', { skip: !nativeAvailable && 'native addon unavailable' }, () => {
  const { output, result } = runBench('lock-wait.js', { BENCH_TIME_MS: '300', BENCH_THREADS: '2' });
  assert.match(output, /configuration\s+threads\s+calls\s+p99\.9 ms\s+p99\.99 ms\s+slowest call ms\s+slowest verify\(\) ms/);
  assert.deepEqual(result.rows.map((row) => row.name), ['automatic shards (64 MiB)', 'one shard (64 MiB)']);
  for (const row of result.rows) {
    assert.equal(row.threads, 2);
    assert.ok(row.calls > 0, `${row.name}: no calls`);
    assert.ok(row.maxMs >= row.p9999Ms && row.p9999Ms >= row.p999Ms, `${row.name}: ${JSON.stringify(row)}`);
    assert.ok(row.verifyMaxMs > 0);
    // Nobody was stopped or killed: nothing was taken over. (Give-ups are counted, not asserted: they depend on the machine's load.)
    assert.ok(Number.isInteger(row.lockTimeouts) && row.lockTimeouts >= 0);
    assert.equal(row.lockRecoveries, 0);
  }
});

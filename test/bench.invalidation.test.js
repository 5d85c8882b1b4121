// npm run bench:invalidation at tiny sizes measures latency and throughput
// for each transport (UDP, and Redis when it is installed), batched and
// unbatched (speed is not asserted).
import assert from 'node:assert/strict';
import test from 'node:test';
import { runBench } from './helpers/bench-run.js';
import { redisMissing } from './helpers/redis-server.js';

test('the invalidation benchmark measures latency and throughput per transport and mode (tiny sizes; speed is not asserted)', () => {
  const { output, result } = runBench('invalidation.js', { BENCH_LATENCY_KEYS: '20', BENCH_THROUGHPUT_KEYS: '300' });
  assert.match(output, /transport\s+mode\s+p50 ms\s+p99 ms/);
  const expected = redisMissing() === null ? ['udp/batched', 'udp/unbatched', 'redis/batched', 'redis/unbatched'] : ['udp/batched', 'udp/unbatched'];
  assert.deepEqual(result.rows.map((row) => `${row.transport}/${row.mode}`), expected);
  for (const row of result.rows) {
    const where = `${row.transport}/${row.mode}`;
    assert.equal(row.latency.samples, 20, where);
    assert.ok(row.latency.p50Us > 0 && row.latency.p99Us >= row.latency.p50Us, where);
    assert.equal(row.throughput.keys, row.mode === 'unbatched' ? 30 : 300, where);
    assert.ok(row.throughput.keysPerSecond > 0, where);
    assert.ok(row.throughput.messages >= 1, where);
    // Unbatched, every key is its own message.
    if (row.mode === 'unbatched') assert.equal(row.throughput.messages, row.throughput.keys, where);
  }
});

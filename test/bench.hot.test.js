// npm run bench:hot at tiny sizes reports every figure, with or without the
// near cache; bad settings name their variable; progress lines go to a
// terminal only; and its access sequence is a seeded Zipf(s) sequence.
import assert from 'node:assert/strict';
import test from 'node:test';
import { nearCacheSupport, zipfOrder } from '../bench/lib/hot-workload.js';
import { progressReporter } from '../bench/lib/progress.js';
import { assertBenchRejects, runBench } from './helpers/bench-run.js';

const KEYS = 1000;
const NEAR = 300;

test('the hot-path benchmark runs end to end and reports every figure (tiny sizes; speed is not asserted)', () => {
  const near = nearCacheSupport();
  const { output, stderr, result } = runBench(
    'hot.js',
    { BENCH_KEYS: String(KEYS), BENCH_ACCESSES: '10000', BENCH_NEAR: String(NEAR), BENCH_TIME_MS: '10', BENCH_ROUNDS: '1', BENCH_WORKERS: '1,2', BENCH_WORKER_MS: '30' },
    { stderr: true },
  );
  assert.equal(stderr, '', 'no progress lines (nor their escape codes) when stderr is not a terminal');
  assert.doesNotMatch(output, /NaN|n\/a|undefined/);
  assert.match(output, /^One round only: there is no spread to show/m);
  assert.equal(result.worstSpread, 1);
  assert.equal(result.nearCache.supported, near.supported);
  assert.equal(result.nearCache.entries, NEAR);
  if (near.supported) assert.match(output, new RegExp(`near cache: nearCache ${NEAR} entries per SharedCache instance`));
  else assert.ok(output.includes(`near cache: not supported by this SharedCache (${near.reason}); its rows are skipped`), output);
  const arenas = near.supported ? ['arenacache+near', 'arenacache'] : ['arenacache'];
  // redis-server is started by the bench when installed; otherwise its rows are skipped with the reason printed.
  const redis = result.redis.supported ? ['redis', 'redis pipelined'] : [];
  if (result.redis.supported) assert.match(output, new RegExp(`^redis: redis-server ${result.redis.version} on 127\\.0\\.0\\.1`, 'm'));
  else assert.ok(output.includes(`redis: skipped (${result.redis.reason})`), output);

  assert.deepEqual(
    result.single.map((row) => `${row.kind}/${row.getPercent}`),
    ['object/100', 'object/90', 'buffer/100', 'buffer/90', 'string/100', 'string/90'],
  );
  for (const row of result.single) {
    assert.deepEqual(Object.keys(row.ops).sort(), [...arenas, 'lru-cache', 'lru-cache+clone', 'Map', 'lmdb', ...redis].sort(), `${row.kind}/${row.getPercent}`);
    for (const [name, ops] of Object.entries(row.ops)) assert.ok(Number.isFinite(ops) && ops > 0, `${name} at ${row.kind}/${row.getPercent}: ${ops}`);
  }

  assert.deepEqual(result.stats.map((row) => row.kind), ['object', 'buffer', 'string']);
  for (const row of result.stats) {
    assert.equal(row.entries, KEYS, `${row.kind}: every key held`);
    assert.equal(row.evictions, 0, row.kind);
    assert.equal(row.misses, 0, row.kind);
  }

  assert.deepEqual(
    result.threads.map((row) => `${row.store}/${row.op}/${row.workers}`),
    ['get', 'set'].flatMap((op) => arenas.flatMap((store) => [1, 2].map((workers) => `${store}/${op}/${workers}`))),
  );
  for (const row of result.threads) {
    assert.ok(Number.isFinite(row.opsPerSecond) && row.opsPerSecond > 0, `${row.store}/${row.op}/${row.workers}`);
    if (row.workers === 1) assert.equal(row.vsFirst, 1);
    if (row.op === 'get') assert.equal(row.hitRatio, 1, 'every key is in the cache');
  }

  const stores = [...(near.supported ? ['arenacache+near'] : []), 'lru-cache', 'arenacache'];
  assert.deepEqual(
    result.memory.map((row) => `${row.kind}/${row.store}`),
    ['object', 'buffer', 'string'].flatMap((kind) => stores.map((store) => `${kind}/${store}`)),
  );
  for (const row of result.memory) {
    for (const field of ['heapDelta', 'arrayBuffersDelta', 'rssDelta']) assert.ok(Number.isInteger(row[field]), `${row.kind}/${row.store} ${field}`);
    assert.ok(row.distinctKeysRead > NEAR && row.distinctKeysRead <= KEYS, `${row.distinctKeysRead} distinct keys`);
    assert.equal(row.entries, row.store === 'arenacache' ? 0 : NEAR, `${row.kind}/${row.store}: the lru-cache holds as many entries as the near cache may`);
  }
  assert.match(output, /Memory per thread/);
  assert.match(output, /Worker threads, 64 B Buffer/);
});

test('the hot-path benchmark skips the Redis rows with the reason printed (BENCH_REDIS=0)', () => {
  const { output, result } = runBench('hot.js', { BENCH_KEYS: '200', BENCH_ACCESSES: '2000', BENCH_KINDS: 'buffer', BENCH_MIXES: '100', BENCH_TIME_MS: '10', BENCH_ROUNDS: '1', BENCH_WORKERS: '1', BENCH_WORKER_MS: '10', BENCH_REDIS: '0' });
  assert.deepEqual(result.redis, { supported: false, version: null, pipeline: 100, reason: 'BENCH_REDIS=0' });
  assert.match(output, /^redis: skipped \(BENCH_REDIS=0\)$/m);
  assert.doesNotMatch(output, /redis×100|\/redis/);
  assert.deepEqual(Object.keys(result.single[0].ops).sort(), ['arenacache', 'arenacache+near', 'lmdb', 'lru-cache', 'lru-cache+clone', 'Map'].filter((name) => result.nearCache.supported || name !== 'arenacache+near').sort());
});

test('the hot-path benchmark rejects bad settings with a message naming the variable', () => {
  assertBenchRejects('hot.js', [
    ['BENCH_KINDS', 'object,json', 'BENCH_KINDS must list names from object, buffer, string (got "json")'],
    ['BENCH_ZIPF', '-1', 'BENCH_ZIPF must be a positive number (got "-1")'],
    ['BENCH_MIXES', '90,101', 'BENCH_MIXES must be a comma-separated list of integer percentages from 0 to 100 (got "90,101")'],
    ['BENCH_KEYS', '0', 'BENCH_KEYS must be a positive integer (got "0")'],
  ]);
});

test('progress lines are written to a terminal only', () => {
  const written = [];
  const terminal = progressReporter({ isTTY: true, write: (text) => written.push(text) });
  terminal.progress('round 1/3');
  terminal.done();
  assert.deepEqual(written, ['\r\x1b[2K… round 1/3', '\r\x1b[2K']);
  const pipe = progressReporter({ isTTY: false, write: (text) => written.push(text) });
  pipe.progress('round 1/3');
  pipe.done();
  assert.equal(written.length, 2, 'nothing written to a pipe or file');
});

test('the access sequence is Zipf(s): seeded, within the keys, the top key as frequent as 1 / H(n, s)', () => {
  const keys = 1000;
  const s = 0.99;
  const length = 200_000;
  const order = zipfOrder({ keys, s, length, seed: 7 });
  assert.deepEqual(zipfOrder({ keys, s, length: 1000, seed: 7 }), order.subarray(0, 1000), 'same seed, same sequence');
  assert.notDeepEqual(zipfOrder({ keys, s, length: 1000, seed: 8 }), order.subarray(0, 1000));
  const counts = new Uint32Array(keys);
  for (const k of order) counts[k]++;
  assert.equal(counts.reduce((a, b) => a + b, 0), length, 'every index below keys');
  let harmonic = 0;
  for (let k = 1; k <= keys; k++) harmonic += 1 / k ** s;
  const sorted = [...counts].sort((a, b) => b - a);
  for (const rank of [0, 1, 9]) {
    const expected = length / ((rank + 1) ** s * harmonic);
    assert.ok(Math.abs(sorted[rank] - expected) < expected * 0.1, `rank ${rank}: ${sorted[rank]} draws, expected about ${expected.toFixed(0)}`);
  }
  assert.ok(counts.indexOf(sorted[0]) !== 0, 'the top key is spread over the key space, not key 0');
});

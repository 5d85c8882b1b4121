// npm run bench at tiny sizes: every store runs warm-up, sets, gets and the
// latency pass, its counts add up, the chart is written, and bad settings
// are errors naming their variable (speed is not asserted).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import test from 'node:test';
import { runBench } from './helpers/bench-run.js';

test('npm run bench runs every scenario (warm-up, sets, gets, latency) and its counts add up (tiny sizes; speed is not asserted)', () => {
  const { output, result, svg, stderr } = runBench(
    'bench.js',
    { BENCH_ENTRIES: '300', BENCH_SET_OPS: '500', BENCH_GET_OPS: '900', BENCH_PAYLOADS: '64,512', BENCH_WORKERS: '1,2', BENCH_POLICIES: 'hybrid,lru', BENCH_LATENCY_OPS: '100' },
    { stderr: true },
  );
  // stderr is a pipe here: no progress line, and no escape code.
  assert.ok(!stderr.includes('\x1b') && !stderr.includes('\r'), JSON.stringify(stderr));
  for (const heading of ['Payload 64 B — one thread', 'Payload 512 B — one thread', 'Worker threads', 'wrote']) assert.ok(output.includes(heading), heading);
  assert.deepEqual(result.config.policies, ['hybrid', 'lru']);
  assert.equal(result.single.length, 2 * 5, 'two payloads × (two arenacache policies + lru-cache, Map, lmdb)');
  // Every single-thread scenario ran 3 times (BENCH_RUNS' default): ratios come with their range, and the run says how noisy it was.
  for (const row of result.single) {
    assert.equal(row.runs, 3);
    assert.equal(row.getRatios.length, 3);
    assert.equal(row.setRatios.length, 3);
  }
  assert.ok(result.worstSpread >= 1);
  assert.match(output, /get × +/);
  assert.match(output, /\d\.\d\d \(\d+\.\d\d-\d+\.\d\d\)/, 'a ratio with its range');
  assert.match(output, /^Ratios moved up to \d+\.\d\dx between the 3 runs\.$/m);
  if (result.worstSpread > 1.25) assert.match(output, /^WARNING: this machine was too noisy/m);
  for (const row of result.single) {
    assert.equal(row.counts.set, 500);
    assert.equal(row.counts.get, 900);
    assert.equal(row.counts.hit + row.counts.miss, row.counts.get, `${row.label}: hits + misses = gets`);
    for (const op of ['set', 'get']) {
      for (const field of ['avgUs', 'p50Us', 'p99Us', 'maxUs']) assert.ok(row.latency[op][field] >= 0, `${row.label} ${op} ${field}`);
      assert.ok(row.latency[op].p50Us <= row.latency[op].p99Us && row.latency[op].p99Us <= row.latency[op].maxUs);
    }
    assert.ok(row.setOpsPerSecond > 0 && row.getOpsPerSecond > 0 && row.opsPerSecond > 0);
    assert.equal(typeof row.memory.rssDelta, 'number');
    assert.equal(typeof row.memory.heapDelta, 'number');
    if (row.store === 'arenacache') {
      for (const field of ['expire', 'evictions', 'sweeps', 'sweepFreed']) assert.equal(typeof row.counts[field], 'number', field);
    }
  }
  assert.equal(result.workers.length, 2 * 2 * 3, 'two payloads × two worker counts × (two shared policies + private lru-cache)');
  for (const row of result.workers) {
    assert.equal(row.hits + row.misses, Math.ceil(900 / row.workers) * row.workers, `${row.label}: hits + misses = gets`);
    assert.ok(row.hitRatio >= 0 && row.hitRatio <= 1);
  }
  const shared = result.workers.find((row) => row.mode === 'arenacache' && row.workers === 2);
  assert.equal(shared.hitRatio, 1, 'the shared arena holds every key');
  assert.match(svg, /^<svg /);
  assert.ok(svg.includes('gets per second'));
});

test('bad benchmark settings are errors that name the variable', () => {
  const run = (env) =>
    execFileSync(process.execPath, [fileURLToPath(new URL('../bench/bench.js', import.meta.url))], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  assert.throws(() => run({ BENCH_SET_OPS: '-1' }), (error) => error.stderr.includes('BENCH_SET_OPS must be a positive integer (got "-1")'));
  assert.throws(() => run({ BENCH_POLICIES: 'mru' }), (error) => error.stderr.includes('BENCH_POLICIES must list policies from hybrid, lru, lfu, ttl (got "mru")'));
});

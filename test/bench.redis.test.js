// npm run bench:redis and npm run demo:redis at tiny settings, against a
// redis-server each starts (skipped with the reason without one): every
// contender measured, every timed tier.get a local hit (the bench checks
// it), and in the demo one load per key for the whole deployment with the
// tier. Speed is not asserted.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { nativeAvailable } from '../lib/native/addon.js';
import { runBench } from './helpers/bench-run.js';
import { redisMissing } from './helpers/redis-server.js';

const skip = redisMissing() ?? (!nativeAvailable && 'native addon unavailable');

test('the Redis tier benchmark measures a tier hit against ioredis GET and the SharedCache floor (tiny settings)', { skip, timeout: 120_000 }, () => {
  const { output, result } = runBench('redis.js', { BENCH_ROUNDS: '2', BENCH_TIME_MS: '20', BENCH_BATCH: '10' });
  assert.deepEqual(result.results.map(({ kind }) => kind), ['small object', '4 KiB string']);
  for (const { samples } of result.results) {
    for (const name of ['tier.get (hit)', 'ioredis GET + unpack', 'ioredis GET (raw)', 'SharedCache get (floor)']) {
      assert.equal(samples[name].length, 2, name);
      assert.ok(samples[name].every((rate) => rate > 0), `${name}: ${samples[name]}`);
    }
  }
  assert.match(output, /^kind\s+tier hit vs GET\+unpack\s+target >= 50x/m);
  assert.doesNotMatch(output, /NaN|undefined/);
});

test('the Redis demo: 3 hosts x 2 workers with the tier load each key once in the deployment and read Redis less than without it', { skip, timeout: 120_000 }, () => {
  const output = execFileSync(process.execPath, [fileURLToPath(new URL('../demo/redis/index.js', import.meta.url)), '--json', '--requests', '200', '--keys', '100', '--workers', '2'], { encoding: 'utf8' });
  const { runs } = JSON.parse(output);
  const [tier, plain] = runs;
  assert.deepEqual(runs.map(({ mode }) => mode), ['tier', 'plain']);
  for (const run of runs) {
    assert.equal(run.requests, 3 * 2 * 200);
    assert.deepEqual(run.errors, {});
  }
  assert.equal(tier.loaderCalls, tier.distinctKeys, 'one load per key across the 3 hosts');
  assert.ok(tier.localHits > 0);
  assert.ok(tier.commands.get < plain.commands.get, `Redis GETs with the tier ${tier.commands.get}, without ${plain.commands.get}`);
});

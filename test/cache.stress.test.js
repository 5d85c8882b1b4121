// 4 workers on overlapping keys with self-checking values (under eviction,
// relocation across many shards, and memory and entry pressure for every
// policy) never read a torn value or another key's value.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const WORKERS = 4;

async function hammer({ memoryBytes, shards, keyCount, maxLength, durationMs, policy = 'hybrid', max = 0 }) {
  const seed = testSeed();
  const cache = new SharedCache({ memoryBytes, shards, policy, max });
  const keys = Array.from({ length: keyCount }, (_, i) => `stress:${i}`);
  const stop = new SharedArrayBuffer(4);
  const workers = Array.from(
    { length: WORKERS },
    (_, i) =>
      new Worker(new URL('./fixtures/stress-worker.js', import.meta.url), {
        workerData: { handle: cache.handle, writer: i + 1, keys, maxLength, stop, seed: seed + i },
      }),
  );
  await Promise.all(workers.map((worker) => once(worker, 'message')));
  const finished = workers.map((worker) => once(worker, 'message'));
  await sleep(durationMs);
  Atomics.store(new Int32Array(stop), 0, 1);
  const counts = (await Promise.all(finished)).map(([message]) => message);
  await Promise.all(workers.map((worker) => worker.terminate()));
  const total = { ops: 0, sets: 0, hits: 0, misses: 0, deletes: 0, ok: 0, torn: 0, foreign: 0 };
  for (const count of counts) for (const name of Object.keys(total)) total[name] += count[name];
  return { cache, total, seed };
}

const durationMs = STRESS ? 20_000 : 1_500;

test('4 workers on overlapping keys with evictions never read a torn or foreign value', async () => {
  const { cache, total, seed } = await hammer({ memoryBytes: MiB, shards: 1, keyCount: 1000, maxLength: 3000, durationMs });
  const stats = cache.stats();
  console.log(`stress (one shard, evicting): ${JSON.stringify(total)}; evictions ${stats.evictions}, read retries ${stats.readRetries}, lock waits ${stats.lockWaits}`);
  assert.equal(total.torn, 0, `SEED=${seed}`);
  assert.equal(total.foreign, 0, `SEED=${seed}`);
  assert.ok(total.hits > 1000 && total.ok === total.hits);
  assert.ok(stats.evictions > 0, 'the run evicted');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('4 workers over many shards with relocation never read a torn or foreign value', async () => {
  const { cache, total, seed } = await hammer({ memoryBytes: 4 * MiB, shards: 8, keyCount: 2000, maxLength: 1500, durationMs });
  const stats = cache.stats();
  console.log(`stress (8 shards): ${JSON.stringify(total)}; evictions ${stats.evictions}, relocations ${stats.relocations}`);
  assert.equal(total.torn, 0, `SEED=${seed}`);
  assert.equal(total.foreign, 0, `SEED=${seed}`);
  assert.ok(total.hits > 1000 && total.ok === total.hits);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

for (const policy of ['lru', 'lfu', 'ttl']) {
  test(`${policy}: 4 workers on overlapping keys under memory and entry pressure read only whole values of their own key`, async () => {
    const { cache, total, seed } = await hammer({
      memoryBytes: MiB,
      shards: 2,
      keyCount: 1000,
      maxLength: 2000,
      max: 400,
      policy,
      durationMs: STRESS ? 10_000 : 600,
    });
    assert.equal(total.torn, 0, `SEED=${seed}`);
    assert.equal(total.foreign, 0, `SEED=${seed}`);
    assert.ok(total.hits > 100 && total.ok === total.hits);
    assert.ok(cache.size <= 400 + 4);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  });
}

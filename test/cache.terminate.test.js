// 200 workers (2000 with STRESS=1) terminated mid-operation never leave the
// cache stuck or wrong: every thread still works within a second and no
// survivor reads a bad value.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const victimFile = new URL('./fixtures/victim-worker.js', import.meta.url);
const probeFile = new URL('./fixtures/probe-worker.js', import.meta.url);
const TERMINATIONS = STRESS ? 2000 : 200;
const AT_ONCE = 3;

test(`${TERMINATIONS} workers terminated mid-operation never leave the cache stuck or wrong`, async () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const cache = new SharedCache({ memoryBytes: 8 * MiB, shards: 4, lockLeaseMs: 500 });
  const probeKeys = Array.from({ length: 64 }, (_, i) => `probe:${i}`);

  // Two survivors run for the whole test and count their progress.
  const survivors = [1, 2].map((writer) => {
    const progress = new SharedArrayBuffer(8);
    const worker = new Worker(victimFile, { workerData: { handle: cache.handle, writer: 1000 + writer, progress } });
    return { worker, progress: new Int32Array(progress) };
  });
  await Promise.all(survivors.map(({ worker }) => once(worker, 'message')));

  let terminated = 0;
  let writer = 1;
  async function victimLoop() {
    while (terminated < TERMINATIONS) {
      const worker = new Worker(victimFile, { workerData: { handle: cache.handle, writer: writer++ } });
      await once(worker, 'message');
      await sleep(random.int(12));
      await worker.terminate();
      terminated++;
    }
  }
  await Promise.all(Array.from({ length: AT_ONCE }, victimLoop));
  assert.ok(terminated >= TERMINATIONS);

  // Every thread still works within a second: the main thread...
  for (const key of probeKeys) {
    const start = performance.now();
    cache.set(key, 'main');
    assert.equal(cache.get(key), 'main');
    assert.ok(performance.now() - start < 1000, `main thread op on ${key} took ${performance.now() - start} ms`);
  }
  // ...a fresh worker...
  const probe = new Worker(probeFile, { workerData: { handle: cache.handle, keys: probeKeys } });
  const [{ slowest }] = await once(probe, 'message');
  assert.ok(slowest < 1000, `fresh worker's slowest op took ${slowest} ms`);
  // ...and the survivors keep making progress and never read a bad value.
  const before = survivors.map(({ progress }) => Atomics.load(progress, 0));
  await sleep(1000);
  survivors.forEach(({ progress }, i) => {
    assert.ok(Atomics.load(progress, 0) > before[i], `survivor ${i} made no progress in a second`);
    assert.equal(Atomics.load(progress, 1), 0, `survivor ${i} read a torn or foreign value`);
  });
  await Promise.all(survivors.map(({ worker }) => worker.terminate()));

  const stats = cache.stats();
  console.log(`terminations: ${terminated}, lock recoveries: ${stats.lockRecoveries}, shard repairs: ${stats.shardRepairs}, lock waits: ${stats.lockWaits}`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] }, `SEED=${seed}`);
});

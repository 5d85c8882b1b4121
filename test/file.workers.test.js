// Worker threads on a file-backed cache: attached to one mapping through the
// handle, or each with a mapping of its own (open() in every thread), whose
// lock waiters reach each other only through the shared futex.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
const workerFile = new URL('./fixtures/file-worker.js', import.meta.url);
const keys = Array.from({ length: 40 }, (_, i) => `thread:${i}`);

async function runWorkers(count, data) {
  const seed = testSeed();
  const workers = Array.from({ length: count }, (_, i) => new Worker(workerFile, { workerData: { keys, writer: i, seed: seed + i, ms: 700, maxLength: 2000, ...data(i) } }));
  const exits = workers.map((worker) => once(worker, 'exit'));
  const reports = await Promise.all(workers.map(async (worker) => (await once(worker, 'message'))[0]));
  for (const { counts, verify } of reports) {
    assert.equal(counts.torn, 0, `torn values (SEED=${seed})`);
    assert.equal(counts.foreign, 0, `foreign values (SEED=${seed})`);
    assert.ok(counts.ok > 0, 'each thread read values');
    assert.deepEqual(verify, { ok: true, problems: [] });
  }
  await Promise.all(exits);
  return reports;
}

test('workers attached to a file-backed cache through its handle share its entries', { skip }, async (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, shards: 2 });
  assert.equal(cache.handle.path, path);
  await runWorkers(3, () => ({ handle: cache.handle }));
  assert.ok(cache.stats().sets > 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  cache.close();
  // Every instance closed: the file is unmapped and unlocked, so a reset (which needs sole use) goes through.
  SharedCache.open(path, { memoryBytes: 2 * MiB, reset: true }).close();
});

test('workers that each open the file map it separately and still exclude each other', { skip }, async (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, shards: 1 });
  t.after(() => cache.close());
  await runWorkers(3, () => ({ path }));
  const stats = cache.stats();
  assert.ok(stats.lockWaits > 0, 'the threads contended for the one shard lock');
  assert.equal(stats.lockRecoveries, 0, 'no holder was ever taken for dead');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

for (const ending of ['exits', 'is terminated']) {
  test(`a worker that ${ending} without close() gives its use of the mapping back`, { skip }, async (t) => {
    const path = arenaPath(t);
    const cache = SharedCache.open(path, { memoryBytes: 2 * MiB });
    const ms = ending === 'exits' ? 50 : 60_000;
    const worker = new Worker(workerFile, { workerData: { handle: cache.handle, keys, writer: 0, seed: 1, ms, maxLength: 100, close: false } });
    const exit = once(worker, 'exit');
    if (ending === 'exits') await once(worker, 'message');
    else {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await worker.terminate();
    }
    await exit;
    cache.close();
    // Nobody uses the file any more, so it is unmapped and unlocked: a reset (which needs sole use) goes through.
    SharedCache.open(path, { memoryBytes: 2 * MiB, reset: true }).close();
  });
}

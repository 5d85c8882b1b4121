// Eviction: a full cache evicts instead of refusing a set, max bounds the
// entry count exactly (across shards and threads), entries read since the
// last pass outlive unread ones, mixed-size values fill at least 75% of
// memoryBytes, and dead copies are reclaimed before live entries.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { seededRandom, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

test('a full cache evicts instead of failing a set', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  for (let i = 0; i < 20_000; i++) cache.set(`k${i}`, Buffer.alloc(500, i & 0xff));
  // The newest entries are there; old ones were evicted; every hit is right.
  assert.deepEqual(cache.get('k19999'), Buffer.alloc(500, 19999 & 0xff));
  for (let i = 0; i < 20_000; i++) {
    const value = cache.get(`k${i}`);
    if (value !== undefined) assert.deepEqual(value, Buffer.alloc(500, i & 0xff));
  }
  assert.ok(cache.size > 1000 && cache.size < 2100, `size ${cache.size}`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('max bounds the number of entries, exactly, across shards', () => {
  for (const [memoryBytes, max] of [[4 * MiB, 64], [64 * MiB, 20_000]]) {
    const cache = new SharedCache({ memoryBytes, max });
    // Exactly max distinct keys all fit, however unevenly they hash over shards.
    for (let i = 0; i < max; i++) cache.set(`k${i}`, i);
    assert.equal(cache.size, max);
    for (let i = 0; i < max; i++) assert.equal(cache.get(`k${i}`), i);
    // Beyond max, every insert evicts.
    for (let i = max; i < 3 * max; i++) cache.set(`k${i}`, i);
    assert.equal(cache.size, max);
    assert.equal(cache.get(`k${3 * max - 1}`), 3 * max - 1);
    assert.equal(cache.stats().maxEntries, max);
    assert.equal(cache.stats().evictionsMax, 2 * max);
    assert.equal(cache.stats().evictions, 2 * max);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  }
});

test('entries read since the last pass survive eviction better than unread ones (CLOCK)', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const value = Buffer.alloc(200);
  for (let i = 0; i < 100; i++) cache.set(`hot${i}`, value);
  let hotHits = 0;
  for (let i = 0; i < 20_000; i++) {
    cache.set(`cold${i}`, value);
    if (cache.get(`hot${i % 100}`) !== undefined) hotHits++;
  }
  const hotLeft = Array.from({ length: 100 }, (_, i) => cache.has(`hot${i}`)).filter(Boolean).length;
  assert.ok(hotLeft >= 90, `${hotLeft} of 100 hot keys survived`);
  assert.ok(hotHits > 19_000, `${hotHits} hot hits`);
});

test('with values of mixed sizes (64 B to 4 KiB) live keys and values fill at least 75% of memoryBytes', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  for (const memoryBytes of [4 * MiB, 64 * MiB]) {
    const cache = new SharedCache({ memoryBytes });
    const value = Buffer.alloc(4096, 1);
    let written = 0;
    for (let i = 0; written < 3 * memoryBytes; i++) {
      const length = 64 + random.int(4096 - 64 + 1);
      cache.set(`item:${i}`, value.subarray(0, length));
      written += length;
    }
    const { liveBytes, evictions } = cache.stats();
    const efficiency = liveBytes / memoryBytes;
    assert.ok(evictions > 0);
    assert.ok(efficiency >= 0.75, `efficiency ${efficiency.toFixed(3)} at ${memoryBytes} bytes (SEED=${seed})`);
  }
});

test('overwrites and deletes do not push live entries out while there is dead space', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  // 400 entries of 1 KiB use about 40% of memory; rewriting them many times
  // fills the ring with dead copies, which must be reclaimed, not live entries.
  for (let round = 0; round < 30; round++) {
    for (let i = 0; i < 400; i++) cache.set(`k${i}`, Buffer.alloc(1000 + (round % 3) * 8, round));
  }
  assert.equal(cache.size, 400);
  assert.equal(cache.stats().evictions, 0);
  for (let i = 0; i < 400; i++) assert.equal(cache.get(`k${i}`)[0], 29);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('max holds across threads inserting at once', async () => {
  const { Worker } = await import('node:worker_threads');
  const { once } = await import('node:events');
  const cache = new SharedCache({ memoryBytes: 16 * MiB, max: 2000 });
  const workers = [1, 2, 3, 4].map(
    (id) =>
      new Worker(
        `const { workerData, parentPort } = require('node:worker_threads');
         import(workerData.lib).then(({ SharedCache }) => {
           const cache = SharedCache.attach(workerData.handle);
           for (let i = 0; i < 5000; i++) cache.set('w' + workerData.id + ':' + i, i);
           parentPort.postMessage('done');
         });`,
        { eval: true, workerData: { id, handle: cache.handle, lib: new URL('../lib/index.js', import.meta.url).href } },
      ),
  );
  await Promise.all(workers.map((worker) => once(worker, 'message')));
  await Promise.all(workers.map((worker) => worker.terminate()));
  assert.ok(cache.size <= 2000 + 4, `size ${cache.size}`);
  cache.set('one more', 1);
  assert.ok(cache.size <= 2000, `size ${cache.size} after the next insert`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

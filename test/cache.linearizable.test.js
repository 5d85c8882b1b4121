// Linearizability per key, with the near cache on and off: worker threads on
// one in-memory cache, and processes on one file-backed cache, each running
// its share of random set/delete/get operations with self-checking values.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { checkHistory, processHistories } from './helpers/history.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

/** `total` random operations on `keyCount` keys, dealt round-robin to `parties` shares. */
function randomShares(random, { total, keyCount, parties, getShare }) {
  const keys = Array.from({ length: keyCount }, (_, i) => `lin:${i}`);
  const shares = Array.from({ length: parties }, () => []);
  const setShare = (1 - getShare) * 0.8;
  for (let i = 0; i < total; i++) {
    const roll = random();
    const type = roll < setShare ? 'set' : roll < 1 - getShare ? 'delete' : 'get';
    shares[i % parties].push([type, random.pick(keys), 20 + random.int(600)]);
  }
  return shares;
}

// Read-mostly mixes give the near cache entries to answer from; write-heavy
// ones give it changes to miss. It keeps strings and objects (not Buffers).
// 10 KiB of near cache holds about 20 of the 24 keys' strings and refuses
// the longest (above 640 bytes an entry): evictions by bytes all along.
const CASES = [
  { nearCache: 0, getShare: 0.45, form: 'buffer' },
  { nearCache: 1000, getShare: 0.45, form: 'string' },
  { nearCache: 1000, getShare: 0.9, form: 'object' },
  { nearCache: 1000, nearCacheBytes: 10 * 1024, getShare: 0.9, form: 'string' },
];

for (const { nearCache, nearCacheBytes, getShare, form } of CASES) {
  const bytes = nearCacheBytes === undefined ? '' : `, nearCacheBytes ${nearCacheBytes}`;
  test(`operations split across 4 workers are linearizable per key (nearCache ${nearCache}${bytes}, ${getShare * 100}% gets, ${form} values)`, async () => {
    const seed = testSeed();
    const workers = 4;
    const shares = randomShares(seededRandom(seed), { total: STRESS ? 200_000 : 16_000, keyCount: 24, parties: workers, getShare });
    const cache = new SharedCache({ memoryBytes: 8 * MiB, nearCache });
    const clock = new SharedArrayBuffer(4);
    const barrier = new SharedArrayBuffer(8);
    const threads = shares.map(
      (ops, writer) =>
        new Worker(new URL('./fixtures/history-worker.js', import.meta.url), {
          workerData: { handle: cache.handle, ops, writer: writer + 1, clock, barrier, parties: workers, nearCache, nearCacheBytes, form },
        }),
    );
    const histories = await Promise.all(threads.map(async (worker) => (await once(worker, 'message'))[0]));
    await Promise.all(threads.map((worker) => worker.terminate()));
    const stats = cache.stats();
    assert.equal(stats.evictions, 0, 'the check assumes nothing is evicted');
    if (nearCache > 0) assert.ok(stats.nearHits > 0, 'the near cache answered some gets');
    assert.deepEqual(checkHistory(histories.flat()).slice(0, 10), [], `SEED=${seed}`);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  });
}

for (const { nearCache, nearCacheBytes, getShare, form } of CASES) {
  const bytes = nearCacheBytes === undefined ? '' : `, nearCacheBytes ${nearCacheBytes}`;
  test(`operations split across 3 processes on a cache file are linearizable per key (nearCache ${nearCache}${bytes}, ${getShare * 100}% gets, ${form} values)`, { skip: !nativeAvailable && 'needs the native addon' }, async (t) => {
    const seed = testSeed();
    const processes = 3;
    const shares = randomShares(seededRandom(seed), { total: STRESS ? 60_000 : 6_000, keyCount: 16, parties: processes, getShare });
    const path = arenaPath(t);
    const clockPath = arenaPath(t, 'clock');
    writeFileSync(clockPath, Buffer.alloc(4096), { mode: 0o600 });
    const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, nearCache, nearCacheBytes });
    t.after(() => cache.close());
    const histories = await processHistories(
      shares.map((ops, writer) => ({ path, clockPath, ops, writer: writer + 1, parties: processes, nearCache, nearCacheBytes, form })),
    );
    const stats = cache.stats();
    assert.equal(stats.evictions, 0, 'the check assumes nothing is evicted');
    if (nearCache > 0) assert.ok(stats.nearHits > 0, 'the near caches answered some gets');
    assert.deepEqual(checkHistory(histories.flat()).slice(0, 10), [], `SEED=${seed}`);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  });
}

test('the history checker catches a stale read', () => {
  const problems = checkHistory([
    { type: 'set', key: 'k', writer: 1, sequence: 1, start: 0, end: 1 },
    { type: 'set', key: 'k', writer: 1, sequence: 2, start: 2, end: 3 },
    { type: 'get', key: 'k', start: 4, end: 5, result: { writer: 1, sequence: 1 } },
    { type: 'get', key: 'k', start: 6, end: 7, result: null },
  ]);
  assert.deepEqual(problems, ['k: read at 4 saw a value overwritten at 3', 'k: miss at [6, 7] after write at [0, 1]']);
});

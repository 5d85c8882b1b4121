// Eviction policies: hybrid is the default and attached caches use the
// creator's; every policy keeps its invariants under random operations; lru,
// lfu, hybrid (scan resistance, full memory use) and ttl each evict what
// they should.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { seededRandom, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const POLICIES = ['hybrid', 'lru', 'lfu', 'ttl'];

test('the default policy is hybrid; attached caches use the creator\'s policy', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.equal(cache.stats().policy, 'hybrid');
  const lfu = new SharedCache({ memoryBytes: MiB, policy: 'lfu' });
  assert.equal(SharedCache.attach(lfu.handle).stats().policy, 'lfu');
});

test('an unknown policy is an error that lists the valid ones', () => {
  assert.throws(() => new SharedCache({ memoryBytes: MiB, policy: 'fifo' }), {
    name: 'RangeError',
    message: "options.policy must be one of 'hybrid', 'lru', 'lfu', 'ttl' (got \"fifo\")",
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, policy: 3 }), {
    name: 'TypeError',
    message: "options.policy must be a string, one of 'hybrid', 'lru', 'lfu', 'ttl' (got 3)",
  });
});

for (const policy of POLICIES) {
  test(`${policy}: random operations under memory and entry pressure keep every invariant`, () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    for (const options of [{ memoryBytes: MiB }, { memoryBytes: 4 * MiB, max: 500 }]) {
      const cache = new SharedCache({ ...options, policy });
      const model = new Map();
      for (let i = 0; i < 40_000; i++) {
        const key = `k${random.int(3000)}`;
        const roll = random();
        if (roll < 0.4) {
          const value = Buffer.alloc(1 + random.int(1500), i & 0xff);
          cache.set(key, value, random() < 0.2 ? { ttl: 5 + random.int(50) } : undefined);
          model.set(key, value);
        } else if (roll < 0.9) {
          const value = cache.get(key);
          if (value !== undefined) assert.deepEqual(value, model.get(key), `${policy} step ${i} (SEED=${seed})`);
        } else {
          cache.delete(key);
          model.delete(key);
        }
        if (i % 10_000 === 0) assert.deepEqual(cache.verify(), { ok: true, problems: [] }, `${policy} (SEED=${seed})`);
      }
      assert.deepEqual(cache.verify(), { ok: true, problems: [] }, `${policy} (SEED=${seed})`);
      if (options.max) assert.ok(cache.size <= options.max);
      assert.ok(cache.stats().evictions > 0, `${policy} evicted`);
    }
  });
}

test('lru keeps entries that are read and evicts the ones that are not', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, max: 100, policy: 'lru' });
  for (let i = 0; i < 100; i++) cache.set(`old${i}`, i);
  for (let i = 0; i < 50; i++) cache.get(`old${i}`);
  for (let i = 0; i < 50; i++) cache.set(`new${i}`, i);
  const kept = Array.from({ length: 100 }, (_, i) => cache.has(`old${i}`));
  assert.equal(kept.slice(0, 50).filter(Boolean).length, 50, 'the read half survives');
  assert.equal(kept.slice(50).filter(Boolean).length, 0, 'the unread half is evicted');
});

test('lfu keeps frequently read entries, and an old burst of reads fades', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, max: 200, policy: 'lfu' });
  cache.set('burst', 1);
  for (let i = 0; i < 100; i++) cache.get('burst'); // its count saturates
  for (let i = 0; i < 150; i++) cache.set(`steady${i}`, i);
  // Many new keys, each set once and never read, while the steady set is
  // read every round and the burst key never again.
  let steadyAfterTen = 0;
  for (let round = 0; round < 120; round++) {
    for (let i = 0; i < 150; i++) cache.get(`steady${i}`);
    for (let i = 0; i < 100; i++) cache.set(`churn${round}:${i}`, i);
    if (round === 10) {
      steadyAfterTen = Array.from({ length: 150 }, (_, i) => cache.has(`steady${i}`)).filter(Boolean).length;
      assert.equal(cache.has('burst'), true, 'the burst still counts after 10 rounds');
    }
  }
  // Sampled eviction now and then draws a sample without a cold entry, so a
  // few steady entries go (as with Redis' LFU); random eviction would have
  // removed almost all of them over 12,000 inserts.
  assert.ok(steadyAfterTen >= 130, `${steadyAfterTen} of 150 steady entries kept after 10 rounds`);
  const steady = Array.from({ length: 150 }, (_, i) => cache.has(`steady${i}`)).filter(Boolean).length;
  assert.ok(steady >= 110, `${steady} of 150 steady entries kept`);
  assert.equal(cache.has('burst'), false, 'the burst faded and was evicted');
});

test('hybrid resists a scan: entries read often survive a pass over many new keys', () => {
  for (const policy of ['hybrid', 'lru']) {
    const cache = new SharedCache({ memoryBytes: 4 * MiB, max: 1000, policy });
    for (let i = 0; i < 500; i++) cache.set(`hot${i}`, i);
    for (let round = 0; round < 3; round++) for (let i = 0; i < 500; i++) cache.get(`hot${i}`);
    for (let i = 0; i < 5000; i++) {
      cache.set(`scan${i}`, i); // each scanned key is read once, never again
      if (i % 10 === 0) cache.get(`hot${(i / 10) % 500}`);
    }
    const hot = Array.from({ length: 500 }, (_, i) => cache.has(`hot${i}`)).filter(Boolean).length;
    if (policy === 'hybrid') assert.ok(hot >= 450, `hybrid kept ${hot} of 500 hot entries`);
    else assert.ok(hot < 450, `lru kept ${hot} of 500 hot entries (the scan should hurt it)`);
  }
});

test('ttl evicts the entries closest to expiry first, entries without a ttl last', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, max: 100, shards: 1, policy: 'ttl' });
  for (let i = 0; i < 50; i++) cache.set(`forever${i}`, i);
  for (let i = 0; i < 50; i++) cache.set(`ttl${i}`, i, { ttl: 60_000 + i * 1000 });
  for (let i = 0; i < 25; i++) cache.set(`later${i}`, i, { ttl: 600_000 });
  const forever = Array.from({ length: 50 }, (_, i) => cache.has(`forever${i}`)).filter(Boolean).length;
  const soonest = Array.from({ length: 25 }, (_, i) => cache.has(`ttl${i}`)).filter(Boolean).length;
  const latest = Array.from({ length: 25 }, (_, i) => cache.has(`ttl${25 + i}`)).filter(Boolean).length;
  assert.equal(forever, 50, 'entries without a ttl are evicted last');
  assert.ok(soonest < latest, `the soonest-expiring half lost more (${25 - soonest} vs ${25 - latest} evicted)`);
  assert.equal(cache.size, 100);
});

test('hybrid fills all of memory before evicting anything', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, shards: 1 });
  let i = 0;
  while (cache.stats().evictions === 0) cache.set(`k${i++}`, Buffer.alloc(1000));
  // The first eviction comes only when the cache (not just its small ring) is full.
  assert.ok(cache.stats().liveBytes > 0.8 * cache.stats().dataBytes, `${cache.stats().liveBytes} of ${cache.stats().dataBytes}`);
});

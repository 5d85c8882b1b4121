// A randomized model test against a Map: random operation sequences, from two
// instances, with the near cache on and off, match the Map exactly without
// eviction; with eviction every hit is the latest value. Seeded: a failure
// prints SEED=<n>, which replays it.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

function randomValue(random, i) {
  switch (random.int(5)) {
    case 0:
      return `string ${i} ${'é'.repeat(random.int(20))}`;
    case 1:
      return Buffer.alloc(random.int(300), i & 0xff);
    case 2:
      return { i, list: [i, String(i)], when: new Date(i) };
    case 3:
      return i * 1.5;
    default:
      return random() < 0.5 ? null : new Map([[i, 'v']]);
  }
}

function randomKey(random) {
  const n = random.int(200);
  return n < 150 ? `key:${n}` : Buffer.from(`key:${n}`);
}

function modelKey(key) {
  return typeof key === 'string' ? `s:${key}` : `b:${key.toString('hex')}`;
}

// The near cache on (small, so that its own eviction runs too) and off.
for (const nearCache of [0, 16]) {
  test(`a random operation sequence behaves exactly like a Map (no eviction, nearCache ${nearCache})`, () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const steps = STRESS ? 500_000 : 60_000;
    const cache = new SharedCache({ memoryBytes: 4 * MiB, nearCache });
    // Another instance (another thread's view) writes a share of the operations.
    const other = SharedCache.attach(cache.handle, { nearCache });
    const model = new Map();
    const at = (i) => `step ${i} (SEED=${seed})`;
    for (let i = 0; i < steps; i++) {
      const key = randomKey(random);
      const id = modelKey(key);
      const op = random();
      const writer = random() < 0.3 ? other : cache;
      if (op < 0.35) {
        const value = randomValue(random, i);
        writer.set(key, value);
        model.set(id, value);
      } else if (op < 0.7) {
        assert.deepEqual(cache.get(key), model.get(id), at(i));
      } else if (op < 0.8) {
        assert.equal(cache.has(key), model.has(id), at(i));
      } else if (op < 0.95) {
        assert.equal(writer.delete(key), model.delete(id), at(i));
      } else if (op < 0.9995) {
        assert.equal(cache.size, model.size, at(i));
      } else {
        writer.clear();
        model.clear();
      }
    }
    if (nearCache > 0) assert.ok(cache.stats().nearHits > 0);
    const listed = new Map([...cache.entries()].map(([key, value]) => [modelKey(key), value]));
    assert.equal(listed.size, model.size);
    for (const [id, value] of model) assert.ok(isDeepStrictEqual(listed.get(id), value), `${id} (SEED=${seed})`);
    assert.equal(cache.stats().evictions, 0);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  });
}

for (const nearCache of [0, 64]) {
  test(`with eviction, every hit is the latest value and misses only ever lose entries (nearCache ${nearCache})`, () => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const steps = STRESS ? 500_000 : 60_000;
    const cache = new SharedCache({ memoryBytes: MiB, nearCache });
    const model = new Map();
    for (let i = 0; i < steps; i++) {
      const key = `key:${random.int(3000)}`;
      const op = random();
      if (op < 0.45) {
        const value = Buffer.alloc(4 + random.int(2000), i & 0xff);
        value.writeUInt32LE(i, 0);
        cache.set(key, value);
        model.set(key, value);
      } else if (op < 0.9) {
        const value = cache.get(key);
        if (value === undefined) model.delete(key); // evicted: it must stay gone
        else assert.deepEqual(value, model.get(key), `step ${i} (SEED=${seed})`);
      } else {
        // true only if it was in the model; false may also mean it was evicted.
        const deleted = cache.delete(key);
        if (!model.has(key)) assert.equal(deleted, false, `step ${i} (SEED=${seed})`);
        model.delete(key);
      }
    }
    assert.ok(cache.stats().evictions > 0);
    for (const key of cache.keys()) assert.ok(model.has(key), `${key} is listed but was evicted or deleted`);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  });
}

// The typed collections a shard check and a rebuild keep of their records
// (lib/arena/entries/record-sets.js), against Set and Map models; and the
// numbers a damaged dictionary slot can hand them.
import assert from 'node:assert/strict';
import test from 'node:test';
import { PositionSet, PositionsByKey } from '../lib/arena/entries/record-sets.js';
import { seededRandom, testSeed } from './helpers/seeded-random.js';

test('PositionSet: adds, finds and deletes positions as a Set does (seeded)', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const regionBytes = 1 << 20;
  const set = new PositionSet(regionBytes);
  const model = new Set();
  for (let i = 0; i < 20_000; i++) {
    const position = random.int(regionBytes / 8) * 8;
    const op = random.int(3);
    if (op === 0) assert.equal(set.add(position), !model.has(position), `seed ${seed}`);
    if (op === 0) model.add(position);
    if (op === 1) assert.equal(set.delete(position), model.delete(position), `seed ${seed}`);
    if (op === 2) assert.equal(set.has(position), model.has(position), `seed ${seed}`);
    assert.equal(set.size, model.size);
  }
});

test('PositionSet: a number a damaged slot can give is never taken for a position that was added', () => {
  const set = new PositionSet(1 << 20);
  set.add(8);
  set.add(0);
  // 2^32 + 8 shifted with >>> would wrap onto word 0: it must not be found.
  for (const odd of [2 ** 32 + 8, 2 ** 32, 2 ** 35 - 8, -8, 4, 8.5, NaN, Infinity, 1 << 20, (1 << 20) + 8]) {
    assert.equal(set.has(odd), false, String(odd));
    assert.equal(set.delete(odd), false, String(odd));
  }
  assert.equal(set.has(8), true);
  assert.equal(set.size, 2);
});

test('PositionsByKey: several positions per key, colliding keys, growth past the expected size (seeded)', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const byKey = new PositionsByKey(4);
  const model = new Map();
  for (let i = 0; i < 5_000; i++) {
    // Few keys, so that keys repeat and probes run through other keys' slots.
    const key = (random.int(300) * 0x10000) | 0;
    const position = i * 8;
    byKey.add(key, position);
    model.set(key, [...(model.get(key) ?? []), position]);
  }
  for (const [key, positions] of model) {
    const found = [];
    for (let slot = byKey.first(key); slot >= 0; slot = byKey.next(key, slot)) found.push(byKey.positionAt(slot));
    assert.deepEqual(found.sort((a, b) => a - b), positions, `seed ${seed}, key ${key}`);
  }
  assert.equal(byKey.first(12345), -1);
  const all = [];
  byKey.forEach((position) => all.push(position));
  assert.equal(all.length, 5_000);
  // replace() changes what a slot holds, nothing else.
  const slot = byKey.first([...model.keys()][0]);
  byKey.replace(slot, 999_992);
  assert.equal(byKey.positionAt(slot), 999_992);
  assert.equal(byKey.size, 5_000);
});

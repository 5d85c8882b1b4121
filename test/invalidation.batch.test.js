// InvalidationBatch against a model: a peer that applies the deduplicated
// batch must end where a peer that applied every invalidation in turn ends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidationBatch, keyHasPrefix } from '../lib/invalidation/batch.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';

const KEYS = ['a', 'ab', 'abc', 'b', 'ba', Buffer.from('a'), Buffer.from([0, 1]), Buffer.from([0])];
const PREFIXES = ['a', 'b', Buffer.from([0]), Buffer.from('a')];
const id = (key) => (typeof key === 'string' ? `s:${key}` : `b:${key.toString('hex')}`);

/** A peer's cache as a Map of id -> [key, value]. */
function apply(peer, { op, key, value }) {
  if (op === 'clear') peer.clear();
  else if (op === 'clearPrefix') {
    for (const [name, [stored]] of peer) if (keyHasPrefix(stored, key)) peer.delete(name);
  } else if (op === 'delete') peer.delete(id(key));
  else peer.set(id(key), [key, value]);
}

test('a deduplicated batch leaves a peer where the whole sequence would (randomized)', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const rounds = STRESS ? 20_000 : 2_000;
  for (let round = 0; round < rounds; round++) {
    const start = new Map(KEYS.filter(() => random() < 0.6).map((key) => [id(key), [key, 'initial']]));
    const sequence = [];
    const batch = new InvalidationBatch();
    for (let i = random.int(12); i >= 0; i--) {
      const roll = random();
      const invalidation =
        roll < 0.05 ? { op: 'clear' } : roll < 0.15 ? { op: 'clearPrefix', key: random.pick(PREFIXES) } : roll < 0.6 ? { op: 'delete', key: random.pick(KEYS) } : { op: 'set', key: random.pick(KEYS), value: `v${i}` };
      sequence.push(invalidation);
      batch.add(invalidation);
    }
    const stepByStep = new Map(start);
    for (const invalidation of sequence) apply(stepByStep, invalidation);
    const batched = new Map(start);
    const taken = batch.take();
    for (const invalidation of taken) apply(batched, invalidation);
    assert.deepEqual([...batched.entries()].sort(), [...stepByStep.entries()].sort(), `seed ${seed}, round ${round}: ${JSON.stringify(sequence)}`);
    assert.ok(taken.length <= sequence.length);
    assert.equal(batch.size, 0);
  }
});

test('a key written many times is sent once', () => {
  const batch = new InvalidationBatch();
  for (let i = 0; i < 100; i++) batch.add({ op: 'delete', key: `k${i % 3}` });
  assert.equal(batch.size, 3);
  batch.add({ op: 'clear' });
  assert.deepEqual(batch.take(), [{ op: 'clear' }]);
});

// The Map-like basics of SharedCache: get/set/has/delete/clear/size behave as
// Map's do (set chains, delete says whether the key existed), values of any
// size replace each other, and 20,000 keys across shards round-trip.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

test('get returns what set stored; a miss is undefined', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.equal(cache.get('absent'), undefined);
  cache.set('user:42', { name: 'Ada' });
  assert.deepEqual(cache.get('user:42'), { name: 'Ada' });
});

test('set returns the cache, so calls chain like Map#set', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.equal(cache.set('a', 'x').set('b', 'y'), cache);
  assert.equal(cache.get('a'), 'x');
  assert.equal(cache.get('b'), 'y');
});

test('set replaces the value of an existing key (same size and different size)', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', Buffer.from('first'));
  cache.set('k', Buffer.from('other'));
  assert.deepEqual(cache.get('k'), Buffer.from('other'));
  cache.set('k', Buffer.alloc(300, 1));
  assert.deepEqual(cache.get('k'), Buffer.alloc(300, 1));
  cache.set('k', 'now a string');
  assert.equal(cache.get('k'), 'now a string');
  assert.equal(cache.size, 1);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('has tells whether a key is present', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.equal(cache.has('k'), false);
  cache.set('k', 1);
  assert.equal(cache.has('k'), true);
});

test('delete returns whether the key existed, like Map#delete', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', 1);
  assert.equal(cache.delete('k'), true);
  assert.equal(cache.delete('k'), false);
  assert.equal(cache.get('k'), undefined);
  assert.equal(cache.has('k'), false);
});

test('a key can be set again after delete, without duplicates', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  for (let round = 0; round < 50; round++) {
    cache.set('k', round);
    cache.set(`other${round}`, round);
    assert.equal(cache.delete('k'), true);
  }
  cache.set('k', 'last');
  assert.equal([...cache.keys()].filter((key) => key === 'k').length, 1);
  assert.equal(cache.get('k'), 'last');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('size counts entries; clear empties the cache', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.equal(cache.size, 0);
  for (let i = 0; i < 100; i++) cache.set(`k${i}`, i);
  assert.equal(cache.size, 100);
  cache.delete('k0');
  assert.equal(cache.size, 99);
  cache.clear();
  assert.equal(cache.size, 0);
  assert.equal(cache.get('k5'), undefined);
  cache.set('after', 'clear');
  assert.equal(cache.get('after'), 'clear');
});

test('many keys across shards all round-trip', () => {
  const cache = new SharedCache({ memoryBytes: 32 * MiB });
  assert.ok(cache.stats().shards > 1);
  for (let i = 0; i < 20_000; i++) cache.set(`key:${i}`, Buffer.alloc(64, i & 0xff));
  for (let i = 0; i < 20_000; i++) assert.deepEqual(cache.get(`key:${i}`), Buffer.alloc(64, i & 0xff));
  assert.equal(cache.size, 20_000);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

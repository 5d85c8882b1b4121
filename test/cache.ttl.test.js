// ttl: an entry is served until it expires and never after, the default ttl
// (shared with attached caches), removal of expired entries when read or
// deleted, refresh on set, same-size overwrites adding or dropping a ttl,
// and errors for bad ttl and set options.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

test('an entry with a ttl is returned until it expires, then never again', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  // 300 ms: long enough that a loaded machine still reads it before expiry.
  cache.set('short', 'v', { ttl: 300 });
  cache.set('forever', 'v');
  assert.equal(cache.get('short'), 'v');
  assert.equal(cache.has('short'), true);
  await sleep(400);
  assert.equal(cache.get('short'), undefined);
  assert.equal(cache.has('short'), false);
  assert.deepEqual([...cache.keys()], ['forever']);
  assert.deepEqual([...cache.entries()], [['forever', 'v']]);
  assert.equal(cache.get('forever'), 'v');
});

test('the default ttl applies to entries set without one; ttl: 0 means no expiry', async () => {
  const cache = new SharedCache({ memoryBytes: MiB, ttl: 30 });
  cache.set('default', 1);
  cache.set('never', 2, { ttl: 0 });
  cache.set('longer', 3, { ttl: 60_000 });
  cache.set('explicit-undefined', 4, { ttl: undefined });
  await sleep(60);
  assert.equal(cache.get('default'), undefined);
  assert.equal(cache.get('explicit-undefined'), undefined);
  assert.equal(cache.get('never'), 2);
  assert.equal(cache.get('longer'), 3);
});

test('the default ttl is shared with attached caches', async () => {
  const cache = new SharedCache({ memoryBytes: MiB, ttl: 30 });
  const attached = SharedCache.attach(cache.handle);
  attached.set('k', 1);
  await sleep(60);
  assert.equal(cache.get('k'), undefined);
});

test('an expired entry is removed when read, and counted as an expiration', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', 1, { ttl: 10 });
  await sleep(30);
  assert.equal(cache.size, 1);
  assert.equal(cache.get('k'), undefined);
  assert.equal(cache.size, 0);
  const stats = cache.stats();
  assert.equal(stats.expirations, 1);
  assert.equal(stats.misses, 1);
});

test('delete of an expired entry returns false', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', 1, { ttl: 10 });
  await sleep(30);
  assert.equal(cache.delete('k'), false);
  assert.equal(cache.size, 0);
  // The bound itself is a ttl like any other.
  cache.set('k', 1, { ttl: 8998403161718784 });
  assert.equal(cache.get('k'), 1);
});

test('setting again refreshes the ttl', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', 1, { ttl: 40 });
  await sleep(25);
  cache.set('k', 2, { ttl: 40 });
  await sleep(25);
  assert.equal(cache.get('k'), 2);
});

test('bad ttl values are errors that name the option', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const range = (got) => ({
    name: 'RangeError',
    message: `options.ttl must be a number of milliseconds from 0 to 8998403161718784 (2^53 - 2^43, about 285,000 years), 0 meaning no expiry (got ${got})`,
  });
  assert.throws(() => cache.set('k', 1, { ttl: -1 }), range('-1'));
  assert.throws(() => cache.set('k', 1, { ttl: NaN }), range('NaN'));
  assert.throws(() => cache.set('k', 1, { ttl: Infinity }), range('Infinity'));
  // Number.MAX_SAFE_INTEGER, a common "forever", is just above the bound, which the message states.
  assert.throws(() => cache.set('k', 1, { ttl: Number.MAX_SAFE_INTEGER }), range(String(Number.MAX_SAFE_INTEGER)));
  assert.throws(() => cache.set('k', 1, { ttl: '10' }), {
    name: 'TypeError',
    message: 'options.ttl must be a number of milliseconds (got "10")',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, ttl: -5 }), range('-5'));
  assert.equal(cache.size, 0);
});

test('set options must be an object with only ttl', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.throws(() => cache.set('k', 1, 1000), {
    name: 'TypeError',
    message: 'options must be an object such as { ttl: 1000 } (got 1000)',
  });
  assert.throws(() => cache.set('k', 1, { tll: 5 }), {
    name: 'TypeError',
    message: 'options.tll is not a known option of set(); the known ones are ttl, staleWhileRevalidate',
  });
});

test('a same-size overwrite that adds or drops a ttl keeps the key intact', () => {
  // Without a ttl, 12 value bytes make a 32-byte record for key "k"; with a
  // ttl (8 more header bytes), 4 value bytes make a 32-byte record too.
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', Buffer.alloc(12, 1));
  cache.set('k', Buffer.alloc(4, 2), { ttl: 60_000 });
  assert.deepEqual(cache.get('k'), Buffer.alloc(4, 2));
  assert.deepEqual([...cache.keys()], ['k']);
  cache.set('k', Buffer.alloc(12, 3));
  assert.deepEqual(cache.get('k'), Buffer.alloc(12, 3));
  cache.set('k', Buffer.alloc(12, 4));
  assert.equal(cache.size, 1);
  assert.deepEqual([...cache.keys()], ['k']);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

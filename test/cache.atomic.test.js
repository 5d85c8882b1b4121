// The atomic operations one at a time: what add, replace, compareAndSet,
// incr, update, touch and take do to present, absent, expired and stale
// keys, what a version is, how they are counted, and their errors. Their
// atomicity across threads and processes: cache.atomic-concurrency.test.js.
import assert from 'node:assert/strict';
import test from 'node:test';
import { ArenaCacheError, SharedCache } from '../lib/index.js';
import { NUMBER_VALUES_VERSION } from '../lib/arena/common/layout.js';
import { MiB } from './helpers/units.js';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function newCache(options) {
  return new SharedCache({ memoryBytes: 4 * MiB, ...options });
}

test('add stores only where the key has no entry, or an expired one', async () => {
  const cache = newCache();
  assert.equal(cache.add('k', 'first'), true);
  assert.equal(cache.add('k', 'second'), false);
  assert.equal(cache.get('k'), 'first');
  cache.set('short', 'old', { ttl: 20 });
  await sleep(40);
  assert.equal(cache.add('short', { fresh: true }, { ttl: 60_000 }), true);
  assert.deepEqual(cache.get('short'), { fresh: true });
  assert.ok(cache.info('short').remainingTTL > 50_000);
});

test('a stale entry is present for add and replace; an expired one is not', async () => {
  const cache = newCache();
  cache.set('stale', 'old', { ttl: 20, staleWhileRevalidate: 60_000 });
  await sleep(40);
  assert.equal(cache.info('stale').stale, true);
  assert.equal(cache.add('stale', 'new'), false);
  assert.equal(cache.replace('stale', 'newer'), true);
  assert.equal(cache.get('stale'), 'newer');
  cache.set('gone', 'old', { ttl: 20 });
  await sleep(40);
  assert.equal(cache.replace('gone', 'new'), false);
  assert.equal(cache.get('gone'), undefined);
});

test('replace stores only over an existing entry', () => {
  const cache = newCache();
  assert.equal(cache.replace('k', 1), false);
  assert.equal(cache.has('k'), false);
  cache.set('k', 1);
  assert.equal(cache.replace('k', [1, 2]), true);
  assert.deepEqual(cache.get('k'), [1, 2]);
});

test('info().version changes on every write, a rewrite with the same bytes included, and never comes back', () => {
  const cache = newCache();
  cache.set('k', 'same');
  const first = cache.info('k').version;
  assert.ok(Number.isSafeInteger(first) && first >= 1, `version ${first}`);
  assert.equal(cache.info('k').version, first, 'reads do not change it');
  cache.get('k');
  assert.equal(cache.info('k').version, first);
  cache.set('k', 'same');
  const second = cache.info('k').version;
  assert.notEqual(second, first);
  cache.delete('k');
  cache.set('k', 'same');
  const third = cache.info('k').version;
  assert.ok(third !== first && third !== second);
  cache.clear();
  cache.set('k', 'same');
  assert.ok(![first, second, third].includes(cache.info('k').version), 'a clear does not reuse versions');
});

test('compareAndSet: the current version wins once; a stale version, another key\'s, one from before a delete, and a missing key lose', () => {
  const cache = newCache();
  cache.set('k', 'v1');
  cache.set('other', 'x');
  const v1 = cache.info('k').version;
  assert.equal(cache.compareAndSet('k', cache.info('other').version, 'wrong'), false, 'another key\'s version');
  assert.equal(cache.compareAndSet('k', v1, 'v2'), true);
  assert.equal(cache.get('k'), 'v2');
  assert.equal(cache.compareAndSet('k', v1, 'v3'), false, 'a stale version');
  const v2 = cache.info('k').version;
  cache.delete('k');
  assert.equal(cache.compareAndSet('k', v2, 'v4'), false, 'a missing key');
  cache.set('k', 'v2');
  assert.equal(cache.compareAndSet('k', v2, 'v5'), false, 'a version from before a delete');
  assert.equal(cache.get('k'), 'v2');
  const stats = cache.stats();
  assert.equal(stats.conditionalWrites, 1);
  assert.equal(stats.conditionalMisses, 4);
});

test('compareAndSet of an expired key loses', async () => {
  const cache = newCache();
  cache.set('k', 'v', { ttl: 20 });
  const version = cache.info('k').version;
  await sleep(40);
  assert.equal(cache.compareAndSet('k', version, 'late'), false);
  assert.equal(cache.get('k'), undefined);
});

test('incr counts from initial with its ttl, keeps an existing key\'s expiry, and takes negative and fractional deltas', async () => {
  const cache = newCache();
  assert.equal(cache.incr('n'), 1);
  assert.equal(cache.incr('n'), 2);
  assert.equal(cache.incr('n', -5), -3);
  assert.equal(cache.incr('n', 0.25), -2.75);
  assert.equal(cache.get('n'), -2.75);
  assert.equal(cache.incr('m', 3, { initial: 100, ttl: 60_000 }), 103);
  const expiresAt = cache.info('m').expiresAt;
  assert.ok(expiresAt > Date.now() + 50_000);
  await sleep(5);
  assert.equal(cache.incr('m', 1, { initial: 0, ttl: 1 }), 104, 'initial and ttl apply only to a new key');
  assert.equal(cache.info('m').expiresAt, expiresAt, 'an existing key keeps its expiry');
  cache.set('short', 10, { ttl: 20 });
  await sleep(40);
  assert.equal(cache.incr('short', 1, { initial: 50 }), 51, 'an expired key starts again');
  assert.equal(cache.stats().increments, 7);
});

test('incr is exact for integers up to 2^53', () => {
  const cache = newCache();
  cache.set('big', 2 ** 53 - 10);
  for (let i = 0; i < 9; i++) cache.incr('big');
  assert.equal(cache.get('big'), 2 ** 53 - 1);
  assert.equal(cache.incr('neg', -(2 ** 52)), -(2 ** 52));
});

test('incr of a key holding something else is ERR_NOT_A_NUMBER and leaves the value as it was', () => {
  const cache = newCache();
  cache.set('s', '12');
  cache.set('b', Buffer.from([1]));
  cache.set('o', { n: 1 });
  const versions = ['s', 'b', 'o'].map((key) => cache.info(key).version);
  assert.throws(() => cache.incr('s'), { name: 'ArenaCacheError', code: 'ERR_NOT_A_NUMBER', message: 'incr(): key "s" holds a string, not a number; it was left as it is' });
  assert.throws(() => cache.incr('b'), { code: 'ERR_NOT_A_NUMBER', message: 'incr(): key "b" holds bytes, not a number; it was left as it is' });
  assert.throws(() => cache.incr('o'), (error) => error instanceof ArenaCacheError && error.code === 'ERR_NOT_A_NUMBER' && /holds an object/.test(error.message));
  assert.equal(cache.get('s'), '12');
  assert.deepEqual(cache.get('b'), Buffer.from([1]));
  assert.deepEqual(cache.get('o'), { n: 1 });
  assert.deepEqual(['s', 'b', 'o'].map((key) => cache.info(key).version), versions);
});

test('numbers are stored as numbers: set and get, -0, NaN, and through every reader', () => {
  const cache = newCache();
  for (const value of [0, -0, 1.5, -1e300, NaN, Infinity, 2 ** 53]) {
    cache.set('n', value);
    assert.ok(Object.is(cache.get('n'), value), `${value}`);
    assert.ok(Object.is(cache.peek('n'), value));
    assert.ok(Object.is(cache.info('n').value, value));
  }
  cache.set('n', 7);
  assert.deepEqual([...cache.entries()], [['n', 7]]);
  assert.deepEqual(cache.getMany(['n', 'x']), [7, undefined]);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a custom codec does not see numbers; a number the codec stored (an older arena) still counts', () => {
  const seen = [];
  const codec = { name: 'json', encode: (value) => (seen.push(value), Buffer.from(JSON.stringify(value))), decode: (bytes) => JSON.parse(bytes.toString()) };
  const cache = newCache({ codec });
  cache.set('n', 5);
  assert.deepEqual(seen, []);
  assert.equal(cache.incr('n'), 6);
  // What a layout 5 arena holds: the codec's bytes of a number.
  cache.set('old', { wrapped: 1 });
  assert.throws(() => cache.incr('old'), { code: 'ERR_NOT_A_NUMBER' });
  cache.set('json', '41');
  assert.throws(() => cache.incr('json'), { code: 'ERR_NOT_A_NUMBER' });
});

test(`an arena below layout version ${NUMBER_VALUES_VERSION} (older processes may have it open) stores numbers through the codec, and incr still counts`, () => {
  const cache = newCache();
  const words = new Uint32Array(cache.handle.buffer, 0, 4);
  words[1] = NUMBER_VALUES_VERSION - 1;
  const old = SharedCache.attach(cache.handle);
  old.set('n', 1);
  assert.equal(old.incr('n'), 2);
  assert.equal(old.incr('fresh', 5, { initial: 1 }), 6);
  assert.equal(old.incr('fresh'), 7);
  assert.equal(old.get('n'), 2);
  // Stored as codec bytes (a 6-byte prefix and msgpack's one byte for 2), what older code reads; 8 as a number.
  assert.equal(old.info('n').valueBytes, 7);
  assert.deepEqual(old.verify(), { ok: true, problems: [] });
  // Once the arena is at the current version (its sole opener marks it), such a number counts on, and becomes a number.
  words[1] = NUMBER_VALUES_VERSION;
  const current = SharedCache.attach(cache.handle);
  cache.set('ttl', 1, { ttl: 60_000 });
  old.set('ttl', 1, { ttl: 60_000 });
  const expiresAt = current.info('ttl').expiresAt;
  assert.equal(current.incr('n'), 3);
  assert.equal(current.info('n').valueBytes, 8);
  assert.equal(current.incr('ttl'), 2);
  assert.ok(Math.abs(current.info('ttl').expiresAt - expiresAt) <= 2, 'its expiry is kept');
  assert.deepEqual(current.verify(), { ok: true, problems: [] });
});

test('update reads, calls fn and stores its result; undefined deletes; the value is a private copy', () => {
  const cache = newCache();
  assert.equal(cache.update('count', (n) => (n ?? 0) + 1), 1);
  assert.equal(cache.update('count', (n) => n + 1), 2);
  cache.set('o', { list: [1] });
  const stored = cache.update('o', (o) => {
    o.list.push(2);
    return o;
  });
  assert.deepEqual(stored, { list: [1, 2] });
  assert.deepEqual(cache.get('o'), { list: [1, 2] });
  assert.equal(cache.update('o', () => undefined), undefined);
  assert.equal(cache.has('o'), false);
  assert.equal(cache.update('absent', () => undefined), undefined);
  assert.equal(cache.has('absent'), false);
  cache.set('ttl', 1);
  cache.update('ttl', (n) => n + 1, { ttl: 60_000 });
  assert.ok(cache.info('ttl').remainingTTL > 50_000);
});

test('update retries when another write comes between its read and its write, and gives up with ERR_UPDATE_CONFLICT', () => {
  const cache = newCache();
  cache.set('k', 0);
  let calls = 0;
  const result = cache.update('k', (n) => {
    calls++;
    // Another writer, the first two times.
    if (calls <= 2) cache.set('k', n + 100);
    return n + 1;
  });
  assert.equal(calls, 3);
  assert.equal(result, 201);
  assert.equal(cache.get('k'), 201);
  assert.throws(
    () => cache.update('k', (n) => {
      cache.set('k', n + 1);
      return -1;
    }),
    { name: 'ArenaCacheError', code: 'ERR_UPDATE_CONFLICT', message: 'update(): key "k" was changed by other writers between each of 100 reads and the write after it; nothing was written' },
  );
  assert.notEqual(cache.get('k'), -1);
  assert.ok(cache.stats().conditionalMisses >= 100);
});

test('update of a key another writer deletes and recreates meanwhile does not overwrite it', () => {
  const cache = newCache();
  cache.set('k', 'a');
  let calls = 0;
  cache.update('k', (value) => {
    calls++;
    if (calls === 1) {
      cache.delete('k');
      cache.set('k', 'b');
    }
    return `${value}!`;
  });
  assert.equal(cache.get('k'), 'b!');
  assert.equal(calls, 2);
});

test('touch gives a new ttl without rewriting the value, keeps a stale window\'s length, and changes the version', async () => {
  const cache = newCache();
  assert.equal(cache.touch('none', 1000), false);
  cache.set('k', { v: 1 }, { ttl: 50 });
  const version = cache.info('k').version;
  assert.equal(cache.touch('k', 60_000), true);
  assert.notEqual(cache.info('k').version, version);
  await sleep(80);
  assert.deepEqual(cache.get('k'), { v: 1 });
  assert.equal(cache.touch('k', 0), true);
  assert.equal(cache.info('k').expiresAt, Infinity);
  // From no ttl to one: the record gains its time field.
  cache.set('plain', 'text');
  assert.equal(cache.touch('plain', 60_000), true);
  assert.equal(cache.get('plain'), 'text');
  assert.ok(cache.info('plain').remainingTTL > 50_000);
  cache.set('stale', 'v', { ttl: 1000, staleWhileRevalidate: 5000 });
  cache.touch('stale', 10_000);
  const info = cache.info('stale');
  assert.equal(info.expiresAt - info.staleAt, 5000);
  cache.set('short', 'v', { ttl: 20 });
  await sleep(40);
  assert.equal(cache.touch('short', 60_000), false, 'an expired key is not brought back');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('take returns the value and removes it; a second take and a get find nothing', async () => {
  const cache = newCache();
  cache.set('token', { user: 7 });
  assert.deepEqual(cache.take('token'), { user: 7 });
  assert.equal(cache.take('token'), undefined);
  assert.equal(cache.get('token'), undefined);
  cache.set('s', 'text');
  cache.set('b', Buffer.from('bytes'));
  cache.set('n', 3);
  assert.equal(cache.take('s'), 'text');
  assert.deepEqual(cache.take('b'), Buffer.from('bytes'));
  assert.equal(cache.take('n'), 3);
  cache.set('stale', 'v', { ttl: 20, staleWhileRevalidate: 60_000 });
  await sleep(40);
  assert.equal(cache.take('stale'), undefined);
  assert.equal(cache.take('stale', { allowStale: true }), 'v');
  assert.equal(cache.size, 0);
});

test('a near cache never answers with a value an atomic operation replaced or took', () => {
  const cache = newCache({ nearCache: 100 });
  const other = SharedCache.attach(cache.handle, { nearCache: 100 });
  const read = (key) => {
    for (let i = 0; i < 3; i++) cache.get(key);
    return cache.get(key);
  };
  other.set('s', 'one');
  assert.equal(read('s'), 'one');
  assert.equal(other.replace('s', 'two'), true);
  assert.equal(read('s'), 'two');
  assert.equal(other.compareAndSet('s', other.info('s').version, 'three'), true);
  assert.equal(read('s'), 'three');
  assert.equal(other.update('s', (v) => `${v}!`), 'three!');
  assert.equal(read('s'), 'three!');
  other.set('n', 1);
  assert.equal(read('n'), 1);
  other.incr('n');
  assert.equal(read('n'), 2);
  assert.equal(other.take('s'), 'three!');
  assert.equal(cache.get('s'), undefined);
  assert.ok(cache.stats().nearHits > 0);
});

test('bad arguments: each method names the argument and what it expects', () => {
  const cache = newCache();
  cache.set('k', 1);
  assert.throws(() => cache.add(17, 'v'), { name: 'TypeError', message: 'key must be a string, Buffer or Uint8Array (got 17)' });
  assert.throws(() => cache.add('k', undefined), { name: 'TypeError', message: 'value must not be undefined; use delete(key) to remove an entry' });
  assert.throws(() => cache.add('k', 'v', { ttl: -1 }), { name: 'RangeError', message: /^options\.ttl must be a number of milliseconds from 0 to .*\(got -1\)$/ });
  assert.throws(() => cache.replace('k', 'v', { allowStale: true }), { name: 'TypeError', message: 'options.allowStale is not a known option of replace(); the known ones are ttl, staleWhileRevalidate' });
  assert.throws(() => cache.compareAndSet('k', '1', 'v'), { name: 'TypeError', message: 'version must be a number, the version info(key).version gave (got "1")' });
  assert.throws(() => cache.compareAndSet('k', 0, 'v'), { name: 'RangeError', message: 'version must be a whole number from 1 to 2^53 - 1, as info(key).version gives (got 0)' });
  assert.throws(() => cache.compareAndSet('k', 2 ** 53, 'v'), { name: 'RangeError', message: 'version must be a whole number from 1 to 2^53 - 1, as info(key).version gives (got 9007199254740992)' });
  assert.throws(() => cache.incr('k', '1'), { name: 'TypeError', message: 'delta must be a number (got "1")' });
  assert.throws(() => cache.incr('k', NaN), { name: 'RangeError', message: 'delta must be a finite number (got NaN)' });
  assert.throws(() => cache.incr('k', -Infinity), { name: 'RangeError', message: 'delta must be a finite number (got -Infinity)' });
  assert.throws(() => cache.incr('k', 1, { initial: '0' }), { name: 'TypeError', message: 'options.initial must be a number (got "0")' });
  assert.throws(() => cache.incr('k', 1, { initial: Infinity }), { name: 'RangeError', message: 'options.initial must be a finite number (got Infinity)' });
  assert.throws(() => cache.incr('k', 1, { staleWhileRevalidate: 1 }), { name: 'TypeError', message: 'options.staleWhileRevalidate is not a known option of incr(); the known ones are ttl, initial' });
  assert.throws(() => cache.incr('k', 1, null), { name: 'TypeError', message: 'options must be an object such as { ttl: 1000 } (got null)' });
  assert.throws(() => cache.incr(null), { name: 'TypeError', message: 'key must be a string, Buffer or Uint8Array (got null)' });
  assert.throws(() => cache.update('k', 'not a function'), { name: 'TypeError', message: 'fn must be a function (got "not a function")' });
  assert.throws(() => cache.update('k', (n) => n, { initial: 1 }), { name: 'TypeError', message: 'options.initial is not a known option of update(); the known ones are ttl, staleWhileRevalidate' });
  assert.throws(() => cache.touch('k'), { name: 'TypeError', message: 'ttl must be a number of milliseconds (got undefined)' });
  assert.throws(() => cache.touch('k', -5), { name: 'RangeError', message: /^ttl must be a number of milliseconds from 0 to .*\(got -5\)$/ });
  assert.throws(() => cache.take('k', { ttl: 1 }), { name: 'TypeError', message: 'options.ttl is not a known option of take(); the only one is allowStale' });
  assert.throws(() => cache.take('k', { allowStale: 1 }), { name: 'TypeError', message: 'options.allowStale must be a boolean (got 1)' });
  // Nothing was written by a call that threw.
  assert.equal(cache.get('k'), 1);
  cache.close();
  for (const call of [() => cache.add('a', 1), () => cache.replace('a', 1), () => cache.compareAndSet('a', 1, 1), () => cache.incr('a'), () => cache.update('a', () => 1), () => cache.touch('a', 1), () => cache.take('a')]) {
    assert.throws(call, { code: 'ERR_CACHE_CLOSED' });
  }
});

test('an update fn that closes the cache ends with ERR_CACHE_CLOSED and writes nothing', () => {
  const cache = newCache();
  cache.set('k', 1);
  const other = SharedCache.attach(cache.handle);
  assert.throws(() => cache.update('k', (n) => (cache.close(), n + 1)), { code: 'ERR_CACHE_CLOSED' });
  assert.equal(other.get('k'), 1);
});

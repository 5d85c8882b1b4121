// Inspection and batches: peek, info, getRemainingTTL, getMany, setMany,
// deleteMany, get's allowStale, and per-call options that are checked,
// never ignored. Also arenas of layout version 3 (before stale times).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

test('peek() neither counts a get nor records a use', () => {
  const cache = new SharedCache({ memoryBytes: MiB, nearCache: 0 });
  cache.set('k', { n: 1 });
  const before = cache.stats();
  assert.deepEqual(cache.peek('k'), { n: 1 });
  assert.equal(cache.peek('missing'), undefined);
  const after = cache.stats();
  assert.equal(after.gets, before.gets);
  assert.equal(cache.info('k').policy.frequency, 0, 'no use recorded');
  cache.get('k');
  assert.equal(cache.info('k').policy.frequency, 1);
});

test('info() and getRemainingTTL() report an entry\'s times, sizes and policy state', async () => {
  const cache = new SharedCache({ memoryBytes: MiB, policy: 'lru' });
  const now = Date.now();
  cache.set('t', 'value', { ttl: 10_000, staleWhileRevalidate: 5_000 });
  cache.set('forever', Buffer.from([1, 2, 3]));
  const info = cache.info('t');
  assert.equal(info.value, 'value');
  assert.equal(info.stale, false);
  assert.ok(info.remainingTTL > 9_000 && info.remainingTTL <= 10_000, `${info.remainingTTL}`);
  assert.ok(info.staleAt >= now + 10_000 && info.staleAt <= Date.now() + 10_000);
  assert.equal(info.expiresAt, info.staleAt + 5_000);
  assert.equal(info.valueBytes, 5);
  assert.ok(info.size >= 24 + 16 + 8 + 5, `record of ${info.size} bytes`);
  assert.deepEqual(info.policy, { name: 'lru', ring: 'main', frequency: 0 });
  const forever = cache.info('forever');
  assert.deepEqual(forever.value, Buffer.from([1, 2, 3]));
  assert.equal(forever.remainingTTL, Infinity);
  assert.equal(forever.expiresAt, Infinity);
  assert.equal(cache.getRemainingTTL('forever'), Infinity);
  assert.equal(cache.getRemainingTTL('missing'), 0);
  assert.equal(cache.info('missing'), undefined);
  cache.set('soon', 'v', { ttl: 1, staleWhileRevalidate: 60_000 });
  await sleep(10);
  assert.ok(cache.getRemainingTTL('soon') < 0, 'negative while stale');
  assert.equal(cache.info('soon').stale, true);
});

test('getMany, setMany and deleteMany', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.equal(cache.setMany(new Map([['a', 1], ['b', 'two']])), cache);
  cache.setMany([['c', Buffer.from('3')]], { ttl: 60_000 });
  assert.deepEqual(cache.getMany(['a', 'b', 'c', 'missing']), [1, 'two', Buffer.from('3'), undefined]);
  assert.ok(cache.getRemainingTTL('c') > 59_000);
  assert.equal(cache.stats().gets, 4);
  assert.equal(cache.deleteMany(['a', 'missing', 'b']), 2);
  assert.deepEqual(cache.getMany(new Set(['a', 'b', 'c'])), [undefined, undefined, Buffer.from('3')]);
});

test('setMany checks every pair before storing any', () => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 4 });
  const huge = Buffer.alloc(cache.stats().maxEntryBytes + 1);
  assert.throws(() => cache.setMany([['ok', 1], [42, 2]]), { name: 'TypeError', message: 'key must be a string, Buffer or Uint8Array (got 42)' });
  assert.throws(() => cache.setMany([['ok', 1], ['gone', undefined]]), { name: 'TypeError', message: 'value must not be undefined; use delete(key) to remove an entry' });
  assert.throws(() => cache.setMany([['ok', 1], ['big', huge]]), { name: 'RangeError', message: /^value is \d+ bytes; the largest value this cache can hold/ });
  assert.throws(() => cache.setMany([['ok', 1], 'pair']), { name: 'TypeError', message: 'entries must yield [key, value] pairs (got "pair" at index 2)' });
  assert.equal(cache.get('ok'), undefined, 'nothing was stored');
  assert.equal(cache.size, 0);
});

test('batch arguments and per-call options are checked, naming what is wrong', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const cases = [
    [() => cache.getMany('abc'), TypeError, 'keys must be an iterable such as an array (got "abc")'],
    [() => cache.deleteMany(null), TypeError, 'keys must be an iterable such as an array (got null)'],
    [() => cache.setMany({}), TypeError, 'entries must be an iterable such as an array (got an instance of Object)'],
    [() => cache.get('k', { allowstale: true }), TypeError, 'options.allowstale is not a known option of get(); the only one is allowStale'],
    [() => cache.get('k', { allowStale: 'yes' }), TypeError, 'options.allowStale must be a boolean (got "yes")'],
    [() => cache.get('k', 5), TypeError, 'options must be an object such as { allowStale: true } (got 5)'],
    [() => cache.peek('k', { ttl: 1 }), TypeError, 'options.ttl is not a known option of peek(); the only one is allowStale'],
    [() => cache.getMany(['k'], { forceRefresh: true }), TypeError, 'options.forceRefresh is not a known option of getMany(); the only one is allowStale'],
    [() => cache.set('k', 1, { allowStale: true }), TypeError, 'options.allowStale is not a known option of set(); the known ones are ttl, staleWhileRevalidate'],
    [() => cache.set('k', 1, { staleWhileRevalidate: Infinity }), RangeError, 'options.staleWhileRevalidate must be a number of milliseconds from 0 to 8998403161718784 (2^53 - 2^43, about 285,000 years), 0 meaning no stale window (got Infinity)'],
    [() => cache.setMany([['k', 1]], { max: 1 }), TypeError, 'options.max is not a known option of setMany(); the known ones are ttl, staleWhileRevalidate'],
  ];
  for (const [call, type, message] of cases) assert.throws(call, { name: type.name, message });
  cache.close();
  for (const call of [() => cache.peek('k'), () => cache.info('k'), () => cache.getMany([]), () => cache.setMany([]), () => cache.deleteMany([])]) {
    assert.throws(call, { code: 'ERR_CACHE_CLOSED' });
  }
});

test('an arena of layout version 3 (before stale times) is read, and its entries get no stale window', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const words = new Uint32Array(cache.handle.buffer, 0, 4);
  words[1] = 3;
  const old = SharedCache.attach(cache.handle);
  old.set('k', 'v', { ttl: 60_000, staleWhileRevalidate: 60_000 });
  const info = old.info('k');
  assert.equal(info.expiresAt, info.staleAt, 'no stale window: an older arenacache may read this arena');
  assert.deepEqual(old.verify(), { ok: true, problems: [] });
});

test('the sole opener of a version 3 file marks it with the current version (6); stale windows work from then on', { skip: !nativeAvailable && 'native addon unavailable' }, (t) => {
  const path = arenaPath(t);
  SharedCache.open(path, { memoryBytes: MiB }).close();
  const bytes = readFileSync(path);
  bytes.writeUInt32LE(3, 4);
  writeFileSync(path, bytes);
  const cache = SharedCache.open(path);
  t.after(() => cache.close());
  assert.equal(readFileSync(path).readUInt32LE(4), 6);
  cache.set('k', 'v', { ttl: 60_000, staleWhileRevalidate: 1_000 });
  assert.equal(cache.info('k').expiresAt - cache.info('k').staleAt, 1_000);
});

test('options.staleWhileRevalidate is kept in a file\'s header: reopening finds it, a different value is ERR_ARENA_MISMATCH', { skip: !nativeAvailable && 'native addon unavailable' }, (t) => {
  const path = arenaPath(t);
  SharedCache.open(path, { memoryBytes: MiB, ttl: 1000, staleWhileRevalidate: 2500.5 }).close();
  const cache = SharedCache.open(path, { staleWhileRevalidate: 2500.5 });
  t.after(() => cache.close());
  cache.set('k', 'v');
  assert.equal(cache.info('k').expiresAt - cache.info('k').staleAt, 2500.5);
  assert.throws(() => SharedCache.open(path, { staleWhileRevalidate: 0 }), { code: 'ERR_ARENA_MISMATCH', message: /staleWhileRevalidate/ });
});

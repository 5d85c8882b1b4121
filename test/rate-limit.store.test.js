// The express-rate-limit store (arenacache/rate-limit) on its own: a fixed
// window per key (the first hit starts it, later hits keep its end, it
// expires and the next hit starts a new one), decrement that never creates
// a key or moves a window's end, resetKey, get, resetAll, shutdown, the
// path form and its file size, exact counts from 4 worker threads, and
// every bad argument and failed state with its message.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { SharedCacheStore } from 'arenacache/rate-limit';
import { nativeAvailable } from '../lib/native/addon.js';
import { MiB } from './helpers/units.js';

const needsNative = { skip: !nativeAvailable && 'native addon unavailable' };

/** A store over a new in-memory cache, given its window. */
function newStore({ windowMs = 60_000, ...options } = {}) {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const store = new SharedCacheStore({ cache, ...options });
  store.init({ windowMs });
  return { cache, store };
}

test('the first hit starts a window of windowMs; later hits count up and keep its end', async () => {
  const { cache, store } = newStore({ windowMs: 60_000 });
  const before = Date.now();
  const first = await store.increment('10.0.0.7');
  assert.equal(first.totalHits, 1);
  assert.ok(first.resetTime instanceof Date);
  assert.ok(first.resetTime.getTime() >= before + 60_000 && first.resetTime.getTime() <= Date.now() + 60_000, `${first.resetTime.getTime() - before} ms from the start`);
  await sleep(20);
  const second = await store.increment('10.0.0.7');
  assert.deepEqual(second, { totalHits: 2, resetTime: first.resetTime }, 'the window does not slide');
  assert.deepEqual(await store.increment('10.0.0.8'), { totalHits: 1, resetTime: (await store.get('10.0.0.8')).resetTime }, 'each key has its own window');
  assert.equal(cache.get('rl:10.0.0.7'), 2, 'the count is a number under the default prefix');
  assert.equal(store.prefix, 'rl:');
  assert.equal(store.localKeys, false);
  assert.equal(store.cache, cache);
  cache.close();
});

test('an expired window ends: the next hit starts a new one at 1 with a new end', async () => {
  const { cache, store } = newStore({ windowMs: 150 });
  for (let i = 1; i <= 3; i++) assert.equal((await store.increment('k')).totalHits, i);
  const { resetTime } = await store.get('k');
  await sleep(resetTime.getTime() - Date.now() + 20);
  assert.equal(await store.get('k'), undefined, 'no window after its end');
  const next = await store.increment('k');
  assert.equal(next.totalHits, 1);
  assert.ok(next.resetTime > resetTime);
  cache.close();
});

test('get: the window without a hit, or undefined', async () => {
  const { cache, store } = newStore();
  assert.equal(await store.get('k'), undefined);
  const hit = await store.increment('k');
  assert.deepEqual(await store.get('k'), hit);
  assert.deepEqual(await store.get('k'), hit, 'get is not a hit');
  cache.close();
});

test('decrement takes one hit back, never below 0, and keeps the window end', async () => {
  const { cache, store } = newStore();
  await store.increment('k');
  const { resetTime } = await store.increment('k');
  await sleep(5);
  await store.decrement('k');
  assert.deepEqual(await store.get('k'), { totalHits: 1, resetTime });
  await store.decrement('k');
  await store.decrement('k');
  assert.deepEqual(await store.get('k'), { totalHits: 0, resetTime }, 'kept at 0: the window stays');
  assert.deepEqual(await store.increment('k'), { totalHits: 1, resetTime }, 'the next hit counts in the same window');
  cache.close();
});

test('decrement of a key without a window creates nothing', async () => {
  const { cache, store } = newStore({ windowMs: 100 });
  await store.decrement('never');
  assert.equal(cache.has('rl:never'), false);
  await store.increment('short');
  await sleep(130);
  await store.decrement('short');
  assert.equal(await store.get('short'), undefined, 'an expired window is not revived');
  assert.equal(cache.info('rl:short'), undefined);
  cache.close();
});

test('decrement racing increments on one key loses none of them', async () => {
  const { cache, store } = newStore();
  await Promise.all(Array.from({ length: 500 }, () => store.increment('k')));
  await Promise.all(Array.from({ length: 1000 }, (_, i) => (i % 2 === 0 ? store.increment('k') : store.decrement('k'))));
  assert.equal((await store.get('k')).totalHits, 500);
  cache.close();
});

test('resetKey ends one window; resetAll ends every window under the prefix and nothing else', async () => {
  const { cache, store } = newStore({ prefix: 'api:' });
  const other = new SharedCacheStore({ cache, prefix: 'login:' });
  other.init({ windowMs: 60_000 });
  await store.increment('a');
  await store.increment('b');
  await other.increment('a');
  cache.set('unrelated', 'kept');
  await store.resetKey('a');
  assert.equal(await store.get('a'), undefined);
  assert.equal((await store.increment('a')).totalHits, 1, 'a new window');
  await store.resetKey('absent');
  await store.resetAll();
  assert.equal(await store.get('a'), undefined);
  assert.equal(await store.get('b'), undefined);
  assert.equal((await other.get('a')).totalHits, 1, "another prefix's window stays");
  assert.equal(cache.get('unrelated'), 'kept');
  cache.close();
});

test('stores on one cache with the same prefix share counts; another prefix counts apart', async () => {
  const { cache, store } = newStore();
  const twin = new SharedCacheStore({ cache });
  twin.init({ windowMs: 60_000 });
  await store.increment('k');
  assert.equal((await twin.increment('k')).totalHits, 2);
  const apart = new SharedCacheStore({ cache, prefix: '' });
  apart.init({ windowMs: 60_000 });
  assert.equal((await apart.increment('k')).totalHits, 1);
  assert.equal(cache.get('k'), 1, "prefix '' uses the client key as it is");
  cache.close();
});

test('4 worker threads x 2,000 hits on one key: exactly 8,000, each count handed out once', async () => {
  const { cache, store } = newStore();
  const fixture = new URL('./fixtures/rate-limit-thread.js', import.meta.url);
  const workers = Array.from({ length: 4 }, () => new Worker(fixture, { workerData: { handle: cache.handle, key: 'hot', hits: 2000 } }));
  const results = await Promise.all(workers.map(async (worker) => (await once(worker, 'message'))[0]));
  const all = results.flat().sort((a, b) => a - b);
  assert.deepEqual(all, Array.from({ length: 8000 }, (_, i) => i + 1), 'every count from 1 to 8000 exactly once');
  assert.equal((await store.get('hot')).totalHits, 8000);
  cache.close();
});

test('path: the store opens the file (creating it at memoryBytes), owns it and closes it at shutdown', needsNative, async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ac-rate-limit-'));
  try {
    const file = path.join(dir, 'limits.arena');
    const store = new SharedCacheStore({ path: file, memoryBytes: 2 * MiB });
    store.init({ windowMs: 60_000 });
    assert.equal(store.cache.path, file);
    await store.increment('k');
    // A second store with the default memoryBytes (16 MiB) uses the file as it is.
    const again = new SharedCacheStore({ path: file });
    again.init({ windowMs: 60_000 });
    assert.equal((await again.increment('k')).totalHits, 2);
    assert.equal(again.cache.stats().memoryBytes, 2 * MiB);
    await store.shutdown();
    await store.shutdown();
    assert.equal(store.cache.closed, true, 'the store closed the cache it opened');
    await assert.rejects(store.increment('k'), { name: 'ArenaCacheError', code: 'ERR_CACHE_CLOSED', message: 'increment() after shutdown(): the store is shut down' });
    assert.equal((await again.get('k')).totalHits, 2, 'the counts stay in the file');
    await again.shutdown();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('shutdown leaves a cache it was given open, and refuses every later call', async () => {
  const { cache, store } = newStore();
  await store.increment('k');
  await store.shutdown();
  assert.equal(cache.closed, false);
  assert.equal(cache.get('rl:k'), 1);
  const closed = (method) => ({ name: 'ArenaCacheError', code: 'ERR_CACHE_CLOSED', message: `${method}() after shutdown(): the store is shut down` });
  for (const method of ['increment', 'decrement', 'get', 'resetKey']) await assert.rejects(store[method]('k'), closed(method));
  await assert.rejects(store.resetAll(), closed('resetAll'));
  cache.close();
});

test('bad options: TypeError or RangeError naming the option', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const cases = [
    [undefined, TypeError, 'options must be an object (got undefined)'],
    [cache, TypeError, 'options must be an object such as { cache } or { path } (got a SharedCache: pass it as { cache })'],
    [{}, TypeError, 'options must have either cache (a SharedCache) or path (a cache file to open), and has neither'],
    [{ cache, path: '/dev/shm/x.arena' }, TypeError, 'options must have either cache (a SharedCache) or path (a cache file to open), not both'],
    [{ cache: new Map() }, TypeError, 'options.cache must be a SharedCache (got an instance of Map)'],
    [{ cache: { memoryBytes: MiB } }, TypeError, 'options.cache must be a SharedCache (got an instance of Object)'],
    [{ cache, memoryBytes: MiB }, TypeError, 'options.memoryBytes sizes a file the store opens: give it with options.path, not options.cache'],
    [{ cache, prefix: 5 }, TypeError, 'options.prefix must be a string (got 5)'],
    [{ cache, prefx: 'a:' }, TypeError, 'options.prefx is not a known option; did you mean prefix?'],
    [{ path: '' }, TypeError, 'options.path must be a non-empty string without NUL bytes (got "")'],
    [{ path: 5 }, TypeError, 'options.path must be a non-empty string without NUL bytes (got 5)'],
  ];
  for (const [options, type, message] of cases) {
    assert.throws(() => new SharedCacheStore(options), { name: type.name, message }, JSON.stringify(options) ?? String(options));
  }
  cache.close();
  assert.throws(() => new SharedCacheStore({ cache }), { name: 'ArenaCacheError', code: 'ERR_CACHE_CLOSED', message: 'options.cache is closed: pass a SharedCache that close() was not called on' });
});

test('bad memoryBytes with path is SharedCache.open()\'s RangeError', needsNative, () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ac-rate-limit-'));
  try {
    assert.throws(() => new SharedCacheStore({ path: path.join(dir, 'a.arena'), memoryBytes: -5 }), { name: 'RangeError', message: /^options\.memoryBytes must be/ });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('init: windowMs must be a positive number of milliseconds', () => {
  const { cache, store } = newStore();
  assert.throws(() => store.init(undefined), { name: 'TypeError', message: 'options must be an object (got undefined)' });
  assert.throws(() => store.init({}), { name: 'TypeError', message: 'options.windowMs must be a number of milliseconds (got undefined)' });
  assert.throws(() => store.init({ windowMs: '60s' }), { name: 'TypeError', message: 'options.windowMs must be a number of milliseconds (got "60s")' });
  for (const windowMs of [0, -1, NaN, Infinity, 2 ** 53]) {
    assert.throws(() => store.init({ windowMs }), { name: 'RangeError', message: `options.windowMs must be a number of milliseconds above 0 and at most 8998403161718784 (2^53 - 2^43, about 285,000 years) (got ${windowMs})` });
  }
  cache.close();
});

test('increment before init is ERR_STORE_NOT_INITIALIZED; the other calls need no window', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const store = new SharedCacheStore({ cache });
  await assert.rejects(store.increment('k'), {
    name: 'ArenaCacheError',
    code: 'ERR_STORE_NOT_INITIALIZED',
    message: 'increment() before init(): express-rate-limit calls store.init(options) with its windowMs when the limiter is created; used on its own, call store.init({ windowMs }) first',
  });
  assert.equal(cache.has('rl:k'), false);
  assert.equal(await store.get('k'), undefined);
  await store.decrement('k');
  await store.resetKey('k');
  cache.close();
});

test('keys must be strings', async () => {
  const { cache, store } = newStore();
  for (const method of ['increment', 'decrement', 'get', 'resetKey']) {
    await assert.rejects(store[method](5), { name: 'TypeError', message: 'key must be a string (got 5)' }, method);
    await assert.rejects(store[method](undefined), { name: 'TypeError', message: 'key must be a string (got undefined)' }, method);
  }
  cache.close();
});

test('a key another user of the cache wrote is ERR_NOT_A_NUMBER and stays as it was', async () => {
  const { cache, store } = newStore();
  cache.set('rl:k', 'a string');
  await assert.rejects(store.increment('k'), { name: 'ArenaCacheError', code: 'ERR_NOT_A_NUMBER' });
  for (const method of ['get', 'decrement']) {
    await assert.rejects(store[method]('k'), {
      name: 'ArenaCacheError',
      code: 'ERR_NOT_A_NUMBER',
      message: 'rate-limit key "rl:k" holds a string, not a count: another user of the cache wrote it (give the store a prefix of its own)',
    });
  }
  assert.equal(cache.get('rl:k'), 'a string');
  cache.close();
});

test('a count stored without a ttl gets a window at the next hit instead of blocking for good', async () => {
  const { cache, store } = newStore({ windowMs: 5000 });
  cache.set('rl:k', 7);
  assert.deepEqual(await store.get('k'), { totalHits: 7, resetTime: undefined });
  const hit = await store.increment('k');
  assert.equal(hit.totalHits, 8);
  const remaining = cache.getRemainingTTL('rl:k');
  assert.ok(remaining > 4000 && remaining <= 5000, `remaining ${remaining} ms`);
  assert.ok(Math.abs(hit.resetTime.getTime() - (await store.get('k')).resetTime.getTime()) < 50);
  cache.close();
});

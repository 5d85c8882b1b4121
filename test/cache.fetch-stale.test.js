// fetch() with stale-while-revalidate and the options around loading:
// allowStale, forceRefresh, signal, context, allowStaleOnFetchRejection,
// noDeleteOnFetchRejection, and a value too large to cache.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

const party = fileURLToPath(new URL('./fixtures/fetch-stale-party.js', import.meta.url));
const LOAD_MS = 400;

/** A value that goes stale at once and stays servable for a minute. */
async function setStale(cache, key, value) {
  cache.set(key, value, { ttl: 1, staleWhileRevalidate: 60_000 });
  await sleep(5);
  assert.equal(cache.get(key), undefined, 'stale: a plain get misses');
}

async function startParties(kind, count, params) {
  const parties = [];
  for (let id = 0; id < count; id++) {
    const data = { ...params, id, loadMs: LOAD_MS, next: 'v2' };
    const p = kind === 'worker' ? new Worker(party, { workerData: data }) : fork(party, [JSON.stringify(data)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const send = (message) => (kind === 'worker' ? p.postMessage(message) : p.send(message));
    assert.equal((await once(p, 'message'))[0], 'ready');
    const replies = new Map();
    p.on('message', (reply) => replies.get(reply.id)?.(reply));
    let nextId = 0;
    const fetch = () =>
      new Promise((resolve) => {
        const id = nextId++;
        replies.set(id, resolve);
        send({ op: 'fetch', id });
      });
    parties.push({ p, fetch, close: () => send('close') });
  }
  return parties;
}

for (const kind of ['worker', 'process']) {
  test(`stale-while-revalidate across 2 ${kind === 'worker' ? 'worker threads' : 'processes'}: callers get the stale value at once, the loader runs once, then everyone gets the new value`, { skip: kind === 'process' && !nativeAvailable && 'native addon unavailable' }, async (t) => {
    const path = kind === 'process' ? arenaPath(t) : null;
    const cache = path ? SharedCache.open(path, { memoryBytes: 4 * MiB }) : new SharedCache({ memoryBytes: 4 * MiB });
    t.after(() => cache.close());
    await setStale(cache, 'k', 'v1');
    const parties = await startParties(kind, 2, path ? { path } : { handle: cache.handle });
    const before = cache.stats();
    const first = await Promise.all([...parties, ...parties].map((p) => p.fetch()));
    for (const { value, ms } of first) {
      assert.equal(value, 'v1');
      assert.ok(ms < LOAD_MS, `the stale value came in ${ms} ms, without waiting for the ${LOAD_MS} ms load`);
    }
    // The refresh lands in the cache for every thread and process.
    let fresh;
    for (const deadline = Date.now() + 10_000; fresh === undefined && Date.now() < deadline; await sleep(20)) fresh = cache.get('k');
    assert.match(fresh, /^v2 \(after v1\) by [01]$/);
    const second = await Promise.all(parties.map((p) => p.fetch()));
    for (const { value } of second) assert.equal(value, fresh);
    const after = cache.stats();
    assert.equal(after.fetchLoads - before.fetchLoads, 1, 'one load in the whole arena');
    assert.equal(after.fetchStale - before.fetchStale, 4);
    for (const p of parties) p.close();
    await Promise.all(parties.map(({ p }) => once(p, 'exit')));
  });
}

test('allowStale: false waits for the fresh value; get() serves stale only with allowStale', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  await setStale(cache, 'k', 'old');
  assert.equal(cache.get('k', { allowStale: true }), 'old');
  assert.equal(cache.peek('k', { allowStale: true }), 'old');
  assert.equal(cache.peek('k'), undefined);
  assert.equal(cache.has('k'), false);
  const value = await cache.fetch('k', async (key, { staleValue }) => `new after ${staleValue}`, { allowStale: false });
  assert.equal(value, 'new after old');
  assert.equal(cache.get('k'), 'new after old');
});

test('a stale window ends: past it the entry is gone, as an expired one', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', 'v', { ttl: 10, staleWhileRevalidate: 30 });
  await sleep(60);
  assert.equal(cache.get('k', { allowStale: true }), undefined);
  assert.equal(cache.info('k'), undefined);
  let loads = 0;
  assert.equal(await cache.fetch('k', () => `load ${++loads}`), 'load 1');
});

test('options.staleWhileRevalidate gives every entry with a ttl its window; a set without a ttl has none', async () => {
  const cache = new SharedCache({ memoryBytes: MiB, ttl: 1, staleWhileRevalidate: 60_000 });
  cache.set('k', 'v');
  cache.set('forever', 'v', { ttl: 0 });
  await sleep(5);
  assert.equal(cache.get('k'), undefined);
  assert.equal(cache.get('k', { allowStale: true }), 'v');
  assert.equal(cache.info('forever').staleAt, Infinity);
  assert.equal(await cache.fetch('k', () => 'new'), 'v', 'served stale while refreshing');
  await sleep(5);
  assert.equal(cache.get('k', { allowStale: true }), 'new');
});

test('a failed refresh drops the stale value, unless noDeleteOnFetchRejection or allowStaleOnFetchRejection', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const fail = () => {
    throw new Error('backend down');
  };
  await setStale(cache, 'dropped', 'old');
  assert.equal(await cache.fetch('dropped', fail), 'old', 'served stale; the refresh runs behind');
  await sleep(5);
  assert.equal(cache.get('dropped', { allowStale: true }), undefined, 'the failed refresh dropped it');
  assert.equal(cache.stats().fetchErrors, 1);

  await setStale(cache, 'kept', 'old');
  await assert.rejects(cache.fetch('kept', fail, { allowStale: false, noDeleteOnFetchRejection: true }), { message: 'backend down' });
  assert.equal(cache.get('kept', { allowStale: true }), 'old');
  await assert.rejects(cache.fetch('kept', fail, { allowStale: false }), { message: 'backend down' });
  assert.equal(cache.get('kept', { allowStale: true }), undefined);

  await setStale(cache, 'if-error', 'old');
  assert.equal(await cache.fetch('if-error', fail, { allowStale: false, allowStaleOnFetchRejection: true }), 'old');
  assert.equal(cache.get('if-error', { allowStale: true }), 'old', 'stale-if-error keeps it');
  // Without a stale value there is nothing to serve: the error stands.
  await assert.rejects(cache.fetch('none', fail, { allowStaleOnFetchRejection: true }), { message: 'backend down' });
});

test('a failed refresh does not drop a newer value another writer stored meanwhile', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  await setStale(cache, 'k', 'old');
  await assert.rejects(
    cache.fetch(
      'k',
      async () => {
        cache.set('k', 'newer');
        throw new Error('backend down');
      },
      { allowStale: false },
    ),
    { message: 'backend down' },
  );
  assert.equal(cache.get('k'), 'newer');
});

test('forceRefresh loads even over a fresh value; concurrent forced fetches share one load', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', 'cached');
  let loads = 0;
  const loader = async () => {
    await sleep(20);
    return `load ${++loads}`;
  };
  const values = await Promise.all([cache.fetch('k', loader, { forceRefresh: true }), cache.fetch('k', loader, { forceRefresh: true })]);
  assert.deepEqual(values, ['load 1', 'load 1']);
  assert.equal(cache.get('k'), 'load 1');
});

test('the loader gets the key, context, the stale value and a signal', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  let seen;
  await cache.fetch('k', (key, options) => {
    seen = { key, ...options };
    return 1;
  }, { context: { tenant: 7 } });
  assert.equal(seen.key, 'k');
  assert.deepEqual(seen.context, { tenant: 7 });
  assert.equal(seen.staleValue, undefined);
  assert.ok(seen.signal instanceof AbortSignal);
  assert.equal(seen.signal.aborted, false);
});

test('options.signal aborts the caller\'s wait, not the load the other callers share', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const controller = new AbortController();
  let loaderSignal;
  const loader = async (key, { signal }) => {
    loaderSignal = signal;
    await sleep(50);
    return 'loaded';
  };
  const aborted = cache.fetch('k', loader, { signal: controller.signal });
  const other = cache.fetch('k', loader);
  controller.abort(new Error('client went away'));
  await assert.rejects(aborted, { message: 'client went away' });
  assert.equal(await other, 'loaded');
  assert.equal(loaderSignal.aborted, false);
  assert.equal(cache.get('k'), 'loaded');
  // Already aborted: rejects at once with the signal's reason.
  await assert.rejects(cache.fetch('x', loader, { signal: AbortSignal.abort() }), { name: 'AbortError' });
});

test('close() aborts the signal of a loader still running, and its value is not stored', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  let loaderSignal;
  const fetched = cache.fetch('k', async (key, { signal }) => {
    loaderSignal = signal;
    await sleep(20);
    return 'late';
  });
  await sleep(1);
  cache.close();
  assert.equal(loaderSignal.aborted, true);
  assert.equal(loaderSignal.reason.code, 'ERR_CACHE_CLOSED');
  await assert.rejects(fetched, { code: 'ERR_CACHE_CLOSED' });
});

test('a loaded value too large to cache is returned uncached and counted, not a rejection', async () => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 4 });
  const huge = Buffer.alloc(cache.stats().maxEntryBytes + 1, 1);
  const values = await Promise.all([cache.fetch('big', () => huge), cache.fetch('big', () => huge)]);
  assert.equal(values[0], huge);
  assert.equal(values[1], huge);
  assert.equal(cache.get('big'), undefined);
  const stats = cache.stats();
  assert.equal(stats.fetchUncached, 1);
  assert.equal(stats.fetchErrors, 0);
});

test('fetch options are checked, each error naming the option', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const cases = [
    [{ allowStale: 1 }, TypeError, 'options.allowStale must be a boolean (got 1)'],
    [{ forceRefresh: 'yes' }, TypeError, 'options.forceRefresh must be a boolean (got "yes")'],
    [{ allowStaleOnFetchRejection: null }, TypeError, 'options.allowStaleOnFetchRejection must be a boolean (got null)'],
    [{ noDeleteOnFetchRejection: 0 }, TypeError, 'options.noDeleteOnFetchRejection must be a boolean (got 0)'],
    [{ signal: {} }, TypeError, 'options.signal must be an AbortSignal (got an instance of Object)'],
    [{ staleWhileRevalidate: '1s' }, TypeError, 'options.staleWhileRevalidate must be a number of milliseconds (got "1s")'],
    [{ staleWhileRevalidate: -1 }, RangeError, 'options.staleWhileRevalidate must be a number of milliseconds from 0 to 8998403161718784 (2^53 - 2^43, about 285,000 years), 0 meaning no stale window (got -1)'],
    [{ ttl: NaN }, RangeError, 'options.ttl must be a number of milliseconds from 0 to 8998403161718784 (2^53 - 2^43, about 285,000 years), 0 meaning no expiry (got NaN)'],
    [[], TypeError, 'options must be an object such as { ttl: 1000 } (got an array of length 0)'],
  ];
  for (const [options, type, message] of cases) {
    await assert.rejects(cache.fetch('k', () => 1, options), { name: type.name, message });
  }
  assert.throws(() => new SharedCache({ memoryBytes: MiB, staleWhileRevalidate: -5 }), {
    name: 'RangeError',
    message: 'options.staleWhileRevalidate must be a number of milliseconds from 0 to 8998403161718784 (2^53 - 2^43, about 285,000 years), 0 meaning no stale window (got -5)',
  });
});

test('fetch outcomes are published on the arenacache:fetch channel', async () => {
  const { subscribe, unsubscribe } = await import('node:diagnostics_channel');
  const { channels } = await import('../lib/index.js');
  const cache = new SharedCache({ memoryBytes: MiB, fetchTimeoutMs: 50 });
  const seen = [];
  const listener = (message) => seen.push({ key: message.key, outcome: message.outcome, error: message.error?.message });
  subscribe(channels.fetch, listener);
  try {
    await cache.fetch('a', () => 'v');
    await cache.fetch('a', () => 'v');
    await assert.rejects(cache.fetch('b', () => {
      throw new Error('down');
    }));
    await assert.rejects(cache.fetch('c', () => new Promise(() => {})));
    await setStale(cache, 'd', 'old');
    await cache.fetch('d', () => 'new');
    await sleep(5);
    await assert.rejects(cache.fetch('e', () => 'v', { signal: AbortSignal.abort(new Error('gone')) }));
  } finally {
    unsubscribe(channels.fetch, listener);
  }
  assert.deepEqual(seen, [
    { key: 'a', outcome: 'load', error: undefined },
    { key: 'a', outcome: 'hit', error: undefined },
    { key: 'b', outcome: 'error', error: 'down' },
    { key: 'c', outcome: 'timeout', error: 'the fetch() loader ran longer than options.fetchTimeoutMs (50 ms); its signal was aborted and its result is dropped' },
    { key: 'd', outcome: 'stale', error: undefined },
    { key: 'd', outcome: 'refresh', error: undefined },
    { key: 'e', outcome: 'aborted', error: 'gone' },
  ]);
});

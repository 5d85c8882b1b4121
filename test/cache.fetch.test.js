// fetch(): a hit skips the loader; concurrent fetches of a key in one thread
// or in 4 workers run one loader; its error reaches every waiter and caches
// nothing; a loader that never settles, blocks its thread or dies is given
// up or taken over; fetch stores with its ttl; bad input is a specific error.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

const workerFile = new URL('./fixtures/fetch-worker.js', import.meta.url);

function startWorkers(cache, count, options) {
  const counter = new SharedArrayBuffer(4);
  const gate = new SharedArrayBuffer(8);
  const workers = Array.from(
    { length: count },
    (_, id) =>
      new Worker(workerFile, {
        workerData: { handle: cache.handle, key: 'shared-key', calls: 100, counter, gate, parties: count, delayMs: 50, id, ...options },
      }),
  );
  return { workers, runs: new Int32Array(counter), results: Promise.all(workers.map(async (w) => (await once(w, 'message'))[0])) };
}

test('a hit returns the cached value without running the loader', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', 'cached');
  let runs = 0;
  assert.equal(await cache.fetch('k', () => runs++), 'cached');
  assert.equal(runs, 0);
});

test('concurrent fetches in one thread share one loader run, and the value is cached', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  let runs = 0;
  const loader = async (key) => {
    runs++;
    await sleep(20);
    return { key };
  };
  const values = await Promise.all(Array.from({ length: 50 }, () => cache.fetch('k', loader)));
  assert.equal(runs, 1);
  for (const value of values) assert.deepEqual(value, { key: 'k' });
  assert.deepEqual(cache.get('k'), { key: 'k' });
  const stats = cache.stats();
  assert.equal(stats.fetches, 50);
  assert.equal(stats.fetchLoads, 1);
});

test('4 workers × 100 concurrent fetches of one key: the loader runs once', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const { workers, runs, results } = startWorkers(cache, 4, { mode: 'value' });
  const all = (await results).flat();
  await Promise.all(workers.map((w) => w.terminate()));
  assert.equal(Atomics.load(runs, 0), 1);
  assert.equal(all.length, 400);
  const loadedBy = new Set(all.map((r) => r.value?.loadedBy));
  assert.equal(loadedBy.size, 1, 'every caller got the one loaded value');
  assert.ok(all.every((r) => r.value?.key === 'shared-key'));
  assert.deepEqual(cache.get('shared-key').key, 'shared-key');
  const stats = cache.stats();
  assert.equal(stats.fetchLoads, 1);
  assert.equal(stats.fetchWaits, 3, 'each other worker waited once (its calls share one promise)');
});

test('a loader error rejects every waiter in every thread and caches nothing', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const { workers, runs, results } = startWorkers(cache, 3, { mode: 'error' });
  const all = (await results).flat();
  await Promise.all(workers.map((w) => w.terminate()));
  assert.equal(Atomics.load(runs, 0), 1);
  assert.equal(all.length, 300);
  for (const result of all) {
    assert.deepEqual(result.error, { name: 'RangeError', message: 'database refused shared-key', code: 'EREFUSED' });
  }
  assert.equal(cache.get('shared-key'), undefined);
  assert.equal(cache.stats().fetchErrors, 1);
  // The next fetch loads again.
  assert.equal(await cache.fetch('shared-key', () => 'second try'), 'second try');
});

test('in the loader\'s own thread, waiters get the loader\'s very error', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const failure = new Error('boom');
  const results = await Promise.allSettled([
    cache.fetch('k', async () => {
      await sleep(10);
      throw failure;
    }),
    cache.fetch('k', () => 'never'),
  ]);
  assert.equal(results[0].reason, failure);
  assert.equal(results[1].reason, failure);
});

test('a loader that never settles is given up after fetchTimeoutMs: its signal aborts, every caller in every thread rejects with ERR_FETCH_TIMEOUT, and nobody else loads', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, fetchTimeoutMs: 300 });
  const hanging = startWorkers(cache, 1, { mode: 'hang', calls: 3, parties: 1 });
  while (Atomics.load(hanging.runs, 0) === 0) await sleep(5);
  const start = performance.now();
  let ownLoads = 0;
  const waiters = Array.from({ length: 5 }, () =>
    cache.fetch('shared-key', () => {
      ownLoads++;
      return 'a stampede';
    }),
  );
  const message = 'the fetch() loader ran longer than options.fetchTimeoutMs (300 ms); its signal was aborted and its result is dropped';
  for (const waiter of waiters) await assert.rejects(waiter, { name: 'ArenaCacheError', code: 'ERR_FETCH_TIMEOUT', message });
  const waited = performance.now() - start;
  assert.ok(waited < 3000, `waited ${waited} ms`);
  assert.equal(ownLoads, 0, 'no waiter ran the loader');
  const [inWorker] = await hanging.results;
  assert.deepEqual(inWorker, Array(3).fill({ error: { name: 'ArenaCacheError', message, code: 'ERR_FETCH_TIMEOUT' } }));
  assert.equal(cache.stats().fetchTimeouts, 1, 'one load timed out');
  assert.equal(cache.get('shared-key'), undefined);
  // The claim is free again: the next fetch loads.
  assert.equal(await cache.fetch('shared-key', () => 'loaded after the timeout'), 'loaded after the timeout');
  await Promise.all(hanging.workers.map((w) => w.terminate()));
});

test('the loader\'s signal aborts at the timeout, and its late value is not stored', async () => {
  const cache = new SharedCache({ memoryBytes: MiB, fetchTimeoutMs: 50 });
  let seen;
  let finish;
  const late = new Promise((resolve) => {
    finish = resolve;
  });
  await assert.rejects(
    cache.fetch('k', (key, { signal }) => {
      seen = signal;
      return late;
    }),
    { code: 'ERR_FETCH_TIMEOUT' },
  );
  assert.equal(seen.aborted, true);
  assert.equal(seen.reason.code, 'ERR_FETCH_TIMEOUT');
  finish('too late');
  await sleep(10);
  assert.equal(cache.get('k'), undefined);
});

test('a loader whose thread blocks its event loop is taken over by one waiter once overdue (2 × fetchTimeoutMs)', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, fetchTimeoutMs: 200 });
  const blocked = startWorkers(cache, 1, { mode: 'block', calls: 1, parties: 1, blockMs: 1500 });
  while (Atomics.load(blocked.runs, 0) === 0) await sleep(5);
  let ownLoads = 0;
  const start = performance.now();
  const values = await Promise.all(
    Array.from({ length: 5 }, () =>
      cache.fetch('shared-key', async () => {
        ownLoads++;
        return 'taken over';
      }),
    ),
  );
  const waited = performance.now() - start;
  assert.deepEqual(values, Array(5).fill('taken over'));
  assert.equal(ownLoads, 1, 'one load here (the calls of one thread share it)');
  assert.ok(waited >= 300 && waited < 1400, `taken over after ${waited} ms, before the blocked loader returned`);
  // The blocked loader's late release must not disturb what came after it.
  const [[late]] = await blocked.results;
  assert.deepEqual(late.value, { key: 'shared-key', loadedBy: 0, blocked: true }, 'its own caller gets what it loaded');
  assert.equal(cache.get('shared-key'), 'taken over', 'but it is not stored over the newer load');
  await Promise.all(blocked.workers.map((w) => w.terminate()));
});

test('waiters do not wait out the timeout when the loader\'s worker dies', { skip: !nativeAvailable && 'native addon unavailable' }, async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, fetchTimeoutMs: 60_000 });
  const hanging = startWorkers(cache, 1, { mode: 'hang', calls: 1, parties: 1 });
  while (Atomics.load(hanging.runs, 0) === 0) await sleep(5);
  const waiting = cache.fetch('shared-key', () => 'loaded by a waiter');
  await sleep(50);
  await Promise.all(hanging.workers.map((w) => w.terminate()));
  const start = performance.now();
  assert.equal(await waiting, 'loaded by a waiter');
  assert.ok(performance.now() - start < 2000, 'released soon after the loader died');
});

test('fetch stores with the given ttl', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  // A ttl a loaded machine does not outlast between the fetch and the get (20 ms did).
  await cache.fetch('k', () => 'v', { ttl: 300 });
  assert.equal(cache.get('k'), 'v');
  await sleep(400);
  assert.equal(cache.get('k'), undefined);
});

test('bad fetch input is a specific error', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  await assert.rejects(cache.fetch('k'), { name: 'TypeError', message: 'loader must be a function (got undefined)' });
  await assert.rejects(cache.fetch('k', 'load'), { name: 'TypeError', message: 'loader must be a function (got "load")' });
  await assert.rejects(cache.fetch(42, () => 1), { name: 'TypeError', message: 'key must be a string, Buffer or Uint8Array (got 42)' });
  await assert.rejects(cache.fetch('k', () => 1, { ttl: -1 }), {
    name: 'RangeError',
    message: 'options.ttl must be a number of milliseconds from 0 to 8998403161718784 (2^53 - 2^43, about 285,000 years), 0 meaning no expiry (got -1)',
  });
  await assert.rejects(cache.fetch('k', () => 1, { stale: true }), {
    name: 'TypeError',
    message:
      'options.stale is not a known option of fetch(); the known ones are ttl, staleWhileRevalidate, allowStale, forceRefresh, signal, context, allowStaleOnFetchRejection, noDeleteOnFetchRejection',
  });
  await assert.rejects(cache.fetch('k', () => undefined), {
    name: 'TypeError',
    message: 'the fetch() loader returned undefined; return a value to cache (null is one), or throw to fail',
  });
  assert.equal(cache.get('k'), undefined);
  assert.throws(() => new SharedCache({ memoryBytes: MiB, fetchTimeoutMs: 0 }), {
    name: 'RangeError',
    message: 'options.fetchTimeoutMs must be an integer from 1 to 86400000 milliseconds (got 0)',
  });
});

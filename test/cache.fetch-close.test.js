// close() while fetch() calls of the instance are pending: they reject at
// once with ERR_CACHE_CLOSED, their loaders' signals abort, and the key's
// flight is given back, so that callers waiting for it in other threads and
// processes load it themselves instead of waiting out fetchTimeoutMs.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

const fetchWorker = new URL('./fixtures/fetch-worker.js', import.meta.url);
const waiterChild = fileURLToPath(new URL('./fixtures/fetch-waiter-child.js', import.meta.url));
const CLOSED = { name: 'ArenaCacheError', code: 'ERR_CACHE_CLOSED', message: 'the cache is closed: close() was called on this instance' };
/** Long enough that a waiter served by the timeout, not by the close, fails the test. */
const FETCH_TIMEOUT_MS = 5000;

/** A loader that never settles by itself (as a slow backend), recording its signal. */
function hangingLoader(seen) {
  return (key, { signal }) => {
    seen.push(signal);
    return new Promise(() => {});
  };
}

/** Resolves once `cache`'s arena counts `count` fetch waits (callers waiting for another thread's or process's loader). */
async function waitersWaiting(cache, count) {
  const deadline = performance.now() + 5000;
  while (cache.stats().fetchWaits < count) {
    assert.ok(performance.now() < deadline, 'the waiter never started waiting');
    await sleep(2);
  }
}

/** How `promise` settles, and when (performance.now()). */
async function settled(promise) {
  try {
    return { value: await promise, at: performance.now() };
  } catch (error) {
    return { error, at: performance.now() };
  }
}

test('close() during a fetch rejects it within 50 ms with ERR_CACHE_CLOSED, aborts its loader, and a worker waiting for the key loads it itself', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, fetchTimeoutMs: FETCH_TIMEOUT_MS });
  const keeper = SharedCache.attach(cache.handle);
  const signals = [];
  const pending = [cache.fetch('shared-key', hangingLoader(signals)), cache.fetch('shared-key', hangingLoader(signals))];
  while (signals.length === 0) await sleep(1);
  const counter = new SharedArrayBuffer(4);
  const worker = new Worker(fetchWorker, {
    workerData: { handle: cache.handle, key: 'shared-key', calls: 1, counter, gate: new SharedArrayBuffer(8), parties: 1, delayMs: 0, id: 7, mode: 'value' },
  });
  const served = once(worker, 'message');
  await waitersWaiting(cache, 1);
  const closedAt = performance.now();
  cache.close();
  const results = await Promise.all(pending.map(settled));
  for (const { error, at } of results) {
    const ms = at - closedAt;
    assert.ok(error !== undefined, 'the fetch rejected');
    assert.equal(error.code, CLOSED.code, error.message);
    assert.equal(error.message, CLOSED.message);
    assert.ok(ms < 50, `rejected ${ms.toFixed(1)} ms after close()`);
  }
  assert.equal(signals.length, 1, 'the instance\'s calls shared one loader run');
  assert.equal(signals[0].aborted, true, 'the loader\'s signal is aborted');
  assert.equal(signals[0].reason.code, 'ERR_CACHE_CLOSED');
  const [[inWorker]] = await served;
  const servedMs = performance.now() - closedAt;
  assert.deepEqual(inWorker, { value: { key: 'shared-key', loadedBy: 7 } }, 'the waiting worker loaded the key itself');
  assert.equal(Atomics.load(new Int32Array(counter), 0), 1);
  assert.ok(servedMs < 1000, `the worker was served ${servedMs.toFixed(0)} ms after close(), not after fetchTimeoutMs`);
  assert.deepEqual(keeper.get('shared-key'), { key: 'shared-key', loadedBy: 7 });
  assert.equal(keeper.stats().fetchTimeouts, 0);
  await worker.terminate();
  keeper.close();
});

test('close() while the instance waits for another thread\'s loader rejects at once; that loader goes on', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, fetchTimeoutMs: FETCH_TIMEOUT_MS });
  const other = SharedCache.attach(cache.handle);
  const counter = new SharedArrayBuffer(4);
  const worker = new Worker(fetchWorker, {
    workerData: { handle: cache.handle, key: 'shared-key', calls: 1, counter, gate: new SharedArrayBuffer(8), parties: 1, delayMs: 300, id: 3, mode: 'value' },
  });
  const loaded = once(worker, 'message');
  while (Atomics.load(new Int32Array(counter), 0) === 0) await sleep(1);
  let ownLoads = 0;
  const waiting = settled(
    cache.fetch('shared-key', () => {
      ownLoads++;
      return 'never';
    }),
  );
  await waitersWaiting(other, 1);
  const closedAt = performance.now();
  cache.close();
  const { error, at } = await waiting;
  const ms = at - closedAt;
  assert.equal(error?.code, 'ERR_CACHE_CLOSED');
  assert.ok(ms < 50, `rejected ${ms.toFixed(1)} ms after close()`);
  assert.equal(ownLoads, 0);
  assert.deepEqual((await loaded)[0], [{ value: { key: 'shared-key', loadedBy: 3 } }], 'the worker\'s own load is not disturbed');
  assert.deepEqual(other.get('shared-key'), { key: 'shared-key', loadedBy: 3 });
  await worker.terminate();
  other.close();
});

test('close() during a fetch of a file-backed cache: another process waiting for the key loads it itself', { skip: !nativeAvailable && 'native addon unavailable' }, async (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 4 * MiB, fetchTimeoutMs: FETCH_TIMEOUT_MS });
  // Another instance of this thread stays open: the process and its thread
  // live on, so nothing but the close can tell the child the load is over.
  const keeper = SharedCache.open(path);
  t.after(() => keeper.close());
  const signals = [];
  const pending = settled(cache.fetch('k', hangingLoader(signals)));
  while (signals.length === 0) await sleep(1);
  const child = spawn(process.execPath, [waiterChild, JSON.stringify({ path, key: 'k' })], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = once(createInterface({ input: child.stdout }), 'line');
  await waitersWaiting(keeper, 1);
  const closedAt = Date.now();
  const closedAtMs = performance.now();
  cache.close();
  const { error, at } = await pending;
  assert.equal(error?.code, 'ERR_CACHE_CLOSED');
  assert.ok(at - closedAtMs < 50, `rejected ${(at - closedAtMs).toFixed(1)} ms after close()`);
  assert.equal(signals[0].aborted, true);
  const [[reported]] = await Promise.all([line, once(child, 'exit')]);
  const result = JSON.parse(reported);
  assert.deepEqual({ value: result.value, loads: result.loads }, { value: 'loaded in the child', loads: 1 }, reported);
  assert.ok(result.at - closedAt < 1000, `the child was served ${result.at - closedAt} ms after close(), not after fetchTimeoutMs`);
  assert.equal(keeper.get('k'), 'loaded in the child');
});

test('close() rejects a pending fetch even with allowStaleOnFetchRejection, counts no failed load, and a loader may close its own cache', async () => {
  const cache = new SharedCache({ memoryBytes: MiB, fetchTimeoutMs: FETCH_TIMEOUT_MS });
  const other = SharedCache.attach(cache.handle);
  cache.set('k', 'old', { ttl: 1, staleWhileRevalidate: 60_000 });
  await sleep(5);
  const signals = [];
  const pending = settled(cache.fetch('k', hangingLoader(signals), { allowStale: false, allowStaleOnFetchRejection: true }));
  while (signals.length === 0) await sleep(1);
  cache.close();
  const { error } = await pending;
  assert.equal(error?.code, 'ERR_CACHE_CLOSED', 'not the stale value: the instance is closed');
  const { fetchErrors, fetchTimeouts, fetchLoads } = other.stats();
  assert.deepEqual({ fetchErrors, fetchTimeouts, fetchLoads }, { fetchErrors: 0, fetchTimeouts: 0, fetchLoads: 1 });
  // The key was given back: another instance refreshes it at once.
  assert.equal(await other.fetch('k', () => 'new', { allowStale: false }), 'new');

  const selfClosing = SharedCache.attach(other.handle);
  await assert.rejects(
    selfClosing.fetch('x', () => {
      selfClosing.close();
      return 'stored by nobody';
    }),
    CLOSED,
  );
  assert.equal(other.get('x'), undefined);
  assert.equal(await other.fetch('x', () => 'loaded again'), 'loaded again');
  other.close();
});

// Shard locks and their holders: a dead holder's lock is taken over at once
// (by a reader too; after the lease without the addon), a live holder is
// never taken over, its waiters give up after lockWaitMs (gets miss, writes
// fail with ERR_ARENA_BUSY), and short holdings over and over are not taken.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { nativeAvailable, nativeUnavailableReason } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

const holderFile = new URL('./fixtures/lock-holder-worker.js', import.meta.url);

async function lockedBy(cache, holdMs) {
  const wake = new SharedArrayBuffer(4);
  const worker = new Worker(holderFile, { workerData: { buffer: cache.handle.buffer, wake, holdMs } });
  await once(worker, 'message');
  return { worker, wake: new Int32Array(wake) };
}

test('a lock left by a terminated worker is taken over at once (the owner is known to be dead)', { skip: !nativeAvailable && `native addon unavailable: ${nativeUnavailableReason}` }, async () => {
  // A lease of a minute: recovery must come from recognising the dead owner.
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1, lockLeaseMs: 60_000 });
  cache.set('before', 'kept by the rebuild');
  const { worker } = await lockedBy(cache);
  await worker.terminate();
  const start = performance.now();
  cache.set('after', 'works');
  const waited = performance.now() - start;
  assert.ok(waited < 500, `waited ${waited} ms`);
  assert.equal(cache.get('after'), 'works');
  assert.equal(cache.get('before'), 'kept by the rebuild', 'the shard was rebuilt, not reset');
  assert.equal(cache.stats().lockRecoveries, 1);
  assert.equal(cache.stats().lostEntries, 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('readers also recover a shard whose lock holder died', { skip: !nativeAvailable && 'native addon unavailable' }, async () => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1, lockLeaseMs: 60_000 });
  const { worker } = await lockedBy(cache);
  await worker.terminate();
  assert.equal(cache.get('anything'), undefined);
  assert.equal(cache.has('anything'), false);
  assert.equal(cache.stats().lockRecoveries, 1);
});

test('without the addon, a dead holder is recovered when the lease expires', () => {
  const child = fileURLToPath(new URL('./fixtures/lease-expiry-child.js', import.meta.url));
  const output = execFileSync(process.execPath, [child], { env: { ...process.env, ARENACACHE_NATIVE: 'off' }, encoding: 'utf8' });
  const result = JSON.parse(output);
  assert.equal(result.nativeAvailable, false);
  assert.ok(result.waited >= 250, `recovered after ${result.waited} ms, before the 300 ms lease`);
  assert.ok(result.waited < 3000, `recovered only after ${result.waited} ms`);
  assert.equal(result.value, 'recovered');
  assert.equal(result.recoveries, 1);
});

test('a live holder that stalls past the lease keeps the lock: its waiters wait, nothing is reset', { skip: !nativeAvailable && 'native addon unavailable' }, async () => {
  // Taking the lock from a live holder would let it write on into the shard
  // once it resumes, unseen by readers: a stalled holder is waited for (here
  // within a lockWaitMs longer than its stall).
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1, lockLeaseMs: 200, lockWaitMs: 10_000 });
  cache.set('before', 'kept');
  const warnings = [];
  const onWarning = (warning) => warnings.push(warning.message);
  process.on('warning', onWarning);
  const { worker } = await lockedBy(cache, 900);
  const start = performance.now();
  cache.set('k', 'written after the holder released');
  const waited = performance.now() - start;
  assert.ok(waited >= 600, `waited only ${waited} ms: the lock was taken from a live holder`);
  await once(worker, 'message');
  await worker.terminate();
  // Emitted on the next tick.
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
  assert.equal(cache.stats().lockRecoveries, 0);
  assert.equal(cache.stats().lockTimeouts, 0);
  assert.equal(cache.get('before'), 'kept');
  assert.equal(cache.get('k'), 'written after the holder released');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0],
    /^arenacache: shard 0's lock has been held for \d+ ms by a live thread of process \d+; calls that need it give up after lockWaitMs \(10000 ms\): gets miss, writes fail with ERR_ARENA_BUSY \(a live holder is never taken over: it may be stopped or stalled, and would write on\)$/,
  );
});

test('a live holder that keeps the lock past lockWaitMs: gets miss, writes fail with ERR_ARENA_BUSY, later calls give up at once', { skip: !nativeAvailable && 'native addon unavailable' }, async () => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1, lockLeaseMs: 100, lockWaitMs: 300 });
  cache.set('before', 'kept');
  const { worker, wake } = await lockedBy(cache);
  let start = performance.now();
  assert.equal(cache.get('before'), undefined, 'a get answers as a miss');
  const firstGet = performance.now() - start;
  assert.ok(firstGet >= 250 && firstGet < 2000, `the first get returned after ${firstGet} ms`);
  start = performance.now();
  assert.throws(() => cache.set('k', 'v'), {
    name: 'ArenaCacheError',
    code: 'ERR_ARENA_BUSY',
    message: /^shard 0's lock has been held for \d+ ms by a live thread of process \d+, past lockWaitMs \(300 ms\): nothing was written \(a live holder is never taken over: it may be stopped, as by SIGSTOP or a debugger, or stalled; once it goes on, the lock is free again\)$/,
  });
  assert.throws(() => cache.delete('before'), { code: 'ERR_ARENA_BUSY' });
  assert.equal(cache.has('before'), false);
  assert.equal(cache.peek('before'), undefined);
  assert.equal(cache.info('before'), undefined);
  assert.throws(() => cache.clear(), { code: 'ERR_ARENA_BUSY' });
  assert.throws(() => [...cache.keys()], { code: 'ERR_ARENA_BUSY', message: /its entries were not read/ });
  const verdict = cache.verify();
  assert.equal(verdict.ok, false);
  assert.match(verdict.problems[0], /^shard 0: not checked: its lock is held by a live thread past lockWaitMs \(300 ms\)$/);
  // The holding is known to be stuck: later calls do not wait the bound again.
  assert.ok(performance.now() - start < 250, `the later calls took ${performance.now() - start} ms`);
  // A fetch() returns its loaded value uncached.
  assert.equal(await cache.fetch('f', () => 'loaded'), 'loaded');
  const during = cache.stats();
  assert.equal(during.lockRecoveries, 0);
  assert.ok(during.lockTimeouts >= 9, `lockTimeouts ${during.lockTimeouts}`);
  assert.equal(during.fetchUncached, 1);

  Atomics.store(wake, 0, 1);
  Atomics.notify(wake, 0);
  await once(worker, 'message');
  await worker.terminate();
  assert.equal(cache.get('before'), 'kept', 'nothing was taken over or reset');
  cache.set('k', 'v');
  assert.equal(cache.get('k'), 'v');
  assert.equal(cache.stats().lockRecoveries, 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a live holder given up on stays given up on after a pause: later calls return at once and the warning comes once per holding', { skip: !nativeAvailable && 'native addon unavailable' }, async (t) => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1, lockLeaseMs: 100, lockWaitMs: 300 });
  t.after(() => cache.close());
  const warnings = [];
  const onWarning = (warning) => warnings.push(warning.message);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const { worker, wake } = await lockedBy(cache);
  let released = false;
  t.after(async () => {
    if (released) return;
    Atomics.store(wake, 0, 1);
    Atomics.notify(wake, 0);
    await worker.terminate();
  });
  assert.equal(cache.get('k'), undefined);
  // A thread that looks again only after a while (a busy event loop, a
  // loaded machine) sees the same holding: it must not wait the bound again
  // nor warn again, and the warning's age must be the holding's.
  for (const pauseMs of [500, 1500]) {
    await sleep(pauseMs);
    const started = performance.now();
    assert.equal(cache.get('k'), undefined);
    assert.throws(() => cache.set('k', 'v'), { code: 'ERR_ARENA_BUSY', message: /^shard 0's lock has been held for (\d+) ms/ });
    const took = performance.now() - started;
    assert.ok(took < 150, `after a pause of ${pauseMs} ms, calls on the stuck shard took ${Math.round(took)} ms`);
  }
  const heldFor = Number(/held for (\d+) ms/.exec((() => {
    try {
      cache.set('k', 'v');
    } catch (error) {
      return error.message;
    }
    return '';
  })())?.[1]);
  assert.ok(heldFor >= 2000, `the error says the lock was held for ${heldFor} ms, less than the time since it was taken`);
  await sleep(10);
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  Atomics.store(wake, 0, 1);
  Atomics.notify(wake, 0);
  await once(worker, 'message');
  await worker.terminate();
  released = true;
  assert.equal(cache.stats().lockRecoveries, 0);
  // The next holding is a new one: waited for, and warned about, afresh.
  const again = await lockedBy(cache);
  t.after(async () => {
    Atomics.store(again.wake, 0, 1);
    Atomics.notify(again.wake, 0);
    await again.worker.terminate();
  });
  const started = performance.now();
  assert.equal(cache.get('k'), undefined);
  assert.ok(performance.now() - started >= 250, 'a new holding is waited for up to lockWaitMs again');
  await sleep(10);
  assert.equal(warnings.length, 2, JSON.stringify(warnings));
});

test('a lock that is taken again and again, but never held past the lease, is never taken over', async () => {
  // One shard held for ~10-25 ms at a time by verify() in a worker, over and
  // over, while this thread writes: every holding is short, so no waiter may
  // treat the lock as abandoned however long it waits in total.
  const cache = new SharedCache({ memoryBytes: 8 * MiB, shards: 1, lockLeaseMs: 200 });
  for (let i = 0; i < 20_000; i++) cache.set(`k${i}`, `v${i}`);
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
     import(workerData.lib).then(({ SharedCache }) => {
       const cache = SharedCache.attach(workerData.handle);
       parentPort.postMessage('ready');
       const end = performance.now() + 1500;
       while (performance.now() < end) cache.verify();
       parentPort.postMessage('done');
     });`,
    { eval: true, workerData: { handle: cache.handle, lib: new URL('../lib/index.js', import.meta.url).href } },
  );
  await once(worker, 'message');
  const finished = once(worker, 'message');
  const end = performance.now() + 1400;
  let n = 0;
  while (performance.now() < end) cache.set('x', `y${n++}`);
  await finished;
  await worker.terminate();
  assert.equal(cache.stats().lockRecoveries, 0);
  assert.equal(cache.get('k5'), 'v5');
  assert.equal(cache.size, 20_001);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

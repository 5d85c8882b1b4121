// A lock holder in another process that is stopped (SIGSTOP, a debugger, a
// frozen cgroup) past lockLeaseMs. Taking its lock over would let it write
// on into the shard when it resumes, unseen by the seqlock, so that readers
// copy its bytes as other keys' values. A live holder is therefore never
// taken over, and nothing is reset; but its waiters wait only lockWaitMs:
// gets then miss and writes fail with ERR_ARENA_BUSY, so that a stopped
// process does not freeze every other process's event loop. Killed while
// stopped, it is recognised as dead at once.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath, killProcess, startProcess } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';

/** A worker that sets `key` in the cache of `handle` and reports 'set', or the code it failed with. */
function setInWorker(handle, key, value) {
  return new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(workerData.url).then(({ SharedCache }) => {
       const cache = SharedCache.attach(workerData.handle);
       try {
         cache.set(workerData.key, workerData.value);
         parentPort.postMessage('set');
       } catch (error) {
         parentPort.postMessage(error.code);
       }
       cache.close();
     });`,
    { eval: true, workerData: { url: new URL('../lib/index.js', import.meta.url).href, handle, key, value } },
  );
}

test('a holder stopped for 5 s keeps its lock: other processes\' gets miss within lockWaitMs, writes fail with ERR_ARENA_BUSY, the warning comes meanwhile, nothing is reset', { skip }, async (t) => {
  const path = arenaPath(t);
  const lockWaitMs = 300;
  const cache = SharedCache.open(path, { memoryBytes: 4 * MiB, shards: 1, lockLeaseMs: 200, lockWaitMs });
  t.after(() => cache.close());
  cache.set('before', 'kept');
  const { child } = await startProcess({ mode: 'hold-lock', path, shard: 0 });
  t.after(() => killProcess(child));
  child.kill('SIGSTOP');
  const stoppedAt = performance.now();
  const warnings = [];
  const onWarning = (warning) => warnings.push({ message: warning.message, at: performance.now() - stoppedAt });
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));

  // Every get and set of the shard returns within the bound, over and over, while the holder is stopped.
  let slowest = 0;
  let busyWrites = 0;
  let gets = 0;
  while (performance.now() - stoppedAt < 5000) {
    let started = performance.now();
    assert.equal(cache.get('before'), undefined);
    gets++;
    slowest = Math.max(slowest, performance.now() - started);
    started = performance.now();
    assert.throws(() => cache.set('k', 'v'), { name: 'ArenaCacheError', code: 'ERR_ARENA_BUSY' });
    busyWrites++;
    slowest = Math.max(slowest, performance.now() - started);
    // Let the warning (and the test runner) through.
    await sleep(50);
  }
  assert.ok(slowest < lockWaitMs + 700, `a call took ${Math.round(slowest)} ms`);
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.ok(warnings[0].at < 2000, `the warning came ${Math.round(warnings[0].at)} ms into the stop`);
  assert.match(warnings[0].message, /^arenacache: shard 0's lock has been held for \d+ ms by a live thread of process \d+; calls that need it give up after lockWaitMs \(300 ms\)/);
  // A worker's set, in this process, follows the same rule.
  const worker = setInWorker(cache.handle, 'w', 'from a worker');
  const [outcome] = await once(worker, 'message');
  assert.equal(outcome, 'ERR_ARENA_BUSY');
  const stats = cache.stats();
  assert.equal(stats.lockRecoveries, 0);
  assert.ok(stats.lockTimeouts >= gets + busyWrites, `lockTimeouts ${stats.lockTimeouts}`);

  child.kill('SIGCONT');
  child.send('release');
  await once(child, 'message');
  assert.equal(cache.get('before'), 'kept');
  cache.set('k', 'set once the holder let go');
  assert.equal(cache.get('k'), 'set once the holder let go');
  assert.equal(cache.stats().lockRecoveries, 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a stopped holder that is killed is recognised as dead at once', { skip }, async (t) => {
  const path = arenaPath(t);
  // A lease of a minute: only recognising the dead holder gets us through.
  const cache = SharedCache.open(path, { memoryBytes: 4 * MiB, shards: 1, lockLeaseMs: 60_000 });
  t.after(() => cache.close());
  const { child } = await startProcess({ mode: 'hold-lock', path, shard: 0 });
  child.kill('SIGSTOP');
  await killProcess(child);
  const started = performance.now();
  cache.set('after', 'works');
  assert.ok(performance.now() - started < 2000, `waited ${performance.now() - started} ms`);
  assert.equal(cache.get('after'), 'works');
  assert.equal(cache.stats().lockRecoveries, 1);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

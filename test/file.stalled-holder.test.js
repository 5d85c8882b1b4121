// A lock holder in another process that is stopped (SIGSTOP, a debugger, a
// frozen cgroup) past lockLeaseMs. Taking its lock over would let it write
// on into the shard when it resumes, unseen by the seqlock, so that readers
// copy its bytes as other keys' values. A live holder is therefore never
// taken over: its waiters wait, however long, and nothing is reset. Killed
// while stopped, it is recognised as dead at once.
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

/** A worker that sets `key` in the cache of `handle` and reports when it returns. */
function setInWorker(handle, key, value) {
  return new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(workerData.url).then(({ SharedCache }) => {
       const cache = SharedCache.attach(workerData.handle);
       cache.set(workerData.key, workerData.value);
       cache.close();
       parentPort.postMessage('set');
     });`,
    { eval: true, workerData: { url: new URL('../lib/index.js', import.meta.url).href, handle, key, value } },
  );
}

test('a stopped holder keeps its lock past the lease: writers wait for it, nothing is reset', { skip }, async (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 4 * MiB, shards: 1, lockLeaseMs: 200 });
  t.after(() => cache.close());
  cache.set('before', 'kept');
  const { child } = await startProcess({ mode: 'hold-lock', path, shard: 0 });
  t.after(() => killProcess(child));
  child.kill('SIGSTOP');

  const worker = setInWorker(cache.handle, 'k', 'set once the holder let go');
  let returned = false;
  const set = once(worker, 'message').then(() => {
    returned = true;
  });
  await sleep(1000);
  assert.equal(returned, false, 'the lock was taken from a stopped holder after the 200 ms lease');
  assert.equal(cache.stats().lockRecoveries, 0);

  child.kill('SIGCONT');
  child.send('release');
  await once(child, 'message');
  await set;
  await once(worker, 'exit');
  assert.equal(cache.get('before'), 'kept');
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

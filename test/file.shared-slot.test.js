// More threads than an arena file has counter slots: the last ones share
// the last slot for their counts, but each still has an identity of its own
// (its claim, see lib/arena/common/liveness.js). A stalled holder among them is a
// live holder: never taken over, whatever the lease.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { claimOwnerId } from '../lib/arena/common/liveness.js';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { livenessHold, livenessRelease } from '../lib/native/mapped-file.js';
import { arenaPath } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';

/** A worker that attaches, takes the lock of `key`'s shard (through kFillLocked) and holds it `holdMs`. */
function holdInWorker(handle, key, holdMs) {
  return new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     Promise.all([import(workerData.lib), import(workerData.symbols)]).then(([{ SharedCache }, { kFillLocked }]) => {
       const cache = SharedCache.attach(workerData.handle);
       const { threads } = cache.stats();
       cache[kFillLocked](workerData.key, () => {
         parentPort.postMessage({ holding: true, threads });
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
         return 'held';
       });
       cache.close();
       parentPort.postMessage({ released: true });
     });`,
    {
      eval: true,
      workerData: {
        lib: new URL('../lib/index.js', import.meta.url).href,
        symbols: new URL('../lib/internal-symbols.js', import.meta.url).href,
        handle,
        key,
        holdMs,
      },
    },
  );
}

test('a thread that shares the last counter slot and stalls holding a lock is a live holder: waited for, never taken over after the lease', { skip }, async (t) => {
  const path = arenaPath(t);
  // 1 MiB: 16 counter slots. A lease of 200 ms, far below the stall.
  const cache = SharedCache.open(path, { memoryBytes: MiB, shards: 1, lockLeaseMs: 200, lockWaitMs: 5000 });
  t.after(() => cache.close());
  cache.set('before', 'kept');
  // Every other slot taken by a live claim (held here), so that the worker finds none free.
  const { buffer } = cache.handle;
  const stats = new Int32Array(buffer, 4096, (16 * 256) / 4);
  const held = [];
  for (let slot = 1; slot < 16; slot++) {
    const claimId = 1_000_000 + slot;
    assert.equal(livenessHold(buffer, claimId), true);
    held.push(claimId);
    Atomics.store(stats, slot * 64, claimOwnerId(claimId));
    stats[slot * 64 + 1] = process.pid;
  }
  t.after(() => {
    for (const claimId of held) livenessRelease(buffer, claimId);
  });
  const worker = holdInWorker(cache.handle, 'k', 1200);
  // Listened for before its last message: see file.truncated.test.js.
  const exited = once(worker, 'exit');
  const [first] = await once(worker, 'message');
  assert.equal(first.holding, true);
  const started = performance.now();
  cache.set('after', 'written once the holder let go');
  const waited = performance.now() - started;
  assert.ok(waited >= 800, `waited ${Math.round(waited)} ms: the lock was taken from a live holder after the 200 ms lease`);
  await once(worker, 'message');
  await exited;
  const after = cache.stats();
  assert.equal(after.lockRecoveries, 0);
  assert.equal(after.shardRepairs, 0);
  assert.equal(cache.get('before'), 'kept');
  assert.equal(cache.get('k'), 'held');
  assert.equal(cache.get('after'), 'written once the holder let go');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

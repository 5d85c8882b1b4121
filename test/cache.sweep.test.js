// The sweeper: it reclaims expired entries nobody reads, a bounded slice at a
// time; exactly one thread sweeps and another takes over when it exits; its
// timer never keeps a process alive; sweepIntervalMs, ttlResolution and its
// other options.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { H32_SWEEPER_TID } from '../lib/arena/common/layout.js';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

async function until(condition, ms = 3000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

test('the sweeper reclaims expired entries that nobody reads', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, sweepIntervalMs: 20 });
  for (let i = 0; i < 500; i++) cache.set(`short${i}`, Buffer.alloc(100), { ttl: 30 });
  for (let i = 0; i < 100; i++) cache.set(`long${i}`, Buffer.alloc(100));
  assert.equal(cache.size, 600);
  assert.ok(await until(() => cache.size === 100), `size is still ${cache.size}`);
  const stats = cache.stats();
  assert.equal(stats.sweptEntries, 500);
  assert.equal(stats.expirations, 500);
  assert.ok(stats.sweeps > 0);
  assert.equal(cache.get('long5').length, 100);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  cache.close();
});

test('a sweep examines at most sweepChecks entries: expired entries go a bounded slice at a time', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, shards: 1, sweepIntervalMs: 1_000_000, sweepChecks: 64 });
  for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i, { ttl: 1 });
  await sleep(10);
  const { Sweeper } = await import('../lib/arena/entries/sweep.js');
  const { Arena } = await import('../lib/arena/entries/arena.js');
  const sweeper = new Sweeper(Arena.attach(cache.handle.buffer), -12345);
  const removed = sweeper.sweep(64);
  assert.ok(removed > 0 && removed <= 64, `one sweep removed ${removed}`);
  let total = removed;
  for (let i = 0; i < 10_000 && total < 1000; i++) total += sweeper.sweep(64);
  assert.equal(total, 1000);
  assert.equal(cache.size, 0);
  cache.close();
});

test('sweepIntervalMs: 0 turns the sweeper off', async () => {
  const cache = new SharedCache({ memoryBytes: MiB, sweepIntervalMs: 0 });
  cache.set('k', 1, { ttl: 5 });
  await sleep(60);
  assert.equal(cache.size, 1, 'nothing swept');
  assert.equal(cache.get('k'), undefined, 'but an expired entry is never returned');
  assert.equal(cache.stats().sweeps, 0);
});

test('exactly one thread sweeps, and another takes over when it exits', async () => {
  // The lease is 3 intervals long: a holder whose timer a loaded machine
  // delays past it may lose the lease to another thread (sweeping twice
  // costs time, nothing else). 200 ms intervals keep that out of the test.
  const cache = new SharedCache({ memoryBytes: 4 * MiB, sweepIntervalMs: 200 });
  const header = new Int32Array(cache.handle.buffer, 0, 1024);
  const lib = new URL('../lib/index.js', import.meta.url).href;
  const workers = [1, 2, 3].map(
    () =>
      new Worker(
        `const { workerData, parentPort } = require('node:worker_threads');
         import(workerData.lib).then(({ SharedCache }) => {
           const cache = SharedCache.attach(workerData.handle);
           setInterval(() => {}, 1000);
           parentPort.postMessage('attached');
         });`,
        { eval: true, workerData: { handle: cache.handle, lib } },
      ),
  );
  await Promise.all(workers.map((worker) => once(worker, 'message')));
  // Watch the lease for a while: one holder at a time.
  const holders = new Set();
  for (let i = 0; i < 60; i++) {
    holders.add(Atomics.load(header, H32_SWEEPER_TID));
    await sleep(10);
  }
  holders.delete(0);
  assert.equal(holders.size, 1, `lease holders seen: ${[...holders]}`);
  // Close this thread's cache so only the workers can sweep, then terminate
  // whichever worker holds the lease; another one must take it over.
  cache.close();
  await sleep(500);
  const first = Atomics.load(header, H32_SWEEPER_TID);
  await Promise.all(workers.map((worker) => worker.terminate()));
  const survivors = [1, 2].map(
    () =>
      new Worker(
        `const { workerData, parentPort } = require('node:worker_threads');
         import(workerData.lib).then(({ SharedCache }) => {
           SharedCache.attach(workerData.handle);
           setInterval(() => {}, 1000);
           parentPort.postMessage('attached');
         });`,
        { eval: true, workerData: { handle: cache.handle, lib } },
      ),
  );
  await Promise.all(survivors.map((worker) => once(worker, 'message')));
  const other = SharedCache.attach(cache.handle);
  other.set('expiring', 1, { ttl: 10 });
  assert.ok(await until(() => other.size === 0), 'a surviving thread swept');
  const now = Atomics.load(header, H32_SWEEPER_TID);
  assert.notEqual(now, first, 'the lease moved to a live thread');
  other.close();
  await Promise.all(survivors.map((worker) => worker.terminate()));
});

test('the sweeper timer never keeps a process alive', () => {
  const script = `
    import(${JSON.stringify(new URL('../lib/index.js', import.meta.url).href)}).then(({ SharedCache }) => {
      const cache = new SharedCache({ memoryBytes: 2 ** 20, sweepIntervalMs: 10 });
      cache.set('k', 1, { ttl: 100000 });
      console.log('done');
    });`;
  const start = Date.now();
  const output = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 10_000 });
  assert.equal(output.trim(), 'done');
  assert.ok(Date.now() - start < 5000);
});

test('ttlResolution: 0 reads the clock on every check; a resolution may serve an entry that long past expiry', async () => {
  const exact = new SharedCache({ memoryBytes: MiB, ttlResolution: 0, sweepIntervalMs: 0 });
  exact.set('k', 1, { ttl: 20 });
  await sleep(40);
  assert.equal(exact.get('k'), undefined);
  assert.throws(() => new SharedCache({ memoryBytes: MiB, ttlResolution: -1 }), {
    name: 'RangeError',
    message: 'options.ttlResolution must be an integer from 0 to 60000 milliseconds (got -1)',
  });
});

test('sweeper options are checked', () => {
  assert.throws(() => new SharedCache({ memoryBytes: MiB, sweepIntervalMs: 1.5 }), {
    name: 'RangeError',
    message: 'options.sweepIntervalMs must be an integer from 0 (no sweeping) to 86400000 milliseconds (got 1.5)',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, sweepChecks: 0 }), {
    name: 'RangeError',
    message: 'options.sweepChecks must be an integer from 1 to 1000000 (got 0)',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, sweepChecks: '10' }), {
    name: 'TypeError',
    message: 'options.sweepChecks must be a number (got "10")',
  });
  const child = fileURLToPath(import.meta.url);
  assert.ok(child.endsWith('cache.sweep.test.js'));
});

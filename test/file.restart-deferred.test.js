// A restart that must check every shard (pages that may have been through
// a machine crash) checks inside open() for 50 ms, and leaves the other
// shards locked, to be checked at their first use or by the sweeper
// (leaveUnchecked in lib/arena/common/shard-lock.js). A shard left so is
// never read before its check: a damaged record in it is never served.
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { once } from 'node:events';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { headerFieldIndex } from '../lib/arena/common/layout.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath, forgetCleanClose } from './helpers/arena-files.js';
import { checkValue, makeValue } from './helpers/checked-value.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
// Large enough that checking every shard takes longer than open()'s 50 ms
// on any machine (0.35 µs an entry at best): some shards are left.
const ENTRIES = 400_000;
const SHARDS = 16;

/** A file of ENTRIES checked values, closed as after a machine crash, with one byte flipped in the first record of shards `damaged`. */
function crashedFile(t, { damaged = [], sweepIntervalMs = 60_000 } = {}) {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 96 * MiB, shards: SHARDS, policy: 'lru', max: ENTRIES, sweepIntervalMs });
  for (let i = 0; i < ENTRIES; i++) cache.set(`k${i}`, makeValue(`k${i}`, 1, i, 40));
  assert.equal(cache.size, ENTRIES);
  cache.close();
  forgetCleanClose(path);
  const header = readFileSync(path).subarray(0, 4096);
  const dataOffset = header.readDoubleLE(headerFieldIndex('dataOffset') * 8);
  const regionBytes = header.readDoubleLE(headerFieldIndex('regionBytes') * 8);
  const fd = openSync(path, 'r+');
  for (const shard of damaged) {
    // Every bit of the byte flipped: a byte written over could already hold the value written.
    const at = dataOffset + shard * regionBytes + 60;
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, at);
    byte[0] ^= 0xff;
    writeSync(fd, byte, 0, 1, at);
  }
  closeSync(fd);
  return path;
}

/** Reads every key: each value served is whole; returns how many were served. */
function readAll(cache) {
  let served = 0;
  for (let i = 0; i < ENTRIES; i++) {
    const value = cache.get(`k${i}`);
    if (value === undefined) continue;
    served++;
    assert.equal(checkValue(`k${i}`, value), 'ok', `k${i}`);
  }
  return served;
}

test('a large file that needs checking: open() checks some shards and leaves the rest to their first use; nothing damaged is served', { skip }, (t) => {
  const damaged = [0, 5, 10, 15];
  const path = crashedFile(t, { damaged });
  const cache = SharedCache.open(path);
  const { lastOpen } = cache.stats();
  assert.equal(lastOpen.how, 'checked');
  assert.ok(lastOpen.shardsPending > 0, `some shards left to check (${JSON.stringify(lastOpen)})`);
  assert.equal(lastOpen.shardsChecked + lastOpen.shardsPending, SHARDS);
  const served = readAll(cache);
  const stats = cache.stats();
  assert.equal(stats.lastOpen.shardsPending, 0, 'every shard is checked by its first use');
  assert.equal(stats.shardRepairs, damaged.length, 'each damaged shard repaired once, whether at open or at first use');
  assert.equal(served, ENTRIES - stats.lostEntries);
  assert.ok(stats.checksumFailures >= 1);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  cache.close();
});

test('the sweeper checks the shards left, one per tick, when nothing uses them', { skip }, async (t) => {
  const path = crashedFile(t, { sweepIntervalMs: 20 });
  const cache = SharedCache.open(path);
  assert.ok(cache.stats().lastOpen.shardsPending > 0);
  const deadline = Date.now() + 30_000;
  while (cache.stats().lastOpen.shardsPending > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(cache.stats().lastOpen.shardsPending, 0);
  assert.equal(readAll(cache), ENTRIES);
  cache.close();
});

test('four threads reading the shards left to check at once: each shard is checked once, nothing damaged is served', { skip }, async (t) => {
  const damaged = [1, 2, 3, 4, 12, 13, 14, 15];
  const path = crashedFile(t, { damaged });
  const cache = SharedCache.open(path);
  assert.ok(cache.stats().lastOpen.shardsPending > 0);
  const workers = Array.from({ length: 4 }, (_, w) => {
    const worker = new Worker(
      `
      const { parentPort, workerData } = require('node:worker_threads');
      (async () => {
        const { SharedCache } = await import(workerData.lib);
        const { checkValue } = await import(workerData.checked);
        const cache = SharedCache.attach(workerData.handle);
        let served = 0;
        let bad = 0;
        for (let n = 0; n < workerData.entries; n++) {
          const i = (n * 7919 + workerData.w * 100_003) % workerData.entries;
          const value = cache.get('k' + i);
          if (value === undefined) continue;
          served++;
          if (checkValue('k' + i, value) !== 'ok') bad++;
        }
        cache.close();
        parentPort.postMessage({ served, bad });
      })();
      `,
      {
        eval: true,
        workerData: {
          lib: new URL('../lib/index.js', import.meta.url).href,
          checked: new URL('./helpers/checked-value.js', import.meta.url).href,
          handle: cache.handle,
          entries: ENTRIES,
          w,
        },
      },
    );
    return once(worker, 'message').then(([message]) => message);
  });
  const results = await Promise.all(workers);
  for (const { bad } of results) assert.equal(bad, 0);
  const stats = cache.stats();
  assert.equal(stats.lastOpen.shardsPending, 0);
  assert.equal(stats.shardRepairs, damaged.length);
  // Every entry not lost is served, but for gets that gave up waiting for a
  // shard another thread was checking (lockWaitMs, on a loaded machine):
  // those are misses, each counted in lockTimeouts.
  const unserved = results.reduce((sum, { served }) => sum + (ENTRIES - stats.lostEntries - served), 0);
  assert.equal(unserved, stats.lockTimeouts, `${results.map(({ served }) => served).join(', ')} served of ${ENTRIES - stats.lostEntries}`);
  cache.close();
});

test('verifyOnOpen checks every shard inside open(), however large the file', { skip }, (t) => {
  const path = crashedFile(t, { damaged: [7] });
  const cache = SharedCache.open(path, { verifyOnOpen: true });
  const { lastOpen } = cache.stats();
  assert.equal(lastOpen.shardsChecked, SHARDS);
  assert.equal(lastOpen.shardsPending, 0);
  assert.equal(lastOpen.shardsRepaired, 1);
  cache.close();
});

test('an inspection reads a shard left to check as it is, without waiting for it', { skip }, (t) => {
  const path = crashedFile(t);
  const cache = SharedCache.open(path);
  const pending = cache.stats().lastOpen.shardsPending;
  assert.ok(pending > 0);
  const inspector = SharedCache.inspect(path);
  const started = performance.now();
  const { entries } = inspector.stats();
  assert.equal(entries, ENTRIES);
  assert.equal(inspector.stats().lastOpen.shardsPending, pending);
  const result = inspector.verify();
  assert.deepEqual(result.unchecked, [], 'no shard skipped as busy');
  assert.ok(performance.now() - started < 30_000);
  inspector.close();
  cache.close();
});

test('a file closed while shards were left to check has them rebuilt by the next sole opener', { skip }, (t) => {
  const path = crashedFile(t, { damaged: [3] });
  const cache = SharedCache.open(path);
  const pending = cache.stats().lastOpen.shardsPending;
  assert.ok(pending > 0);
  cache.close();
  // Closed cleanly, but the shards left are still locked: every restart rebuilds a locked shard.
  const reopened = SharedCache.open(path);
  const { lastOpen } = reopened.stats();
  assert.equal(lastOpen.how, 'clean');
  assert.equal(lastOpen.shardsPending, 0);
  assert.ok(lastOpen.shardsRepaired >= pending, `${lastOpen.shardsRepaired} repaired, ${pending} were left`);
  // Every value served is whole (readAll); the damaged record is dropped.
  assert.ok(readAll(reopened) >= ENTRIES - 1000);
  assert.deepEqual(reopened.verify(), { ok: true, problems: [] });
  reopened.close();
});

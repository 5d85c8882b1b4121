// Another process (or a stray `truncate`) shortens an arena file while it is
// mapped. Touching a mapped page past the new end raises SIGBUS, which used
// to kill every process using the cache at its next get. Now the process
// survives: the lost part reads as empty (a miss, never another value) and
// every write is refused with ERR_ARENA_TRUNCATED, in every thread that
// uses the mapping.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { truncateSync } from 'node:fs';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { BlockStore, SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { checkValue, makeValue } from './helpers/checked-value.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
const TRUNCATED_MESSAGE =
  'the arena file was truncated while mapped (by another process, or outside arenacache): ' +
  'this process reads the lost part as empty and refuses writes; close the cache and open the file again';

function isTruncatedError(error) {
  assert.equal(error.name, 'ArenaCacheError');
  assert.equal(error.code, 'ERR_ARENA_TRUNCATED');
  assert.equal(error.message, TRUNCATED_MESSAGE);
  return true;
}

test('a cache whose file is truncated under it serves misses or its own values, refuses writes, and the process lives', { skip }, (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, nearCache: 0 });
  const keys = Array.from({ length: 2000 }, (_, i) => `key:${i}`);
  for (const [i, key] of keys.entries()) cache.set(key, makeValue(key, 1, i, 200));
  // Keep the header and a little more: every shard's slots and records are past the end now.
  truncateSync(path, 64 * 1024);

  let hits = 0;
  for (const key of keys) {
    const value = cache.get(key);
    if (value === undefined) continue;
    assert.equal(checkValue(key, value), 'ok', `${key} came back whole`);
    hits++;
  }
  assert.ok(hits < keys.length, 'the truncated part reads as empty');
  for (const key of keys.slice(0, 50)) assert.throws(() => cache.set(key, 'after'), isTruncatedError);
  assert.throws(() => cache.delete(keys[0]), isTruncatedError);
  assert.throws(() => cache.clear(), isTruncatedError);
  cache.close();

  // The file itself is refused as it is now, with the code it always had.
  assert.throws(() => SharedCache.open(path), { code: 'ERR_ARENA_TRUNCATED' });
});

test('a worker attached to the truncated mapping refuses writes too', { skip }, async (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, nearCache: 0 });
  t.after(() => cache.close());
  for (let i = 0; i < 500; i++) cache.set(`key:${i}`, `value ${i}`);
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     import(workerData.url).then(({ SharedCache }) => {
       const cache = SharedCache.attach(workerData.handle);
       parentPort.postMessage('attached');
       parentPort.once('message', () => {
         const seen = [];
         for (let i = 0; i < 500; i++) {
           const value = cache.get('key:' + i);
           if (value !== undefined && value !== 'value ' + i) seen.push('wrong ' + i);
         }
         try { cache.set('key:1', 'from the worker'); seen.push('set passed'); }
         catch (error) { seen.push(error.code); }
         cache.close();
         parentPort.postMessage(seen);
       });
     });`,
    { eval: true, workerData: { url: new URL('../lib/index.js', import.meta.url).href, handle: cache.handle } },
  );
  // Listened for from the start: a worker that posts and exits before this
  // thread reads its port has its messages delivered and 'exit' emitted in
  // one step (Node drains the port on exit), before a later once() listens.
  const exited = once(worker, 'exit');
  assert.equal((await once(worker, 'message'))[0], 'attached');
  truncateSync(path, 64 * 1024);
  worker.postMessage('go');
  const [seen] = await once(worker, 'message');
  assert.deepEqual(seen, ['ERR_ARENA_TRUNCATED']);
  assert.throws(() => cache.set('key:2', 'from the main thread'), isTruncatedError);
  await exited;
});

test('a block store whose file is truncated under it reads gaps, refuses writes, and the process lives', { skip }, (t) => {
  const path = arenaPath(t);
  const store = BlockStore.open(path, { memoryBytes: 8 * MiB, blockBytes: 4096 });
  const data = Buffer.alloc(4096 * 64, 0x5a);
  store.write(7, 0, data);
  truncateSync(path, 64 * 1024);
  const read = store.read(7, 0, data.length);
  assert.ok(read === undefined || read.equals(data), 'all of it or nothing');
  assert.throws(() => store.write(7, 0, data), isTruncatedError);
  store.close();
});

test('another cache file of the same process is not affected by one truncated file', { skip }, (t) => {
  const damaged = SharedCache.open(arenaPath(t, 'damaged'), { memoryBytes: 4 * MiB, nearCache: 0 });
  const healthy = SharedCache.open(arenaPath(t, 'healthy'), { memoryBytes: 4 * MiB, nearCache: 0 });
  t.after(() => {
    damaged.close();
    healthy.close();
  });
  for (let i = 0; i < 200; i++) damaged.set(`key:${i}`, `value ${i}`);
  truncateSync(damaged.path, 64 * 1024);
  for (let i = 0; i < 200; i++) damaged.get(`key:${i}`);
  assert.throws(() => damaged.set('key:1', 'x'), isTruncatedError);
  for (let i = 0; i < 200; i++) healthy.set(`key:${i}`, `value ${i}`);
  for (let i = 0; i < 200; i++) assert.equal(healthy.get(`key:${i}`), `value ${i}`);
});

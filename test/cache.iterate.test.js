// keys(), values(), entries() and the iterator list every live entry of every
// shard with its type, and under another thread's concurrent writes yield
// each key present throughout exactly once.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

test('keys, values, entries and the iterator list every live entry with its type', () => {
  const cache = new SharedCache({ memoryBytes: 8 * MiB });
  const expected = new Map([
    ['str', 'text'],
    ['obj', { a: 1 }],
    ['buf', Buffer.from([9, 9])],
  ]);
  for (const [key, value] of expected) cache.set(key, value);
  cache.set(Buffer.from('bkey'), 'buffer keyed');
  const entries = new Map([...cache.entries()].map(([key, value]) => [Buffer.isBuffer(key) ? `buffer:${key}` : key, value]));
  assert.deepEqual(entries.get('str'), 'text');
  assert.deepEqual(entries.get('obj'), { a: 1 });
  assert.deepEqual(entries.get('buf'), Buffer.from([9, 9]));
  assert.equal(entries.get('buffer:bkey'), 'buffer keyed');
  assert.equal(entries.size, 4);
  assert.equal([...cache.keys()].length, 4);
  assert.equal([...cache.values()].length, 4);
  assert.deepEqual([...cache].length, 4);
});

test('iteration covers every shard', () => {
  const cache = new SharedCache({ memoryBytes: 32 * MiB });
  for (let i = 0; i < 5000; i++) cache.set(`k${i}`, i);
  const keys = new Set(cache.keys());
  assert.equal(keys.size, 5000);
  for (let i = 0; i < 5000; i++) assert.ok(keys.has(`k${i}`));
  let sum = 0;
  for (const value of cache.values()) sum += value;
  assert.equal(sum, (4999 * 5000) / 2);
});

test('under concurrent writes, keys present throughout are yielded exactly once', async () => {
  const cache = new SharedCache({ memoryBytes: 32 * MiB });
  for (let i = 0; i < 2000; i++) cache.set(`stable${i}`, i);
  const stopFlag = new SharedArrayBuffer(4);
  const worker = new Worker(
    `
    const { workerData, parentPort } = require('node:worker_threads');
    import(workerData.lib).then(({ SharedCache }) => {
      const cache = SharedCache.attach(workerData.handle);
      parentPort.postMessage('started');
      const flag = new Int32Array(workerData.stop);
      for (let i = 0; Atomics.load(flag, 0) === 0; i++) {
        cache.set('churn' + (i % 3000), 'x'.repeat(i % 200));
        if (i % 3 === 0) cache.delete('churn' + ((i * 7) % 3000));
      }
      parentPort.postMessage('done');
    });
    `,
    { eval: true, workerData: { handle: cache.handle, lib: new URL('../lib/index.js', import.meta.url).href, stop: stopFlag } },
  );
  const stop = new Int32Array(stopFlag);
  await once(worker, 'message');
  try {
    for (let round = 0; round < 20; round++) {
      const seen = new Map();
      for (const key of cache.keys()) if (key.startsWith('stable')) seen.set(key, (seen.get(key) ?? 0) + 1);
      assert.equal(seen.size, 2000, `round ${round}`);
      for (const count of seen.values()) assert.equal(count, 1);
    }
  } finally {
    Atomics.store(stop, 0, 1);
    await once(worker, 'message');
    await worker.terminate();
  }
});

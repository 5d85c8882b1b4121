// Reads a string value in a tight loop while a worker rewrites it in place
// with text of the same byte length but another number of characters
// ('é' x N, then 'a' x 2N). Exits 0 when every read was one of the two; a
// crash (V8's UTF-8 decoder fed bytes that change under it) kills it.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';

// A worker does not see the process's arguments: it is told N.
const N = isMainThread ? Number(process.argv[2] ?? 2000) : workerData.n;
const MS = Number(process.argv[3] ?? 1500);
const wide = 'é'.repeat(N);
const narrow = 'a'.repeat(2 * N);

if (isMainThread) {
  const cache = new SharedCache({ memoryBytes: 2 ** 20, shards: 1, nearCache: 0 });
  cache.set('text', wide);
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const writer = new Worker(new URL(import.meta.url), { workerData: { handle: cache.handle, stop: stop.buffer, n: N } });
  await new Promise((resolve) => writer.once('message', resolve));
  let reads = 0;
  const until = Date.now() + MS;
  while (Date.now() < until) {
    for (let i = 0; i < 100; i++) {
      const value = cache.get('text');
      if (value !== wide && value !== narrow) throw new Error(`read a string of ${value?.length} characters that was never written`);
      reads++;
    }
  }
  Atomics.store(stop, 0, 1);
  await new Promise((resolve) => writer.once('exit', resolve));
  console.log(JSON.stringify({ reads }));
} else {
  const cache = SharedCache.attach(workerData.handle, { nearCache: 0 });
  const stop = new Int32Array(workerData.stop);
  parentPort.postMessage('started');
  for (let i = 0; Atomics.load(stop, 0) === 0; i++) cache.set('text', i % 2 === 0 ? narrow : wide);
}

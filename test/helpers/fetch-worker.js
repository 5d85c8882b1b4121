// Worker for cache.fetch.test.js: fetches one key `calls` times at once,
// after all workers are ready, with a loader that counts its runs in a
// shared counter. `mode` chooses the loader: 'value', 'error', 'hang', and
// 'block' (blocks the thread's event loop for `blockMs`, then returns a
// value; its own timeout timer cannot run meanwhile).
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';

const { handle, key, calls, counter, gate, parties, mode, delayMs } = workerData;
const cache = SharedCache.attach(handle);
// A hanging loader must not let the worker exit on its own (a pending
// promise does not keep a thread alive); the test terminates it.
if (mode === 'hang') setInterval(() => {}, 1000);
const runs = new Int32Array(counter);
const barrier = new Int32Array(gate);

async function loader(k) {
  Atomics.add(runs, 0, 1);
  if (mode === 'hang') return new Promise(() => {});
  if (mode === 'block') {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.blockMs);
    return { key: k, loadedBy: workerData.id, blocked: true };
  }
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  if (mode === 'error') {
    const error = new RangeError(`database refused ${k}`);
    error.code = 'EREFUSED';
    throw error;
  }
  return { key: k, loadedBy: workerData.id };
}

Atomics.add(barrier, 0, 1);
while (Atomics.load(barrier, 0) < parties) Atomics.wait(barrier, 1, 0, 1);
const results = await Promise.allSettled(Array.from({ length: calls }, () => cache.fetch(key, loader)));
parentPort.postMessage(
  results.map((r) => (r.status === 'fulfilled' ? { value: r.value } : { error: { name: r.reason.name, message: r.reason.message, code: r.reason.code } })),
);

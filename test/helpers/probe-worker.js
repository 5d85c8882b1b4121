// Attaches and times one set and one get on each of the given keys.
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';

const cache = SharedCache.attach(workerData.handle);
let slowest = 0;
for (const key of workerData.keys) {
  const start = performance.now();
  cache.set(key, 'fresh worker');
  const ok = cache.get(key) === 'fresh worker';
  slowest = Math.max(slowest, performance.now() - start);
  if (!ok) throw new Error(`read back failed for ${key}`);
}
parentPort.postMessage({ slowest });

// Worker for cache.workers.test.js: attaches to the cache in workerData,
// reads what the parent wrote, writes its own keys, and reports.
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';

const cache = SharedCache.attach(workerData.handle);
const seen = workerData.read.map((key) => cache.get(key));
for (const [key, value] of workerData.write) cache.set(key, value);
parentPort.on('message', (message) => {
  // A handle can also arrive later, by postMessage.
  const later = SharedCache.attach(message.handle);
  parentPort.postMessage({ later: later.get(message.key) });
});
parentPort.postMessage({ seen, size: cache.size });

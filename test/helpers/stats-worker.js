// Worker for cache.stats-damage.test.js: attaches to the cache, waits for
// the go word (workerData.go[0]) so that every worker calls stats() at
// once, and reports the threadSlotRepairs it saw.
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';

const cache = SharedCache.attach(workerData.handle);
const go = new Int32Array(workerData.go);
Atomics.add(go, 1, 1);
Atomics.wait(go, 0, 0);
parentPort.postMessage(cache.stats().threadSlotRepairs);

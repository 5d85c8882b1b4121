// Run as a child process with ARENACACHE_NATIVE=off: without the addon a dead
// lock holder cannot be recognised, so recovery must come from the lease.
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { nativeAvailable } from '../../lib/native.js';
import { SharedCache } from '../../lib/index.js';

const cache = new SharedCache({ memoryBytes: 2 ** 20, shards: 1, lockLeaseMs: 300 });
const worker = new Worker(new URL('./lock-holder-worker.js', import.meta.url), {
  workerData: { buffer: cache.handle.buffer, wake: new SharedArrayBuffer(4) },
});
await once(worker, 'message');
await worker.terminate();
const start = performance.now();
cache.set('after', 'recovered');
const waited = performance.now() - start;
console.log(JSON.stringify({ nativeAvailable, waited, value: cache.get('after'), recoveries: cache.stats().lockRecoveries }));

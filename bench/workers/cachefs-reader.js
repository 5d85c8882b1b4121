// One reader thread of the CacheFS ConcurrentReads scenario: reads random
// files of the set for `durationMs` through plain node:fs, a private
// copy-on-read Map, or a CacheFS on the shared cache (with or without its
// near cache).
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { CacheFS } from '../../lib/fs/index.js';
import { createLayer } from '../cachefs/peers.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';

const { layer, root, handle, count, durationMs, seed, barrier, parties } = workerData;
const files = layer.startsWith('CacheFS (shared')
  ? new CacheFS({ root, cache: SharedCache.attach(handle), ...(layer === 'CacheFS (shared, no near cache)' ? { nearCacheBytes: 0 } : {}) })
  : createLayer(layer, root);
const gate = new Int32Array(barrier);
Atomics.add(gate, 0, 1);
while (Atomics.load(gate, 0) < parties) Atomics.wait(gate, 1, 0, 1);
const random = seededRandom(seed);
let reads = 0;
const started = performance.now();
while (performance.now() - started < durationMs) {
  for (let i = 0; i < 64; i++) {
    await files.readFile(`f${random.int(count)}.bin`);
    reads++;
  }
}
parentPort.postMessage({ reads, elapsedMs: performance.now() - started });

// A worker thread for the near-cache tests: a CacheFS (write-through) on a
// shared cache and root that writes checked values (checked-value.js) to
// settings.path with rising sequence numbers, publishing in
// settings.acknowledged the sequence of each write once it has resolved,
// until told to stop (any message); then reports how many it wrote.
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { CacheFS } from '../../lib/fs/index.js';
import { makeValue } from './checked-value.js';

const { cacheHandle, root, path, acknowledged, length } = workerData;
const cfs = new CacheFS({ root, cache: SharedCache.attach(cacheHandle), validateMs: 60_000 });
let stop = false;
parentPort.once('message', () => {
  stop = true;
});
let sequence = 0;
while (!stop) {
  await cfs.writeFile(path, makeValue(path, 1, ++sequence, length));
  Atomics.store(acknowledged, 0, sequence);
  // Let the reader read a few times between writes (and the 'stop' message in).
  await new Promise((resolve) => setTimeout(resolve, 1));
}
await cfs.close();
parentPort.postMessage(sequence);

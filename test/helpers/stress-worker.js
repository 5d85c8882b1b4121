// Hammers a shared cache with get/set/delete/has on overlapping keys until
// told to stop, checking every value it reads. Reports counts.
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { countRead, makeValue } from './checked-value.js';
import { seededRandom } from './random.js';

const { handle, writer, keys, maxLength, stop, seed } = workerData;
const cache = SharedCache.attach(handle);
const stopFlag = new Int32Array(stop);
const random = seededRandom(seed);
const counts = { ops: 0, sets: 0, hits: 0, misses: 0, deletes: 0, ok: 0, torn: 0, foreign: 0 };
let sequence = 0;
parentPort.postMessage({ started: true });
while (Atomics.load(stopFlag, 0) === 0) {
  for (let i = 0; i < 256; i++) {
    const key = keys[random.int(keys.length)];
    const roll = random();
    if (roll < 0.35) {
      cache.set(key, makeValue(key, writer, ++sequence, 20 + random.int(maxLength)));
      counts.sets++;
    } else if (roll < 0.45) {
      cache.delete(key);
      counts.deletes++;
    } else if (roll < 0.5) {
      cache.has(key);
    } else {
      countRead(counts, key, cache.get(key));
    }
    counts.ops++;
  }
}
parentPort.postMessage(counts);

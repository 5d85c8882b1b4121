// A worker thread on a file-backed cache: attaches to the handle it is given
// (the creator's mapping) or opens the path itself (a mapping of its own),
// hammers shared keys with self-checking values for `ms`, closes (or not,
// with `close: false`), and reports its counts.
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { checkValue, makeValue } from './checked-value.js';
import { seededRandom } from './random.js';

const { handle, path, keys, writer, seed, ms, maxLength, close = true } = workerData;
const cache = handle ? SharedCache.attach(handle) : SharedCache.open(path);
const random = seededRandom(seed);
const counts = { ops: 0, ok: 0, torn: 0, foreign: 0, misses: 0 };
const until = performance.now() + ms;
let sequence = 0;
while (performance.now() < until) {
  for (let i = 0; i < 128; i++) {
    const key = keys[random.int(keys.length)];
    if (random() < 0.4) cache.set(key, makeValue(key, writer, ++sequence, 20 + random.int(maxLength)));
    else {
      const value = cache.get(key);
      if (value === undefined) counts.misses++;
      else counts[checkValue(key, value)]++;
    }
    counts.ops++;
  }
}
const verify = cache.verify();
if (close) cache.close();
parentPort.postMessage({ counts, verify });

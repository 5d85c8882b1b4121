// Memory of one thread's private copies: a fresh worker reads the Zipf
// sequence once through a SharedCache attached with its near cache (mode
// "near"), through one without (mode "off", the control: it keeps nothing),
// or through an lru-cache of the near cache's size filled from a SharedCache
// without near cache (mode "lru": the same entries, as a read-through cache
// holds them). Heap and RSS are read after full collections, before and
// after that pass.
import v8 from 'node:v8';
import vm from 'node:vm';
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { SharedCache } from '../../lib/index.js';
import { zipfOrder } from '../lib/hot-workload.js';
import { makeKeys } from '../lib/keys.js';

v8.setFlagsFromString('--expose-gc');
const gc = globalThis.gc ?? vm.runInNewContext('gc');
const { mode, handle, attachOptions, nearCache, keys, s, accesses, seed } = workerData;
const names = makeKeys(keys);
const order = zipfOrder({ keys, s, length: accesses, seed });
const cache = SharedCache.attach(handle, attachOptions);
let lru = null;

async function settled() {
  // Several collections with pauses between them: the first one's
  // finalizers can free more, and V8 returns freed pages to the system from
  // a background thread, after the collection.
  for (let i = 0; i < 4; i++) {
    gc();
    await sleep(50);
  }
  return process.memoryUsage();
}

const before = await settled();
if (mode === 'lru') {
  lru = new LRUCache({ max: nearCache });
  for (let i = 0; i < order.length; i++) {
    const key = names[order[i]];
    if (lru.get(key) === undefined) lru.set(key, cache.get(key));
  }
} else {
  let found = 0;
  for (let i = 0; i < order.length; i++) if (cache.get(names[order[i]]) !== undefined) found++;
  if (found !== order.length) throw new Error(`near-memory: ${order.length - found} of ${order.length} gets missed`);
}
const after = await settled();
// Used after the second reading: V8 may free a top-level value after its
// last use, which would count names and order as freed by the pass.
const distinct = new Set(order).size;
if (names.length !== keys) throw new Error('near-memory: lost the key names');
parentPort.postMessage({
  mode,
  heapDelta: after.heapUsed - before.heapUsed,
  rssDelta: after.rss - before.rss,
  // Buffer bytes live outside the heap (a pooled 64 B Buffer keeps its 8 KiB slab).
  arrayBuffersDelta: after.arrayBuffers - before.arrayBuffers,
  lruEntries: lru === null ? null : lru.size,
  distinct,
});
cache.close();

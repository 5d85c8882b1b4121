// Piscina task for cache.workers.test.js. The cache is attached once per
// worker thread and reused by every task that thread runs.
import { SharedCache } from '../../lib/index.js';

let cache = null;

export default function task({ handle, key, value }) {
  cache ??= SharedCache.attach(handle);
  const before = cache.get(key);
  cache.set(key, value);
  return { before, threadStats: cache.stats().threads };
}

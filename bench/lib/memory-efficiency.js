// Memory efficiency: the fraction of memoryBytes that holds live keys and
// values once the cache is full and evicting (steady state).

import { SharedCache } from '../../lib/index.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';

/**
 * Fills a cache of `memoryBytes` with `factor` times its size of values whose
 * lengths are drawn uniformly from [minBytes, maxBytes].
 */
export function memoryEfficiency({ memoryBytes, minBytes, maxBytes, factor = 3, seed = 7 }) {
  const random = seededRandom(seed);
  const cache = new SharedCache({ memoryBytes });
  const source = Buffer.alloc(maxBytes, 0xab);
  let written = 0;
  let i = 0;
  while (written < factor * memoryBytes) {
    const length = minBytes + Math.floor(random() * (maxBytes - minBytes + 1));
    cache.set(`item:${i++}`, source.subarray(0, length));
    written += length;
  }
  const stats = cache.stats();
  return {
    memoryBytes,
    valueBytes: minBytes === maxBytes ? `${minBytes}` : `${minBytes}-${maxBytes}`,
    entries: stats.entries,
    liveBytes: stats.liveBytes,
    efficiency: stats.liveBytes / memoryBytes,
    evictions: stats.evictions,
  };
}

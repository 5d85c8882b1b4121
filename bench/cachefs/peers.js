// The file layers the CacheFS benchmark compares, behind one interface
// ({ readFile(path), writeFile(path, data) }, paths relative to the root):
// plain node:fs (async and sync), a copy-on-read cache (a Map of file
// contents handing out copies, the usual in-process file cache), and
// CacheFS in each write mode.

import { readFileSync, writeFileSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import { BlockStore, SharedCache } from '../../lib/index.js';
import { CacheFS } from '../../lib/fs/index.js';

/** CacheFS write-through without its near cache: every read goes to the shared cache. */
export const NO_NEAR = 'CacheFS no near cache';

export const LAYERS = Object.freeze(['fs', 'fs sync', 'Map copy-on-read', 'CacheFS write-through', 'CacheFS write-back', 'CacheFS write-around', NO_NEAR]);

/**
 * @param {string} name one of LAYERS
 * @param {string} root
 * @param {{ max?: number }} budget an entry bound for the caches (both
 *   the Map and CacheFS hold at most this many files' worth when given)
 */
export function createLayer(name, root, { maxFiles } = {}) {
  const at = (p) => path.join(root, p);
  if (name === 'fs') return { readFile: (p) => fsp.readFile(at(p)), writeFile: (p, d) => fsp.writeFile(at(p), d), hitRatio: () => null };
  if (name === 'fs sync') {
    return { readFile: async (p) => readFileSync(at(p)), writeFile: async (p, d) => writeFileSync(at(p), d), hitRatio: () => null };
  }
  if (name === 'Map copy-on-read') {
    // Contents cached on first read, a copy handed out on every read (so a
    // caller cannot change the cached bytes), evicted oldest-first beyond
    // maxFiles.
    const map = new Map();
    let hits = 0;
    let reads = 0;
    return {
      async readFile(p) {
        reads++;
        const cached = map.get(p);
        if (cached !== undefined) {
          hits++;
          return Buffer.from(cached);
        }
        const data = await fsp.readFile(at(p));
        map.set(p, Buffer.from(data));
        if (maxFiles !== undefined && map.size > maxFiles) map.delete(map.keys().next().value);
        return data;
      },
      async writeFile(p, d) {
        await fsp.writeFile(at(p), d);
        map.set(p, Buffer.from(d));
      },
      hitRatio: () => (reads === 0 ? 0 : hits / reads),
    };
  }
  const writeMode = name === NO_NEAR ? 'write-through' : name.slice('CacheFS '.length);
  // Each cached file takes two entries (its record and its data).
  const cache = new SharedCache({ memoryBytes: 64 * 2 ** 20, ...(maxFiles === undefined ? {} : { max: Math.max(16, 2 * maxFiles) }) });
  // write-back: dirty files in a block store, flushed by the default background timer (every second) as in production.
  const blocks = writeMode === 'write-back' ? new BlockStore({ memoryBytes: 32 * 2 ** 20, blockBytes: 4096 }) : undefined;
  const cfs = new CacheFS({ root, cache, writeMode, blocks, ...(name === NO_NEAR ? { nearCacheBytes: 0 } : {}) });
  return {
    readFile: (p) => cfs.readFile(p),
    writeFile: (p, d) => cfs.writeFile(p, d),
    hitRatio: () => {
      const { reads, readHits } = cfs.stats();
      return reads === 0 ? 0 : readHits / reads;
    },
    handle: cache.handle,
    writeMode,
  };
}

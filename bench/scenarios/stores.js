// The stores a scenario can run, behind one small interface: { get, set,
// stats(), close() }. A scenario process runs exactly one of them, so the
// interface's call sites stay monomorphic.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { LRUCache } from 'lru-cache';
import { SharedCache } from '../../lib/index.js';
import { arenaBytesFor } from '../lib/keys.js';

export const PEERS = Object.freeze(['lru-cache', 'Map', 'lmdb']);

/** A store of `kind` sized for `entries` values of `payload` bytes. */
export function createStore(kind, { entries, payload, policy }) {
  if (kind === 'arenacache') {
    const cache = new SharedCache({ memoryBytes: arenaBytesFor(entries, payload), max: entries, policy });
    return { get: (key) => cache.get(key), set: (key, value) => cache.set(key, value), stats: () => cache.stats(), close: () => cache.close() };
  }
  if (kind === 'lru-cache') {
    const cache = new LRUCache({ max: entries });
    return { get: (key) => cache.get(key), set: (key, value) => cache.set(key, value), stats: () => null, close: () => {} };
  }
  if (kind === 'Map') {
    const map = new Map();
    return { get: (key) => map.get(key), set: (key, value) => map.set(key, value), stats: () => null, close: () => {} };
  }
  if (kind === 'lmdb') {
    // A cache needs no durability: no fsync, no compression, raw bytes (lmdb's fastest setup).
    const dir = mkdtempSync(path.join(os.tmpdir(), 'arenacache-bench-lmdb-'));
    const db = open({ path: dir, noSync: true, compression: false, encoding: 'binary' });
    return {
      get: (key) => db.getBinaryFast(key),
      set: (key, value) => db.putSync(key, value),
      stats: () => null,
      close: () => {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  throw new RangeError(`unknown store ${kind}`);
}

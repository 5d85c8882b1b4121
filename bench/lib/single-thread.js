// Single-thread get/set throughput of SharedCache and its peers, side by
// side on the same keys, payloads and access order. Each measured call does a
// batch of operations, so timer overhead does not swamp a ~100 ns operation.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { LRUCache } from 'lru-cache';
import { SharedCache } from '../../lib/index.js';
import { arenaBytesFor, makeKeys, makePayload, shuffledOrder } from './keys.js';
import { FloorCache } from './floor-cache.js';
import { measureRates } from './rates.js';

export const BATCH = 1000;


/**
 * @returns {Promise<Record<string, number>>} median ops/s per task name, and
 *   `samples`: every round's ops/s per task
 */
export async function singleThread({ entries, payload, timeMs, rounds, progress }) {
  const keys = makeKeys(entries);
  const order = shuffledOrder(entries);
  const value = makePayload(payload);
  // The same entry bound as the lru-cache peer (it also sizes the dictionary).
  const cache = new SharedCache({ memoryBytes: arenaBytesFor(entries, payload), max: entries });
  const lru = new LRUCache({ max: entries });
  const map = new Map();
  // The floor: a minimal seqlock cache in shared memory (see floor-cache.js).
  const floor = new FloorCache({ memoryBytes: arenaBytesFor(entries, payload), entries });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'arenacache-bench-'));
  // A cache does not need durability: lmdb runs without fsync, uncompressed,
  // storing the raw bytes, which is its fastest configuration.
  const db = open({ path: dir, noSync: true, compression: false, encoding: 'binary' });
  try {
    for (const key of keys) {
      cache.set(key, value);
      lru.set(key, value);
      map.set(key, value);
      floor.set(key, value);
    }
    db.transactionSync(() => {
      for (const key of keys) db.putSync(key, value);
    });
    if (!cache.get(keys[0]).equals(value) || !db.getBinary(keys[0]).equals(value) || !floor.get(keys[0]).equals(value)) {
      throw new Error('bench setup: a peer did not return the stored value');
    }
    // One explicit loop per task: a shared helper taking the operation as a
    // callback would make that call site megamorphic and slow every peer.
    let cursor = 0;
    // Results are counted so that the compiler cannot drop a lookup whose
    // result is unused (it does, for Map#get).
    let found = 0;
    const tasks = {
      'arenacache get': () => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          if (cache.get(keys[order[i]]) !== undefined) found++;
          if (++i === entries) i = 0;
        }
        cursor = i;
      },
      'lru-cache get': () => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          if (lru.get(keys[order[i]]) !== undefined) found++;
          if (++i === entries) i = 0;
        }
        cursor = i;
      },
      'Map get': () => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          if (map.get(keys[order[i]]) !== undefined) found++;
          if (++i === entries) i = 0;
        }
        cursor = i;
      },
      'floor get': () => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          if (floor.get(keys[order[i]]) !== undefined) found++;
          if (++i === entries) i = 0;
        }
        cursor = i;
      },
      'lmdb getBinaryFast': () => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          if (db.getBinaryFast(keys[order[i]]) !== undefined) found++;
          if (++i === entries) i = 0;
        }
        cursor = i;
      },
      'arenacache set': () => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          cache.set(keys[order[i]], value);
          if (++i === entries) i = 0;
        }
        cursor = i;
      },
      'lru-cache set': () => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          lru.set(keys[order[i]], value);
          if (++i === entries) i = 0;
        }
        cursor = i;
      },
      'Map set': () => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          map.set(keys[order[i]], value);
          if (++i === entries) i = 0;
        }
        cursor = i;
      },
      'floor set': () => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          floor.set(keys[order[i]], value);
          if (++i === entries) i = 0;
        }
        cursor = i;
      },
      'lmdb putSync (txn)': () => {
        db.transactionSync(() => {
          let i = cursor;
          for (let n = 0; n < BATCH; n++) {
            db.putSync(keys[order[i]], value);
            if (++i === entries) i = 0;
          }
          cursor = i;
        });
      },
    };
    const { rates, samples } = await measureRates(tasks, { rounds, timeMs, batch: BATCH, progress });
    if (found === 0) throw new Error('bench: no lookup found anything');
    return { ...rates, samples };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

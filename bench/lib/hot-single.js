// Single-thread throughput of one kind of value under the Zipf workload, for
// every contender side by side: SharedCache with and without its near cache,
// lru-cache, an lru-cache holding structuredClone copies, a Map, lmdb and
// (when hot.js started one) Redis through ioredis, unpipelined and
// pipelined, all holding every key, on the same access sequence. Each
// measured call does a batch of operations, so timer overhead does not swamp
// a ~100 ns operation.

import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { LRUCache } from 'lru-cache';
import { Bench } from 'tinybench';
import { SharedCache } from '../../lib/index.js';
import { KINDS, setMask } from './hot-workload.js';
import { REDIS_PIPELINE, redisPeer } from './hot-redis.js';
import { BATCH } from './single-thread.js';
import { median } from './stats.js';

export const CONTENDERS = Object.freeze(['arenacache+near', 'arenacache', 'lru-cache', 'lru-cache+clone', 'Map', 'lmdb', 'redis', 'redis pipelined']);

/**
 * lmdb's fastest honest setup for each kind: no fsync, no compression;
 * objects in msgpack with shared structures (its recommended setup for
 * objects of one shape), strings as UTF-8, Buffers as raw bytes.
 */
const LMDB_OPTIONS = Object.freeze({
  object: { encoding: 'msgpack', sharedStructuresKey: Symbol.for('structures') },
  string: { encoding: 'string' },
  buffer: { encoding: 'binary' },
});

/** Fills lmdb in transactions of this many puts (one of 100,000 4 KiB values would outgrow a write transaction). */
const FILL_CHUNK = 10_000;

/**
 * @param {object} options
 * @param {SharedCache} options.cache the shared cache holding every key (near cache off)
 * @param {object | null} options.nearAttach the near-cache contender's attach options; null skips it
 * @param {number[]} options.mixes percentages of gets, one run each
 * @param {number | null} options.redisPort the loopback port of the run's redis-server; null skips the Redis contenders
 * @returns {Promise<object[]>} one row per mix: median ops/s per contender and every round's
 */
export async function hotSingle({ kind, cache, names, values, order, mixes, nearAttach, redisPort, timeMs, rounds, seed, progress }) {
  const { same } = KINDS[kind];
  const entries = names.length;
  const near = nearAttach !== null ? SharedCache.attach(cache.handle, nearAttach) : null;
  const lru = new LRUCache({ max: entries });
  // What a user who must not share mutable objects between callers does:
  // a copy in at set, a copy out at get.
  const lruClone = new LRUCache({ max: entries });
  const map = new Map();
  for (let k = 0; k < entries; k++) {
    lru.set(names[k], values[k]);
    lruClone.set(names[k], structuredClone(values[k]));
    map.set(names[k], values[k]);
  }
  let redis = null;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'arenacache-bench-hot-'));
  const db = open({ path: dir, noSync: true, compression: false, ...LMDB_OPTIONS[kind] });
  try {
    if (redisPort !== null) {
      progress?.('filling Redis');
      redis = await redisPeer({ port: redisPort, kind, names, values });
    }
    for (let start = 0; start < entries; start += FILL_CHUNK) {
      db.transactionSync(() => {
        for (let k = start; k < Math.min(entries, start + FILL_CHUNK); k++) db.putSync(names[k], values[k]);
      });
    }
    // getBinaryFast's Buffer is reused by the next call: the fast path for
    // Buffers, as bench:core measures it.
    const lmdbRead = kind === 'buffer' ? (key) => db.getBinaryFast(key) : (key) => db.get(key);
    const stores = {
      'arenacache+near': near,
      arenacache: cache,
      'lru-cache': lru,
      'lru-cache+clone': { get: (key) => structuredClone(lruClone.get(key)) },
      Map: map,
      lmdb: { get: lmdbRead },
      redis,
    };
    const check = async (when) => {
      for (let k = 0; k < entries; k += Math.max(1, Math.floor(entries / 97))) {
        for (const [name, store] of Object.entries(stores)) {
          if (store !== null && !same(await store.get(names[k]), values[k])) throw new Error(`bench ${when}: ${name} did not return the value of ${names[k]}`);
        }
      }
    };
    await check('setup');
    // lru-cache and the Map start full: the near cache starts in its steady
    // state too. Two passes over the sequence: a key enters on its second miss.
    if (near !== null) {
      progress?.('filling the near cache');
      for (let pass = 0; pass < 2; pass++) for (let i = 0; i < order.length; i++) near.get(names[order[i]]);
    }

    // One loop per store class: a helper taking the operation as a callback
    // would make that call site megamorphic and slow every peer. The two
    // SharedCache contenders share theirs (one class, one shape).
    const length = order.length;
    let cursor = 0;
    // Results are counted so that the compiler cannot drop a lookup whose
    // result is unused (it does, for Map#get).
    let found = 0;
    const sharedGet = (store) => () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        if (store.get(names[order[i]]) !== undefined) found++;
        if (++i === length) i = 0;
      }
      cursor = i;
    };
    const sharedMix = (store, sets) => () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        const k = order[i];
        if (sets[i] === 1) store.set(names[k], values[k]);
        else if (store.get(names[k]) !== undefined) found++;
        if (++i === length) i = 0;
      }
      cursor = i;
    };
    const lruGet = () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        if (lru.get(names[order[i]]) !== undefined) found++;
        if (++i === length) i = 0;
      }
      cursor = i;
    };
    const lruMix = (sets) => () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        const k = order[i];
        if (sets[i] === 1) lru.set(names[k], values[k]);
        else if (lru.get(names[k]) !== undefined) found++;
        if (++i === length) i = 0;
      }
      cursor = i;
    };
    const cloneGet = () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        if (structuredClone(lruClone.get(names[order[i]])) !== undefined) found++;
        if (++i === length) i = 0;
      }
      cursor = i;
    };
    const cloneMix = (sets) => () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        const k = order[i];
        if (sets[i] === 1) lruClone.set(names[k], structuredClone(values[k]));
        else if (structuredClone(lruClone.get(names[k])) !== undefined) found++;
        if (++i === length) i = 0;
      }
      cursor = i;
    };
    const mapGet = () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        if (map.get(names[order[i]]) !== undefined) found++;
        if (++i === length) i = 0;
      }
      cursor = i;
    };
    const mapMix = (sets) => () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        const k = order[i];
        if (sets[i] === 1) map.set(names[k], values[k]);
        else if (map.get(names[k]) !== undefined) found++;
        if (++i === length) i = 0;
      }
      cursor = i;
    };
    const lmdbGet = () => {
      let i = cursor;
      for (let n = 0; n < BATCH; n++) {
        if (lmdbRead(names[order[i]]) !== undefined) found++;
        if (++i === length) i = 0;
      }
      cursor = i;
    };
    // A batch's sets share one write transaction: lmdb's cheapest way to
    // write synchronously (a transaction per put costs a commit each).
    const lmdbMix = (sets) => () => {
      db.transactionSync(() => {
        let i = cursor;
        for (let n = 0; n < BATCH; n++) {
          const k = order[i];
          if (sets[i] === 1) db.putSync(names[k], values[k]);
          else if (lmdbRead(names[k]) !== undefined) found++;
          if (++i === length) i = 0;
        }
        cursor = i;
      });
    };

    // Redis's loops keep a cursor of their own (they are async); its hits count with the rest.
    const redisCounter = { found: 0 };

    const tasks = [];
    for (const [m, getPercent] of mixes.entries()) {
      const task = (contender, fn, ops = BATCH) => tasks.push({ name: `${getPercent}|${contender}`, mix: m, contender, fn, ops });
      const sets = getPercent === 100 ? null : setMask(length, 100 - getPercent, seed + 1 + m);
      if (sets === null) {
        if (near !== null) task('arenacache+near', sharedGet(near));
        task('arenacache', sharedGet(cache));
        task('lru-cache', lruGet);
        task('lru-cache+clone', cloneGet);
        task('Map', mapGet);
        task('lmdb', lmdbGet);
      } else {
        if (near !== null) task('arenacache+near', sharedMix(near, sets));
        task('arenacache', sharedMix(cache, sets));
        task('lru-cache', lruMix(sets));
        task('lru-cache+clone', cloneMix(sets));
        task('Map', mapMix(sets));
        task('lmdb', lmdbMix(sets));
      }
      if (redis !== null) {
        const { sequential, pipelined } = redis.tasks(order, sets, redisCounter);
        task('redis', sequential, REDIS_PIPELINE);
        task('redis pipelined', pipelined, REDIS_PIPELINE);
      }
    }
    const samples = Object.fromEntries(tasks.map((task) => [task.name, []]));
    for (let round = 0; round < rounds; round++) {
      progress?.(`round ${round + 1}/${rounds}`);
      const bench = new Bench({ time: timeMs, warmupTime: Math.min(100, timeMs) });
      for (const task of tasks) bench.add(task.name, task.fn);
      await bench.run();
      for (const task of bench.tasks) {
        if (task.result.state !== 'completed') throw new Error(`bench task ${task.name} did not complete: ${task.result.state}`, { cause: task.result.error });
        samples[task.name].push((tasks.find((t) => t.name === task.name).ops * 1000) / task.result.period);
      }
    }
    if (found === 0 || (redis !== null && redisCounter.found === 0)) throw new Error('bench: no lookup found anything');
    // Sets wrote each key's own value again, so every store still agrees.
    await check('end');
    return mixes.map((getPercent, m) => {
      const mine = tasks.filter((task) => task.mix === m);
      return {
        getPercent,
        ops: Object.fromEntries(mine.map((task) => [task.contender, median(samples[task.name])])),
        samples: Object.fromEntries(mine.map((task) => [task.contender, samples[task.name]])),
      };
    });
  } finally {
    near?.close();
    await redis?.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// One kind of value of npm run bench:hot, in a process of its own (run with
// --expose-gc): its arena, peers and heap come and go with it, so that one
// kind's gigabyte of 4 KiB strings does not weigh on the next one's figures.
// Fills one SharedCache with every key, then runs the sections asked for:
// near-cache memory (first, while the process is still small), single
// thread, worker threads. Prints one JSON line.

import { SharedCache } from '../../lib/index.js';
import { hotSingle } from '../lib/hot-single.js';
import { nearMemory } from '../lib/hot-memory.js';
import { hotThreads } from '../lib/hot-threads.js';
import { KINDS, nearOptions, zipfOrder } from '../lib/hot-workload.js';
import { arenaBytesFor, makeKeys } from '../lib/keys.js';
import { progressReporter } from '../lib/progress.js';

const { kind, sections, keys, s, accesses, near, nearCache, mixes, timeMs, rounds, workerCounts, workerMs, seed, redisPort } = JSON.parse(process.argv[2]);
const { progress, done } = progressReporter();
const label = KINDS[kind].label;

progress(`${label}: filling`);
const names = makeKeys(keys);
const values = Array.from({ length: keys }, (_, i) => KINDS[kind].make(i));
// The entry bound of the lru-cache peer, and memory for every entry twice
// over: nothing may be evicted (checked below).
// The near cache's attach options: the defaults (nearCache null), or that many entries.
const nearAttach = nearCache === null ? {} : { nearCache };
const cache = new SharedCache({ memoryBytes: arenaBytesFor(keys, KINDS[kind].bytes), max: keys, ...nearOptions(near, 0) });
for (let k = 0; k < keys; k++) cache.set(names[k], values[k]);
globalThis.gc?.();

const result = { kind };
if (sections.includes('memory')) {
  result.memory = await nearMemory({ handle: cache.handle, supported: near, nearAttach, keys, s, accesses, seed, progress: (m) => progress(`${label}, near-cache memory: ${m}`) });
}
if (sections.includes('single')) {
  const order = zipfOrder({ keys, s, length: accesses, seed });
  result.single = await hotSingle({ kind, cache, names, values, order, mixes, nearAttach: near ? nearAttach : null, redisPort, timeMs, rounds, seed, progress: (m) => progress(`${label}, one thread: ${m}`) });
}
// Sets of the worker threads overwrite values: this section comes last.
if (sections.includes('threads')) {
  const setups = [...(near ? [{ store: 'arenacache+near', attachOptions: nearAttach }] : []), { store: 'arenacache', attachOptions: nearOptions(near, 0) }];
  result.threads = await hotThreads({ handle: cache.handle, setups, keys, s, accesses, payload: 64, workerCounts, durationMs: workerMs, rounds, progress: (m) => progress(`${label}, worker threads: ${m}`) });
}
done();

const stats = cache.stats();
result.stats = { entries: stats.entries, evictions: stats.evictions, sets: stats.sets, gets: stats.gets, hits: stats.hits, misses: stats.misses, hitRatio: stats.hitRatio, memoryBytes: stats.memoryBytes, liveBytes: stats.liveBytes };
cache.close();
if (stats.evictions !== 0 || stats.entries !== keys) {
  throw new Error(`bench: the ${label} cache must hold all ${keys} keys, but stats() shows ${stats.entries} entries and ${stats.evictions} evictions`);
}
console.log(JSON.stringify(result));

// Near-cache memory per thread: what a thread holds after reading the
// working set through its SharedCache's near cache, next to an lru-cache of
// the same size holding the same entries; each measured in a fresh worker
// (see bench/workers/near-memory.js).

import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { nearOptions } from './hot-workload.js';

const workerFile = new URL('../workers/near-memory.js', import.meta.url);

async function measure(workerData) {
  const worker = new Worker(workerFile, { workerData });
  const [message] = await Promise.race([once(worker, 'message'), once(worker, 'error').then(([error]) => Promise.reject(error))]);
  await worker.terminate();
  return message;
}

/**
 * @param {object} options
 * @param {boolean} options.supported whether SharedCache takes nearCache (without it, the "near" row is skipped)
 * @returns {Promise<object[]>} one row per mode: heap, ArrayBuffer and RSS deltas, entries held
 */
export async function nearMemory({ handle, supported, nearAttach, keys, s, accesses, seed, progress }) {
  // lru-cache holds as many entries as the near cache may: BENCH_NEAR's, or every key beside the default's.
  const nearCache = nearAttach?.nearCache ?? keys;
  const modes = [
    ...(supported ? [{ mode: 'near', store: 'arenacache+near', attachOptions: nearAttach }] : []),
    { mode: 'lru', store: 'lru-cache', attachOptions: nearOptions(supported, 0) },
    { mode: 'off', store: 'arenacache', attachOptions: nearOptions(supported, 0) },
  ];
  const rows = [];
  for (const { mode, store, attachOptions } of modes) {
    progress?.(store);
    const result = await measure({ mode, handle, attachOptions, nearCache, keys, s, accesses, seed });
    // The near cache keeps at most its entry limit of the keys read (the default's is past any key count here).
    const entries = mode === 'lru' ? result.lruEntries : mode === 'near' ? Math.min(nearCache, result.distinct) : 0;
    rows.push({ store, entries, distinctKeysRead: result.distinct, heapDelta: result.heapDelta, arrayBuffersDelta: result.arrayBuffersDelta, rssDelta: result.rssDelta });
  }
  return rows;
}

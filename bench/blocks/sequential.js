// Sequential block writes: the same blocks, in the same order, into a plain
// SharedArrayBuffer (memcpy: the ceiling), a BlockStore in memory, a
// file-backed BlockStore, and a file through fs.writeSync. Each measured call
// writes BATCH_BYTES, so timer overhead does not count.

import { closeSync, openSync, writeSync } from 'node:fs';
import { Bench } from 'tinybench';
import { makePayload } from '../lib/keys.js';
import { median } from '../lib/stats.js';

export const BATCH_BYTES = 4 * 2 ** 20;


/**
 * MB/s per peer for one block size: { memcpy, memory, file, writeSync, samples }.
 * @param {{ size: number, stores: { memory: import('../../lib/index.js').BlockStore, file: import('../../lib/index.js').BlockStore },
 *   ceiling: Uint8Array, filePath: string, regionBytes: number, timeMs: number, rounds: number }} options
 *   Every peer cycles through `regionBytes` of its target; each store writes
 *   a new file id per pass and drops the one before, so every block written
 *   is a fresh allocation, not an overwrite.
 */
export async function sequentialWrites({ size, stores, ceiling, filePath, regionBytes, timeMs, rounds }) {
  const data = makePayload(size);
  const perBatch = BATCH_BYTES / size;
  const fd = openSync(filePath, 'w');
  const cursors = { memcpy: 0, memory: 0, file: 0, writeSync: 0 };
  const fileIds = { memory: 1, file: 1 };
  // One explicit loop per peer: a shared helper taking the write as a
  // callback would be megamorphic and slow every peer alike.
  const storeTask = (name) => () => {
    const store = stores[name];
    let position = cursors[name];
    for (let n = 0; n < perBatch; n++) {
      if (position + size > regionBytes) {
        store.drop(fileIds[name]++);
        position = 0;
      }
      store.write(fileIds[name], position, data);
      position += size;
    }
    cursors[name] = position;
  };
  const tasks = {
    memcpy: () => {
      let position = cursors.memcpy;
      for (let n = 0; n < perBatch; n++) {
        if (position + size > ceiling.length) position = 0;
        ceiling.set(data, position);
        position += size;
      }
      cursors.memcpy = position;
    },
    memory: storeTask('memory'),
    file: storeTask('file'),
    writeSync: () => {
      let position = cursors.writeSync;
      for (let n = 0; n < perBatch; n++) {
        if (position + size > regionBytes) position = 0;
        writeSync(fd, data, 0, size, position);
        position += size;
      }
      cursors.writeSync = position;
    },
  };
  const samples = Object.fromEntries(Object.keys(tasks).map((name) => [name, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      const bench = new Bench({ time: timeMs, warmupTime: Math.min(100, timeMs) });
      for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
      await bench.run();
      for (const task of bench.tasks) {
        if (task.result.state !== 'completed') throw new Error(`bench task ${task.name} did not complete: ${task.result.state}`, { cause: task.result.error });
        samples[task.name].push(BATCH_BYTES / 1e6 / (task.result.period / 1000));
      }
    }
  } finally {
    closeSync(fd);
    // Leave the stores empty for the next run.
    stores.memory.drop(fileIds.memory);
    stores.file.drop(fileIds.file);
  }
  const result = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, median(list)]));
  return { ...result, samples };
}

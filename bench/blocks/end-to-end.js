// End-to-end file writes: a whole file of `fileBytes` written in `size`-byte
// writes, then handed off for write-back (dirty() listed, every range marked
// clean) and dropped; against memcpy into a SharedArrayBuffer and
// fs.writeSync to a new file. MB/s of file data.

import { closeSync, openSync, writeSync } from 'node:fs';
import { Bench } from 'tinybench';
import { makePayload } from '../lib/keys.js';
import { median } from '../lib/stats.js';


export async function endToEnd({ fileBytes, size, stores, ceiling, filePath, timeMs, rounds }) {
  const data = makePayload(size, 7);
  let nextFile = 1_000_000;
  const storeTask = (store) => () => {
    const file = nextFile++;
    for (let position = 0; position < fileBytes; position += size) store.write(file, position, data);
    for (const range of store.dirty({ file })) store.markClean(range);
    store.drop(file);
  };
  const tasks = {
    memcpy: () => {
      for (let position = 0; position < fileBytes; position += size) ceiling.set(data, position);
    },
    memory: storeTask(stores.memory),
    file: storeTask(stores.file),
    writeSync: () => {
      const fd = openSync(filePath, 'w');
      for (let position = 0; position < fileBytes; position += size) writeSync(fd, data, 0, size, position);
      closeSync(fd);
    },
  };
  const samples = Object.fromEntries(Object.keys(tasks).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const bench = new Bench({ time: timeMs, warmupTime: 0, iterations: 3 });
    for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
    await bench.run();
    for (const task of bench.tasks) {
      if (task.result.state !== 'completed') throw new Error(`bench task ${task.name} did not complete: ${task.result.state}`);
      samples[task.name].push(fileBytes / 1e6 / (task.result.period / 1000));
    }
  }
  const result = Object.fromEntries(Object.entries(samples).map(([name, list]) => [name, median(list)]));
  return { ...result, samples };
}

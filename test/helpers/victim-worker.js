// A worker that writes large values as fast as it can, so that it spends much
// of its time inside shard locks, until it is terminated. With `progress`, it
// counts its operations into a shared counter (used by survivors).
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { asText, checkValue, makeValue } from './checked-value.js';

const { handle, writer, progress } = workerData;
// The near cache on: a kept value must end with every change, even one cut short.
const cache = SharedCache.attach(handle, { nearCache: 1000 });
const counter = progress ? new Int32Array(progress) : null;
let sequence = 0;
let bad = 0;
parentPort.postMessage({ started: true });
for (;;) {
  const key = `victim:${(sequence * 7 + writer) % 300}`;
  const written = makeValue(key, writer, ++sequence, 1000 + ((sequence * 7919) % 30_000));
  // Every other value as a string, which readers' near caches keep (up to 16 KiB).
  cache.set(key, sequence % 2 === 0 ? asText(written) : written);
  const other = `victim:${(sequence * 13) % 300}`;
  const value = cache.get(other);
  if (value !== undefined && checkValue(other, value) !== 'ok') bad++;
  if (sequence % 5 === 0) cache.delete(`victim:${(sequence * 3) % 300}`);
  if (counter) {
    Atomics.add(counter, 0, 1);
    Atomics.store(counter, 1, bad);
  }
}

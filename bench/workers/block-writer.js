// One writer thread of the concurrent block benchmark: writes `size`-byte
// blocks sequentially through its files, round after round, into a shared
// BlockStore (or, for the peer, files through fs.writeSync) for `durationMs`.
import { closeSync, openSync, writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { BlockStore } from '../../lib/index.js';
import { makePayload } from '../lib/keys.js';

const { handle, files, filePaths, fileBytes, size, durationMs, barrier, parties } = workerData;
const data = makePayload(size, files[0] + 1);
const store = handle ? BlockStore.attach(handle) : null;
const fds = filePaths ? filePaths.map((path) => openSync(path, 'w')) : null;
// Start together.
const gate = new Int32Array(barrier);
Atomics.add(gate, 0, 1);
while (Atomics.load(gate, 0) < parties) Atomics.wait(gate, 1, 0, 1);
let bytes = 0;
const started = performance.now();
const until = started + durationMs;
while (performance.now() < until) {
  for (let f = 0; f < files.length; f++) {
    for (let position = 0; position < fileBytes; position += size) {
      if (store) store.write(files[f], position, data);
      else writeSync(fds[f], data, 0, size, position);
    }
    bytes += fileBytes;
  }
}
const elapsedMs = performance.now() - started;
if (fds) for (const fd of fds) closeSync(fd);
store?.close();
parentPort.postMessage({ bytes, elapsedMs });

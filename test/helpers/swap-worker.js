// Swaps two paths over and over (renameat2 RENAME_EXCHANGE, or three renames
// without the addon) until the shared flag is set: a directory inside a root
// traded for a symbolic link that leads out of it, as an attacker who can
// write to that directory would, racing every check against every use.
import { renameSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { exchangePaths, nativeAvailable } from '../../lib/native.js';

const { a, b, stop, swaps } = workerData;
const flag = new Int32Array(stop);
const counter = new Int32Array(swaps);
const spare = `${a}.spare`;

while (Atomics.load(flag, 0) === 0) {
  if (nativeAvailable) {
    exchangePaths(a, b);
  } else {
    renameSync(a, spare);
    renameSync(b, a);
    renameSync(spare, b);
  }
  Atomics.add(counter, 0, 1);
}

// Takes shard 0's lock through the arena internals and then blocks while
// holding it, as a worker would that is stuck (or dies) in a critical section.
// When woken through `wake` (or after workerData.holdMs, if given), it
// releases the lock and reports.
import { parentPort, workerData } from 'node:worker_threads';
import { Arena } from '../../lib/arena/arena.js';

const arena = Arena.attach(workerData.buffer);
const shard = arena.shards[0];
const held = arena.lock.acquire(shard);
const wake = new Int32Array(workerData.wake);
parentPort.postMessage({ locked: true });
Atomics.wait(wake, 0, 0, workerData.holdMs ?? Infinity);
arena.lock.release(shard, held);
parentPort.postMessage({ released: true });

// A worker thread's share of a linearizability history (see history.js).
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { recordHistory } from './history.js';

const { handle, ops, writer, clock, barrier, parties, nearCache, form } = workerData;
const cache = SharedCache.attach(handle, { nearCache });
parentPort.postMessage(recordHistory(cache, ops, writer, new Int32Array(clock), new Int32Array(barrier), parties, form));

// Runs its share of an operation sequence against a shared cache and records
// the history: every operation with logical start/end times from a shared
// clock (Atomics.add gives a total order consistent with real time).
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { checkValue, makeValue, valueOrigin } from './checked-value.js';

const { handle, ops, writer, clock, barrier, parties } = workerData;
const cache = SharedCache.attach(handle);
const time = new Int32Array(clock);
const gate = new Int32Array(barrier);

// Start together, so the operations really overlap.
Atomics.add(gate, 0, 1);
while (Atomics.load(gate, 0) < parties) Atomics.wait(gate, 1, 0, 1);

const history = [];
let sequence = 0;
for (const [type, key, length] of ops) {
  const entry = { type, key, writer, sequence: 0, start: 0, end: 0, result: null };
  if (type === 'set') {
    entry.sequence = ++sequence;
    const value = makeValue(key, writer, entry.sequence, length);
    entry.start = Atomics.add(time, 0, 1);
    cache.set(key, value);
    entry.end = Atomics.add(time, 0, 1);
  } else if (type === 'delete') {
    entry.start = Atomics.add(time, 0, 1);
    entry.result = cache.delete(key);
    entry.end = Atomics.add(time, 0, 1);
  } else {
    entry.start = Atomics.add(time, 0, 1);
    const value = cache.get(key);
    entry.end = Atomics.add(time, 0, 1);
    if (value === undefined) entry.result = null;
    else {
      const check = checkValue(key, value);
      entry.result = check === 'ok' ? valueOrigin(value) : check;
    }
  }
  history.push(entry);
}
parentPort.postMessage(history);

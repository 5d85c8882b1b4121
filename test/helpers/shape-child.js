// A worker thread or child process for the codec structure tests (settings
// from workerData, or fork()'s one JSON argument). It attaches to `handle` or
// opens `path`, then, by `mode`:
//
//   write    sets objects of new shapes (tag, [from, to)), after the `start`
//            barrier (an Int32Array word set to 1) when one is given
//   read     reports readShapes() counts for tag, [from, to)
//   forever  sets objects of ever new shapes in a tight loop until it is
//            terminated or killed; says { ready } after the first ones
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { paddedShapeValue, readShapes, writeShapes } from './shapes.js';

const settings = isMainThread ? JSON.parse(process.argv[2]) : workerData;
const send = (message) => (isMainThread ? process.send(message) : parentPort.postMessage(message));
const { mode, tag, from, to } = settings;
const cache = settings.handle ? SharedCache.attach(settings.handle) : SharedCache.open(settings.path);

if (mode === 'write') {
  if (settings.start) {
    const start = new Int32Array(settings.start);
    Atomics.add(start, 1, 1);
    Atomics.wait(start, 0, 0);
  }
  writeShapes(cache, tag, from, to);
  if (settings.path) await cache.flush();
  send({ done: true, verify: cache.verify() });
} else if (mode === 'read') {
  send({ counts: readShapes(cache, tag, from, to), verify: cache.verify() });
} else if (mode === 'forever') {
  // Long key names make each append write more, so a kill lands inside one more often.
  const padding = 'x'.repeat(settings.padding ?? 0);
  for (let i = 0; ; i++) {
    cache.set(`${tag}:${i}`, paddedShapeValue(tag, i, padding));
    if (i === 20) send({ ready: true });
  }
}
if (isMainThread) {
  cache.close();
  process.disconnect();
}

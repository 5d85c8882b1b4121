// A worker thread or child process for the CacheFS write-back tests: a
// CacheFS in write-back mode on a shared root, block store and cache.
// workerData (worker) or argv[2] (child, JSON) names the mode:
//
//   write-once  writes settings.files ({ path: text }), reports 'written',
//               then waits to be terminated or killed (never flushes)
//   write-exit  writes settings.files and returns: the process exits on
//               its own (the exit hook must flush)
//   hammer      writes checked values (checked-value.js) to settings.paths
//               and reads them back, counting torn reads, until told 'stop'
//               or terminated; reports its counts
import { parentPort, workerData } from 'node:worker_threads';
import { BlockStore, SharedCache } from '../../lib/index.js';
import { CacheFS } from '../../lib/fs/index.js';
import { checkValue, makeValue } from './checked-value.js';
import { seededRandom } from './random.js';

const settings = workerData ?? JSON.parse(process.argv[2]);
const send = (message) => (parentPort ? parentPort.postMessage(message) : process.send(message));
const onMessage = (listener) => (parentPort ? parentPort.on('message', listener) : process.on('message', listener));

const cache = settings.cacheHandle ? SharedCache.attach(settings.cacheHandle) : new SharedCache({ memoryBytes: 4 * 2 ** 20 });
const blocks = settings.blocksHandle ? BlockStore.attach(settings.blocksHandle) : BlockStore.open(settings.blocksPath);
const cfs = new CacheFS({ root: settings.root, cache, blocks, writeMode: 'write-back', flushIntervalMs: 0, validateMs: settings.validateMs ?? 1000 });

if (settings.mode === 'write-once' || settings.mode === 'write-exit') {
  for (const [path, text] of Object.entries(settings.files)) await cfs.writeFile(path, text);
  if (settings.mode === 'write-once') {
    send('written');
    // Stay alive (and dirty) until terminated or killed.
    setInterval(() => {}, 1000);
  } else if (process.send) {
    process.disconnect();
  }
} else if (settings.mode === 'hammer') {
  const random = seededRandom(settings.seed);
  const counts = { writes: 0, reads: 0, ok: 0, torn: 0, foreign: 0 };
  let stop = false;
  onMessage((message) => {
    if (message === 'stop') stop = true;
  });
  send('ready');
  let sequence = 0;
  while (!stop) {
    // Cache hits and write-back writes complete without I/O: let the 'stop' message in.
    if ((counts.writes + counts.reads) % 64 === 0) await new Promise(setImmediate);
    const path = settings.paths[random.int(settings.paths.length)];
    if (random() < 0.4) {
      await cfs.writeFile(path, makeValue(path, settings.writer, ++sequence, 20 + random.int(settings.maxLength)));
      counts.writes++;
    } else {
      const value = await cfs.readFile(path);
      counts.reads++;
      if (value.length > 0) counts[checkValue(path, value)]++;
    }
  }
  send(counts);
}

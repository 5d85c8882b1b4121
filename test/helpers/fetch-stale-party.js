// A party of cache.fetch-stale.test.js: a worker thread attached to the
// test's cache, or a child process (fork) opening its file. On 'fetch' it
// fetches key 'k' with a slow loader and stale-while-revalidate, and answers
// (with the id) with the value and how long the call took.
import { parentPort, workerData } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedCache } from '../../lib/index.js';

const params = workerData ?? JSON.parse(process.argv[2]);
const send = (message) => (parentPort ? parentPort.postMessage(message) : process.send(message));
const cache = params.path ? SharedCache.open(params.path) : SharedCache.attach(params.handle);

async function loader(key, { staleValue }) {
  await sleep(params.loadMs);
  return `${params.next} (after ${staleValue}) by ${params.id}`;
}

(parentPort ?? process).on('message', async (message) => {
  if (message?.op === 'fetch') {
    const start = performance.now();
    const value = await cache.fetch('k', loader, { ttl: 60_000, staleWhileRevalidate: 60_000 });
    send({ id: message.id, value, ms: performance.now() - start });
  } else if (message === 'close') {
    cache.close();
    if (parentPort) parentPort.close();
    else process.disconnect();
  }
});
send('ready');

// A host of the invalidation tests, run as a child process (fork): its own
// SharedCache and InvalidationBus, driven by IPC messages from the test.
//
//   { id, cmd: 'set' | 'delete' | 'get' | 'clear', key, value }   key: string, or { bytes: [..] }
//   { id, cmd: 'seed', key, value }   a set that is not published (through an instance attached to the bare buffer)
//   { id, cmd: 'stats' }  { id, cmd: 'setPeers', peers }  { id, cmd: 'close' }
//   { id, cmd: 'workers', op: 'set' | 'delete' | 'get', keys, value }   the same from 2 worker threads attached by handle
// Each command is answered with { id, result } or { id, error }. On start the
// child sends { ready: true, port } (port: UDP only).
import { Worker } from 'node:worker_threads';
import { InvalidationBus, SharedCache } from '../../lib/index.js';

const options = JSON.parse(process.argv[2]);
const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
const bus = new InvalidationBus(cache, options);
bus.on('error', () => {});
await bus.start();
// Attached from the bare buffer: no outbox, so its writes are not published.
const quiet = SharedCache.attach(cache.handle.buffer);

const toKey = (key) => (typeof key === 'string' ? key : Buffer.from(key.bytes));
const fromValue = (value) => (value === undefined ? null : Buffer.isBuffer(value) ? { bytes: [...value] } : value);

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.lib).then(({ SharedCache }) => {
  const cache = SharedCache.attach(workerData.handle);
  const out = [];
  for (const key of workerData.keys) {
    if (workerData.op === 'set') cache.set(key, workerData.value);
    else if (workerData.op === 'delete') cache.delete(key);
    else out.push(cache.get(key) ?? null);
  }
  parentPort.postMessage(out);
});
`;

function inWorker(op, keys, value) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { lib: new URL('../../lib/index.js', import.meta.url).href, handle: cache.handle, op, keys, value },
    });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

const commands = {
  set: ({ key, value }) => void cache.set(toKey(key), value),
  seed: ({ key, value }) => void quiet.set(toKey(key), value),
  delete: ({ key }) => cache.delete(toKey(key)),
  get: ({ key }) => fromValue(cache.get(toKey(key))),
  clear: () => cache.clear(),
  stats: () => cache.stats(),
  setPeers: ({ peers }) => bus.setPeers(peers),
  workers: async ({ op, keys, value }) => {
    const half = Math.ceil(keys.length / 2);
    const parts = await Promise.all([inWorker(op, keys.slice(0, half), value), inWorker(op, keys.slice(half), value)]);
    return parts.flat();
  },
  close: async () => {
    await bus.close();
    cache.close();
    setImmediate(() => process.disconnect());
  },
};

process.on('message', async ({ id, cmd, ...args }) => {
  try {
    process.send({ id, result: (await commands[cmd](args)) ?? null });
  } catch (error) {
    process.send({ id, error: error.message });
  }
});
process.send({ ready: true, port: bus.address?.port ?? null });

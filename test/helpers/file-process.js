// A child process for the file-backed arena tests (started with fork(); its
// one argument is a JSON object naming the mode and its settings). Reports
// to the parent over IPC.
//
//   hammer    get/set/delete on shared keys with self-checking values until
//             the parent sends 'stop'; reports counts and the slowest op
//   writer    writes large values to shared keys in a tight loop, forever
//             (the parent kills it with SIGKILL in the middle of writes)
//   hold-lock takes a shard's lock and waits there to be killed (or for
//             'release', which releases it and reports)
//   put       sets keys to checked values, flushes, exits
//   get       reads keys and reports which were there and whole
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { openArenaFile } from '../../lib/arena/file.js';
import { BlockStore, SharedCache } from '../../lib/index.js';
import { makeBlock } from './block-value.js';
import { asText, checkValue, countRead, makeValue } from './checked-value.js';
import { seededRandom } from './random.js';

const settings = JSON.parse(process.argv[2]);
const { mode, path } = settings;

async function hammer() {
  // The near cache on: a kept value must end with every change, even one cut short by a kill.
  const cache = SharedCache.open(path, { nearCache: 1000 });
  const random = seededRandom(settings.seed);
  const counts = { ops: 0, sets: 0, hits: 0, misses: 0, ok: 0, torn: 0, foreign: 0, slowestMs: 0 };
  let stop = false;
  process.on('message', (message) => {
    if (message === 'stop') stop = true;
  });
  process.send({ ready: true });
  let sequence = 0;
  while (!stop) {
    for (let i = 0; i < 64; i++) {
      const key = settings.keys[random.int(settings.keys.length)];
      const started = performance.now();
      if (random() < 0.3) {
        const value = makeValue(key, settings.writer, ++sequence, 20 + random.int(settings.maxLength));
        // Every other value as a string, which the near cache keeps.
        cache.set(key, sequence % 2 === 0 ? asText(value) : value);
        counts.sets++;
      } else if (random() < 0.1) {
        cache.delete(key);
      } else {
        countRead(counts, key, cache.get(key));
      }
      counts.slowestMs = Math.max(counts.slowestMs, performance.now() - started);
      counts.ops++;
    }
    await yieldToEvents();
  }
  process.send({ counts, stats: cache.stats(), verify: cache.verify() });
  cache.close();
  // The 'message' listener would keep the IPC channel, and so the process, alive.
  process.disconnect();
}

function writer() {
  const cache = SharedCache.open(path);
  const random = seededRandom(settings.seed);
  const values = settings.keys.map((key, i) => makeValue(key, settings.writer, i, settings.minLength + random.int(settings.maxLength - settings.minLength)));
  process.send({ ready: true });
  for (let round = 0; ; round++) {
    const i = random.int(settings.keys.length);
    cache.set(settings.keys[i], values[i]);
  }
}

function holdLock() {
  const { arena } = openArenaFile(path, { plan: null, reset: false, mode: 0o600, populate: false });
  const shard = arena.shards[settings.shard];
  const held = arena.lock.acquire(shard);
  process.send({ locked: true });
  // Stay inside the critical section until killed, or told to leave it.
  const timer = setInterval(() => {}, 1000);
  process.on('message', (message) => {
    if (message !== 'release') return;
    arena.lock.release(shard, held);
    clearInterval(timer);
    process.send({ released: true });
  });
}

async function put() {
  const cache = SharedCache.open(path, settings.options);
  for (const key of settings.keys) cache.set(key, makeValue(key, settings.writer, 1, settings.length));
  await cache.flush();
  process.send({ done: true, stats: cache.stats() });
  cache.close();
}

function get() {
  const cache = SharedCache.open(path);
  const found = {};
  for (const key of settings.keys) {
    const value = cache.get(key);
    found[key] = value === undefined ? 'missing' : checkValue(key, value);
  }
  process.send({ found, stats: cache.stats() });
  cache.close();
}

// BlockStore: writes whole self-checking blocks, reports, and waits to be killed.
function blockWrite() {
  const store = BlockStore.open(path, { memoryBytes: 8 * 2 ** 20, blockBytes: settings.blockBytes });
  for (let file = 0; file < settings.files; file++) {
    for (let index = 0; index < settings.blocks; index++) store.write(file, index * store.blockBytes, makeBlock(store.blockBytes, file, index, 1, 1));
  }
  process.send({ written: true });
  setInterval(() => {}, 1000);
}

// BlockStore: rewrites whole blocks in a tight loop until killed.
function blockWriter() {
  const store = BlockStore.open(path);
  const random = seededRandom(settings.seed);
  const size = store.blockBytes;
  const blocks = [];
  for (let file = 0; file < settings.files; file++) {
    for (let index = 0; index < settings.blocks; index++) blocks.push([file, index, makeBlock(size, file, index, settings.writer, index)]);
  }
  process.send({ ready: true });
  for (;;) {
    const [file, index, block] = blocks[random.int(blocks.length)];
    store.write(file, index * size, block);
    if (random() < 0.05) for (const range of store.dirty()) store.markClean(range);
  }
}

const modes = { hammer, writer, 'hold-lock': holdLock, put, get, 'block-write': blockWrite, 'block-writer': blockWriter };
await modes[mode]();

// npm run bench:invalidation — how fast an invalidation reaches another host,
// over UDP and over Redis (a throwaway redis-server on loopback, skipped with
// a reason when redis-server is not installed), batched (the defaults:
// batchIntervalMs 2, batchMaxKeys 256) and unbatched (batchIntervalMs 0,
// batchMaxKeys 1: every write its own message).
//
// The sender is this process: a SharedCache and its InvalidationBus. The
// receiver is a child process (bench/invalidation/receiver.js) with its own
// cache and bus; it notes the wall-clock time at which each key was applied.
//   latency     one cache.delete() every BENCH_GAP_MS (1) ms, BENCH_LATENCY_KEYS
//               (1000) in all; latency = applied at the receiver minus the
//               moment of the local delete (both clocks are this machine's),
//               p50/p99/max over all keys.
//   throughput  BENCH_THROUGHPUT_KEYS (100000; unbatched a tenth) distinct
//               keys deleted as fast as the sender can, yielding to the event
//               loop every 1000 (the bus runs in this thread); keys/s = keys
//               applied at the receiver / time from the first delete until
//               the last one arrived. UDP may drop datagrams when the
//               receiver's socket buffer fills: the lost keys are reported;
//               so are outbox overflows (writes faster than the bus sends:
//               peers get a clear instead of those keys).
// Both processes share the machine's 2 cores, so these are loopback figures:
// they measure the library and the kernel, not a network.
//
// Environment: BENCH_LATENCY_KEYS, BENCH_THROUGHPUT_KEYS, BENCH_GAP_MS,
// BENCH_JSON=path or --json path (the rows as JSON).
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { jsonPath, positiveInt } from './lib/env.js';
import { formatRate, printTable } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { summarizeLatency } from './lib/latency.js';
import { freePort, redisMissing, startRedis } from '../test/helpers/redis-server.js';

const LATENCY_KEYS = positiveInt('BENCH_LATENCY_KEYS', 1000);
const THROUGHPUT_KEYS = positiveInt('BENCH_THROUGHPUT_KEYS', 100_000);
const GAP_MS = positiveInt('BENCH_GAP_MS', 1);
const SECRET = 'the benchmark secret, 32 bytes..';
const MODES = {
  batched: { batchIntervalMs: 2, batchMaxKeys: 256 },
  unbatched: { batchIntervalMs: 0, batchMaxKeys: 1 },
};

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function startReceiver(options) {
  const child = fork(new URL('./invalidation/receiver.js', import.meta.url), [JSON.stringify(options)]);
  const ask = (message) =>
    new Promise((resolve) => {
      child.once('message', resolve);
      child.send(message);
    });
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the receiver exited with ${code}`)));
    child.once('message', ({ port }) => resolve({ port, ask, close: () => new Promise((done) => child.once('exit', done) && child.send({ cmd: 'close' })) }));
  });
}

/** Waits until the receiver has `want` keys of `prefix`, or until nothing new came for 2 s. */
async function awaitArrivals(receiver, prefix, want) {
  let last = -1;
  let lastChange = Date.now();
  for (;;) {
    const { count } = await receiver.ask({ cmd: 'count', prefix });
    if (count >= want) return count;
    if (count !== last) {
      last = count;
      lastChange = Date.now();
    } else if (Date.now() - lastChange > 2000) return count;
    await sleep(20);
  }
}

async function measure(transport, mode, transportOptions) {
  const busOptions = { secret: SECRET, ...transportOptions, ...MODES[mode] };
  const receiver = await startReceiver({ secret: SECRET, ...transportOptions });
  const cache = new SharedCache({ memoryBytes: 16 * 2 ** 20 });
  const sender = await new InvalidationBus(cache, busOptions).start();
  if (transport === 'udp') sender.setPeers([`127.0.0.1:${receiver.port}`]);
  // Redis: let the receiver's subscription settle.
  await sleep(100);
  try {
    const sentAt = new Map();
    for (let i = 0; i < LATENCY_KEYS; i++) {
      const key = `lat:${i}`;
      sentAt.set(key, now());
      cache.delete(key);
      await sleep(GAP_MS);
    }
    await awaitArrivals(receiver, 'lat:', LATENCY_KEYS);
    const { applied } = await receiver.ask({ cmd: 'report', prefix: 'lat:' });
    const latency = summarizeLatency(applied.map(([key, at]) => at - sentAt.get(key)));

    const keys = mode === 'unbatched' ? Math.max(1, Math.floor(THROUGHPUT_KEYS / 10)) : THROUGHPUT_KEYS;
    const before = cache.stats();
    const start = now();
    for (let i = 0; i < keys; i++) {
      cache.delete(`tp:${i}`);
      if (i % 1000 === 999) await new Promise(setImmediate);
    }
    const received = await awaitArrivals(receiver, 'tp:', keys);
    const { applied: arrivals } = await receiver.ask({ cmd: 'report', prefix: 'tp:' });
    const lastArrival = arrivals.reduce((max, [, at]) => Math.max(max, at), start);
    const after = cache.stats();
    const seconds = (lastArrival - start) / 1000;
    return {
      transport,
      mode,
      latency,
      latencyLost: LATENCY_KEYS - applied.length,
      throughput: {
        keys,
        received,
        lost: keys - received,
        seconds,
        keysPerSecond: received / seconds,
        messages: after[`${transport}BatchesSent`] - before[`${transport}BatchesSent`],
        overflows: after.invalidationOverflows - before.invalidationOverflows,
      },
    };
  } finally {
    await sender.close();
    cache.close();
    await receiver.close();
  }
}

const machine = describeMachine();
console.log(`invalidation between two processes on loopback — ${machine.cpu}, ${machine.cores} cores, Node ${process.version}`);
const rows = [];
const skipped = {};
for (const mode of Object.keys(MODES)) rows.push(await measure('udp', mode, { udp: {} }));
const missing = redisMissing();
if (missing === null) {
  const redis = await startRedis(await freePort());
  try {
    for (const mode of Object.keys(MODES)) rows.push(await measure('redis', mode, { redis: { connection: redis.url } }));
  } finally {
    await redis.kill();
  }
} else {
  skipped.redis = missing;
  console.log(`Redis rows skipped: ${missing}`);
}

printTable(
  rows.map((row) => ({
    transport: row.transport,
    mode: row.mode,
    'p50 ms': (row.latency.p50Us / 1000).toFixed(2),
    'p99 ms': (row.latency.p99Us / 1000).toFixed(2),
    'max ms': (row.latency.maxUs / 1000).toFixed(2),
    'keys/s': formatRate(row.throughput.keysPerSecond),
    keys: row.throughput.keys,
    lost: row.throughput.lost,
    messages: row.throughput.messages,
    overflows: row.throughput.overflows,
  })),
);
const json = jsonPath();
if (json) writeFileSync(json, `${JSON.stringify({ machine, latencyKeys: LATENCY_KEYS, gapMs: GAP_MS, rows, skipped }, null, 2)}\n`);

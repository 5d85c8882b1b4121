// The receiving host of bench/invalidation.js, in its own process: a cache
// and a bus that record when each invalidation was applied (wall clock, so
// comparable with the sender's). IPC: { cmd: 'report', prefix } answers with
// [key, appliedAtMs][] of the keys starting with prefix; { cmd: 'close' }.
import { InvalidationBus, SharedCache } from '../../lib/index.js';

const options = JSON.parse(process.argv[2]);
const cache = new SharedCache({ memoryBytes: 16 * 2 ** 20 });
const bus = new InvalidationBus(cache, options);
const applied = new Map();
const counts = new Map(); // by the part of the key before ':'
bus.on('received', ({ invalidations }) => {
  const at = performance.timeOrigin + performance.now();
  for (const { key } of invalidations) {
    if (typeof key !== 'string' || applied.has(key)) continue;
    applied.set(key, at);
    const prefix = key.slice(0, key.indexOf(':') + 1);
    counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
  }
});
await bus.start();

process.on('message', async ({ cmd, prefix }) => {
  if (cmd === 'count') process.send({ count: counts.get(prefix) ?? 0 });
  if (cmd === 'report') process.send({ applied: [...applied].filter(([key]) => key.startsWith(prefix)) });
  if (cmd === 'close') {
    await bus.close();
    cache.close();
    process.disconnect();
  }
});
process.send({ ready: true, port: bus.address?.port ?? null });

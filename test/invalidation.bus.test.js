// The bus between two caches of this process over loopback UDP: batching by
// interval and size, deduplication, prefix filters, clears, a full outbox,
// and workers terminated while they write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { Registry } from 'prom-client';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { peer, SECRET, until } from './helpers/invalidation.js';
import { MiB } from './helpers/units.js';

/** Two caches, each with a bus (both with `options`), peered with each other and verified by each other. */
async function pair(t, options = {}) {
  const sender = new SharedCache({ memoryBytes: 8 * MiB });
  const receiver = new SharedCache({ memoryBytes: 8 * MiB });
  const senderBus = await new InvalidationBus(sender, { secret: SECRET, udp: {}, ...options }).start();
  const receiverBus = await new InvalidationBus(receiver, { secret: SECRET, udp: {}, ...options }).start();
  await peer(senderBus, receiverBus);
  const received = [];
  receiverBus.on('received', (message) => received.push(message.invalidations));
  t.after(async () => {
    await senderBus.close();
    await receiverBus.close();
    sender.close();
    receiver.close();
  });
  // Entries on the receiver only: set through a bare-buffer instance, which publishes nothing.
  const seed = SharedCache.attach(receiver.handle.buffer);
  return { sender, receiver, senderBus, receiverBus, received, seed };
}

test('a batch waits batchIntervalMs and carries each key once, as its last op', async (t) => {
  const { sender, received, seed, receiver } = await pair(t, { batchIntervalMs: 100, markers: ['ver:'] });
  for (const key of ['k', 'j', 'ver:a']) seed.set(key, 'old');
  for (let i = 0; i < 50; i++) sender.set('k', i);
  sender.delete('j');
  sender.set('ver:a', 'first');
  sender.set('ver:a', 'last');
  sender.set('j', 'again');
  await until(() => received.length > 0, 'the batch');
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(received.length, 1, 'one datagram');
  assert.deepEqual(
    received[0].map(({ op, key, value }) => [op, key, value?.subarray(1).toString()]),
    [
      ['delete', 'k', undefined],
      ['set', 'ver:a', 'last'],
      ['delete', 'j', undefined],
    ],
  );
  assert.equal(receiver.get('ver:a'), 'last');
  assert.equal(receiver.get('k'), undefined);
  assert.equal(sender.stats().udpKeysSent, 3);
  assert.equal(sender.stats().udpBatchesSent, 1);
});

test('a batch goes out early at batchMaxKeys; unbatched, every write is its own datagram', async (t) => {
  const batched = await pair(t, { batchIntervalMs: 60_000, batchMaxKeys: 10 });
  for (let i = 0; i < 25; i++) batched.sender.delete(`k${i}`);
  await until(() => batched.received.flat().length >= 20, 'two full batches without waiting a minute');
  assert.deepEqual(batched.received.map((message) => message.length).slice(0, 2), [10, 10]);

  const unbatched = await pair(t, { batchIntervalMs: 0, batchMaxKeys: 1 });
  for (let i = 0; i < 5; i++) {
    unbatched.sender.delete(`k${i}`);
    await until(() => unbatched.received.length === i + 1, `datagram ${i + 1}`);
  }
  assert.equal(unbatched.sender.stats().udpBatchesSent, 5);
});

test('options.prefixes: only matching keys are published, and clear() becomes a clear of each prefix', async (t) => {
  const { sender, receiver, received, seed } = await pair(t, { prefixes: ['user:', Buffer.from([0xff])] });
  for (const key of ['user:1', 'user:2', 'session:1', Buffer.from([0xff, 1]), Buffer.from([1])]) seed.set(key, 'cached');
  sender.delete('session:1');
  sender.delete('user:1');
  sender.delete(Buffer.from([1]));
  await until(() => received.length > 0, 'the delete of user:1');
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.deepEqual(received.flat().map(({ key }) => key), ['user:1']);
  assert.equal(receiver.get('session:1'), 'cached');

  sender.clear();
  await until(() => receiver.get('user:2') === undefined, 'the prefix clear');
  assert.deepEqual(received.at(-1).map(({ op, key }) => [op, key]), [
    ['clearPrefix', 'user:'],
    ['clearPrefix', Buffer.from([0xff])],
  ]);
  assert.equal(receiver.get(Buffer.from([0xff, 1])), undefined);
  assert.equal(receiver.get('session:1'), 'cached');
  assert.equal(receiver.get(Buffer.from([1])), 'cached');
});

test('a full outbox is not an error: peers are told to clear', async (t) => {
  const { sender, receiver, seed } = await pair(t);
  seed.set('survivor?', 'cached');
  // Synchronously, so the bus (this thread) cannot drain in between: ~1.3 MB of records.
  for (let i = 0; i < 60_000; i++) sender.delete(`key-number-${i}`);
  await until(() => receiver.get('survivor?') === undefined, 'the clear that replaces the lost records');
  assert.ok(sender.stats().invalidationOverflows >= 1);
});

test('workers attached by handle publish their writes; terminating them mid-write neither hangs nor tears a marker', async (t) => {
  const { sender, receiver, received } = await pair(t, { markers: ['ver:'] });
  const source = `
    const { workerData } = require('node:worker_threads');
    const { createHash } = require('node:crypto');
    import(workerData.lib).then(({ SharedCache }) => {
      const cache = SharedCache.attach(workerData.handle);
      for (let i = 0; ; i++) {
        const body = workerData.id + ':' + i + ':' + 'x'.repeat(i % 200);
        const sum = createHash('sha256').update(body).digest('hex').slice(0, 16);
        cache.set('ver:' + (i % 7), sum + '|' + body);
        cache.delete('plain:' + (i % 50));
      }
    });`;
  const lib = new URL('../lib/index.js', import.meta.url).href;
  const workers = [0, 1].map((id) => new Worker(source, { eval: true, workerData: { lib, handle: sender.handle, id } }));
  await until(() => received.flat().length > 500, 'the workers\' writes to arrive');
  await Promise.all(workers.map((worker) => worker.terminate()));
  // The main thread still publishes at once: no lock left held by a dead worker blocks it for good.
  sender.delete('after');
  await until(() => received.flat().some(({ key }) => key === 'after'), 'a write after the terminations', 5000);
  const { createHash } = await import('node:crypto');
  for (let i = 0; i < 7; i++) {
    const value = receiver.get(`ver:${i}`);
    if (value === undefined) continue;
    const [sum, body] = [value.slice(0, 16), value.slice(17)];
    assert.equal(createHash('sha256').update(body).digest('hex').slice(0, 16), sum, `ver:${i} is whole`);
  }
  assert.equal(receiver.stats().invalidationsDropped, 0);
});

test('the invalidation counters are Prometheus metrics', async (t) => {
  const { sender, receiver, received } = await pair(t);
  sender.delete('a');
  sender.delete('b');
  await until(() => received.flat().length === 2, 'two keys');
  const registry = new Registry();
  receiver.registerMetrics(registry, { name: 'receiver' });
  sender.registerMetrics(registry, { name: 'sender' });
  const text = await registry.metrics();
  assert.match(text, /arenacache_invalidation_keys_total\{cache="sender",transport="udp",direction="sent"\} 2/);
  assert.match(text, /arenacache_invalidation_keys_total\{cache="receiver",transport="udp",direction="received"\} 2/);
  assert.match(text, /arenacache_invalidation_batches_total\{cache="receiver",transport="udp",direction="received"\} 1/);
  assert.match(text, /arenacache_invalidation_drops_total\{cache="receiver",reason="mac"\} 0/);
});

test('a key too long for any datagram makes peers clear instead of failing its whole batch', async (t) => {
  const { sender, receiver, seed } = await pair(t, { batchIntervalMs: 20 });
  seed.set('a', 'cached');
  seed.set('b', 'cached');
  sender.delete('a');
  sender.delete('x'.repeat(2000));
  await until(() => receiver.get('b') === undefined && receiver.get('a') === undefined, 'the clear that stands in for the long key');
  assert.equal(sender.stats().invalidationOverflows, 1);
  assert.equal(sender.stats().invalidationSendErrors, 0);
});

test('close() while start() is binding: start() rejects, nothing stays bound, the cache is free', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const bus = new InvalidationBus(cache, { secret: SECRET, udp: {} });
  const starting = bus.start();
  await bus.close();
  await assert.rejects(starting, { code: 'ERR_INVALIDATION_CLOSED', message: 'start() was interrupted: the bus was closed while it was binding' });
  assert.equal(bus.running, false);
  assert.equal(cache.invalidation, null);
  const other = new InvalidationBus(cache, { secret: SECRET, udp: {} });
  const otherStarting = other.start();
  cache.close();
  await assert.rejects(otherStarting, { code: 'ERR_INVALIDATION_CLOSED', message: 'start() was interrupted: the cache was closed while it was binding' });
});

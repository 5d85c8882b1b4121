// The node:diagnostics_channel events: evictions (for max and for memory,
// every policy, one message per set, published after the lock is released),
// repairs and fetch outcomes, and nothing once no one listens.
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { once } from 'node:events';
import { setImmediate as nextTurn } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import * as entry from '../lib/index.js';
import { SharedCache } from '../lib/index.js';
import { FETCH_OUTCOMES, REPAIR_REASONS, fetchStarted, publishFetch, publishRepair } from '../lib/cache/diagnostics.js';
import { nativeAvailable as nativeAvailableForRepair } from '../lib/native/addon.js';
import { MiB } from './helpers/units.js';

const { channels } = entry;

/** Subscribes to `name` for the rest of test `t`; returns the messages received. */
function listen(t, name) {
  const messages = [];
  const onMessage = (message) => messages.push(message);
  diagnostics.subscribe(name, onMessage);
  t.after(() => diagnostics.unsubscribe(name, onMessage));
  return messages;
}

test('the channel names are exported from the package entry, frozen', async () => {
  assert.deepEqual({ ...channels }, { evict: 'arenacache:evict', repair: 'arenacache:repair', fetch: 'arenacache:fetch' });
  assert.ok(Object.isFrozen(channels));
  // The same object through the package's own name.
  const byName = await import('arenacache');
  assert.equal(byName.channels, channels);
});

test('evictions for max: one message per set() that evicted, after it returned', async (t) => {
  const messages = listen(t, channels.evict);
  const cache = new SharedCache({ memoryBytes: MiB, max: 10, policy: 'lru' });
  for (let i = 0; i < 10; i++) cache.set(`k${i}`, 'value');
  await nextTurn();
  assert.deepEqual(messages, [], 'nothing evicted below max');
  cache.set('k10', 'value');
  assert.deepEqual(messages, [], 'not from inside set(): published once it has returned');
  await nextTurn();
  assert.equal(messages.length, 1);
  const [message] = messages;
  assert.deepEqual(Object.keys(message).sort(), ['count', 'reason', 'shard']);
  assert.equal(message.count, 1);
  assert.equal(message.reason, 'max');
  assert.ok(Number.isInteger(message.shard) && message.shard >= 0 && message.shard < cache.stats().shards, `shard ${message.shard}`);
  for (let i = 11; i < 15; i++) cache.set(`k${i}`, 'value');
  await nextTurn();
  assert.equal(messages.length, 5, 'one per set, each set evicting one entry');
  assert.ok(messages.every((m) => m.reason === 'max' && m.count === 1));
  assert.equal(cache.stats().evictionsMax, 5);
});

for (const policy of ['lru', 'lfu', 'hybrid', 'ttl']) {
  test(`evictions for memory (${policy}): the messages add up to the counter, one per set that evicted`, async (t) => {
    const messages = listen(t, channels.evict);
    const cache = new SharedCache({ memoryBytes: MiB, policy });
    const value = Buffer.alloc(4096, 1);
    // ttl: entries with a ttl are the ones it chooses (by earliest expiry).
    const options = policy === 'ttl' ? { ttl: 60_000 } : undefined;
    let settingsThatEvicted = 0;
    let evicted = cache.stats().evictionsMemory;
    for (let i = 0; i < 600; i++) {
      cache.set(`k${i}`, value, options);
      if (i % 3 === 0) cache.get(`k${i}`); // give lfu and lru something to keep
      const now = cache.stats().evictionsMemory;
      if (now > evicted) settingsThatEvicted++;
      evicted = now;
    }
    await nextTurn();
    assert.ok(evicted > 0, 'the cache filled up and evicted');
    assert.equal(messages.length, settingsThatEvicted);
    assert.ok(messages.every((m) => m.reason === 'memory' && m.count >= 1));
    assert.equal(messages.reduce((sum, m) => sum + m.count, 0), evicted);
    assert.equal(cache.stats().evictionsMax, 0);
  });
}

test('a set that evicts many entries at once publishes them as one message', async (t) => {
  const messages = listen(t, channels.evict);
  const cache = new SharedCache({ memoryBytes: MiB, policy: 'lru' });
  const small = Buffer.alloc(512, 2);
  for (let i = 0; i < 4000; i++) cache.set(`small${i}`, small);
  await nextTurn();
  const before = cache.stats();
  assert.ok(before.evictionsMemory > 0, 'the cache is full');
  messages.length = 0;
  // A value as large as a shard takes lets it keep little else.
  cache.set('large', Buffer.alloc(before.maxEntryBytes - 1024, 3));
  await nextTurn();
  const evicted = cache.stats().evictionsMemory - before.evictionsMemory;
  assert.ok(evicted > 10, `the large value evicted ${evicted} entries`);
  assert.equal(cache.stats().evictionsMax, before.evictionsMax);
  assert.deepEqual(
    messages.map(({ count, reason }) => ({ count, reason })),
    [{ count: evicted, reason: 'memory' }],
  );
});

test('a set that evicts for max and for memory publishes both reasons, max first', async (t) => {
  const messages = listen(t, channels.evict);
  const cache = new SharedCache({ memoryBytes: MiB, max: 8, policy: 'lru', shards: 1 });
  for (let i = 0; i < 8; i++) cache.set(`k${i}`, Buffer.alloc(100_000, i));
  await nextTurn();
  assert.deepEqual(messages, []);
  // The ninth entry: one out for max, and room for 300 kB out for memory.
  cache.set('large', Buffer.alloc(300_000, 9));
  await nextTurn();
  const stats = cache.stats();
  assert.equal(stats.evictionsMax, 1);
  assert.ok(stats.evictionsMemory >= 2, `evicted ${stats.evictionsMemory} for memory`);
  assert.deepEqual(messages, [
    { count: 1, reason: 'max', shard: 0 },
    { count: stats.evictionsMemory, reason: 'memory', shard: 0 },
  ]);
});

// Published under the lock, the subscriber's get would wait for this
// thread's own set, forever and synchronously (no test timeout could fire):
// so the scenario runs in a worker, which is terminated if it hangs.
test('a subscriber may use the cache: messages are not published under the shard lock', async () => {
  const source = `
    const diagnostics = require('node:diagnostics_channel');
    const { parentPort } = require('node:worker_threads');
    import(${JSON.stringify(new URL('../lib/index.js', import.meta.url).href)}).then(async ({ SharedCache, channels }) => {
      const cache = new SharedCache({ memoryBytes: 2 ** 20, max: 4, policy: 'lru' });
      const seen = [];
      diagnostics.subscribe(channels.evict, (message) => {
        seen.push({ ...message, present: [0, 1, 2, 3, 4, 5].filter((i) => cache.get('k' + i) !== undefined).length });
      });
      for (let i = 0; i < 6; i++) cache.set('k' + i, 'value');
      await new Promise((resolve) => setImmediate(resolve));
      parentPort.postMessage(seen);
    });`;
  const worker = new Worker(source, { eval: true });
  const timer = setTimeout(() => worker.terminate(), 5000);
  try {
    const [seen] = await Promise.race([once(worker, 'message'), once(worker, 'exit').then(() => [null])]);
    assert.notEqual(seen, null, 'the worker hung in its subscriber and was terminated');
    assert.equal(seen.length, 2);
    assert.ok(seen.every((m) => m.reason === 'max' && m.count === 1 && m.present === 4));
  } finally {
    clearTimeout(timer);
    await worker.terminate();
  }
});

test('after unsubscribing, evictions publish nothing', async () => {
  const messages = [];
  const onMessage = (message) => messages.push(message);
  diagnostics.subscribe(channels.evict, onMessage);
  const cache = new SharedCache({ memoryBytes: MiB, max: 5, policy: 'hybrid' });
  for (let i = 0; i < 8; i++) cache.set(`k${i}`, 'value');
  await nextTurn();
  assert.equal(messages.length, 3);
  diagnostics.unsubscribe(channels.evict, onMessage);
  assert.equal(diagnostics.channel(channels.evict).hasSubscribers, false);
  for (let i = 8; i < 20; i++) cache.set(`k${i}`, 'value');
  await nextTurn();
  assert.equal(messages.length, 3);
  assert.equal(cache.stats().evictionsMax, 15);
});

test('expirations are not evictions: an expired tail is not published', async (t) => {
  const messages = listen(t, channels.evict);
  const cache = new SharedCache({ memoryBytes: MiB, policy: 'lru', ttlResolution: 1 });
  const value = Buffer.alloc(8192, 4);
  for (let i = 0; i < 80; i++) cache.set(`old${i}`, value, { ttl: 1 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  for (let i = 0; i < 200; i++) cache.set(`new${i}`, value);
  await nextTurn();
  const stats = cache.stats();
  assert.ok(stats.expirations > 0, 'expired entries were reclaimed at the tail');
  assert.equal(messages.reduce((sum, m) => sum + m.count, 0), stats.evictionsMemory);
});

test('publishRepair: a message in a microtask while someone listens; a wrong reason is a RangeError', async (t) => {
  assert.throws(() => publishRepair(0, 'bad', 1), {
    name: 'RangeError',
    message: `reason must be one of ${REPAIR_REASONS.join(', ')} (got "bad")`,
  });
  publishRepair(1, 'corrupt', 3); // nobody listens: nothing, no error
  const messages = listen(t, channels.repair);
  publishRepair(2, 'dead-holder', 5);
  assert.deepEqual(messages, []);
  await nextTurn();
  assert.deepEqual(messages, [{ shard: 2, reason: 'dead-holder', lost: 5 }]);
});

test('publishFetch: outcome and duration while someone listens; nothing for a call that began unheard', async (t) => {
  assert.equal(fetchStarted(), -1, 'no clock read while nobody listens');
  const messages = listen(t, channels.fetch);
  publishFetch('early', 'hit', -1);
  assert.deepEqual(messages, []);
  const startedAt = fetchStarted();
  assert.ok(startedAt >= 0);
  publishFetch('user:1', 'load', startedAt);
  const error = new Error('backend down');
  publishFetch('user:2', 'error', startedAt, error);
  assert.equal(messages.length, 2);
  assert.deepEqual(Object.keys(messages[0]).sort(), ['durationMs', 'key', 'outcome']);
  assert.equal(messages[0].key, 'user:1');
  assert.equal(messages[0].outcome, 'load');
  assert.ok(messages[0].durationMs >= 0);
  assert.equal(messages[1].error, error);
  assert.throws(() => publishFetch('k', 'missed', startedAt), {
    name: 'RangeError',
    message: `outcome must be one of ${FETCH_OUTCOMES.join(', ')} (got "missed")`,
  });
});

test('a shard repaired at open is published on arenacache:repair with the entries it lost', { skip: !nativeAvailableForRepair && 'native addon unavailable' }, async (t) => {
  const { mkdtempSync, readFileSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { subscribe, unsubscribe } = await import('node:diagnostics_channel');
  const dir = mkdtempSync(join(tmpdir(), 'arenacache-repair-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'cache.arena');
  const writer = SharedCache.open(path, { memoryBytes: 2 ** 20 });
  for (let i = 0; i < 10; i++) writer.set(`key-${i}`, `VALUE-${String(i).padStart(4, '0')}`);
  writer.close();
  const bytes = readFileSync(path);
  const at = bytes.indexOf('VALUE-0005');
  assert.ok(at > 0);
  bytes[at] ^= 1;
  writeFileSync(path, bytes);
  const seen = [];
  const listener = (message) => seen.push(message);
  subscribe(channels.repair, listener);
  try {
    // Damaged while closed, after a clean close: only a check on opening finds it.
    const cache = SharedCache.open(path, { verifyOnOpen: true });
    await new Promise((resolve) => setImmediate(resolve));
    cache.close();
  } finally {
    unsubscribe(channels.repair, listener);
  }
  assert.equal(seen.length, 1);
  assert.equal(seen[0].reason, 'restart-damaged');
  assert.equal(seen[0].lost, 1);
  assert.equal(typeof seen[0].shard, 'number');
});

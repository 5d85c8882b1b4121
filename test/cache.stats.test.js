// stats(): the counts of gets, hits, misses, sets, deletes, expirations and
// evictions, the sizes (entries, live and used bytes, capacity) as plain
// JSON, and clear() keeping the counters.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

test('stats counts gets, hits, misses, sets, deletes and expirations', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('a', 'x');
  cache.set('b', 'yy', { ttl: 5 });
  cache.get('a');
  cache.get('a');
  cache.get('nope');
  cache.delete('a');
  cache.delete('a');
  await sleep(20);
  cache.get('b');
  const stats = cache.stats();
  assert.equal(stats.sets, 2);
  assert.equal(stats.hits, 2);
  assert.equal(stats.misses, 2);
  assert.equal(stats.gets, 4);
  assert.equal(stats.hitRatio, 0.5);
  assert.equal(stats.deletes, 1);
  assert.equal(stats.expirations, 1);
  assert.equal(stats.evictions, 0);
  assert.equal(stats.entries, 0);
});

test('stats reports sizes: entries, live bytes, used bytes and capacity', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  cache.set('key1', Buffer.alloc(100));
  cache.set('key2', 'héllo'); // 6 UTF-8 bytes
  const stats = cache.stats();
  assert.equal(stats.entries, 2);
  assert.equal(stats.liveBytes, 4 + 100 + 4 + 6);
  assert.ok(stats.usedBytes >= stats.liveBytes + 2 * 16);
  assert.equal(stats.memoryBytes, 4 * MiB);
  assert.ok(stats.dataBytes < stats.memoryBytes && stats.dataBytes > 0.8 * stats.memoryBytes, `${stats.dataBytes} of ${stats.memoryBytes}`);
  assert.ok(stats.maxEntries > 0);
  assert.ok(stats.maxEntryBytes * stats.shards <= stats.dataBytes);
  assert.equal(stats.threads, 1);
  assert.equal(stats.policy, 'hybrid');
  // lastOpen describes a file's restart: null for a cache in memory (test/file.restart.test.js has the rest).
  assert.equal(stats.lastOpen, null);
  for (const [name, value] of Object.entries(stats)) if (name !== 'policy' && name !== 'lastOpen') assert.equal(typeof value, 'number', name);
  // Plain JSON: survives a round trip unchanged.
  assert.deepEqual(JSON.parse(JSON.stringify(stats)), stats);
});

test('stats counts evictions when memory is full', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  for (let i = 0; i < 5000; i++) cache.set(`k${i}`, Buffer.alloc(1000));
  const stats = cache.stats();
  assert.ok(stats.evictions > 3000, `evictions ${stats.evictions}`);
  assert.equal(stats.entries + stats.evictions, 5000);
});

test('clear keeps the counters', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('a', 1);
  cache.clear();
  assert.equal(cache.stats().sets, 1);
  assert.equal(cache.stats().entries, 0);
});

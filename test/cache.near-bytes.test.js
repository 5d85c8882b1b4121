// The near cache's byte limit, from inside (lib/cache/near-cache.js): the
// estimated bytes it counts are the sum of its entries' and never exceed
// options.nearCacheBytes; evicting by bytes reuses the freed entries; the
// entry limit applies as well. (What gets answer is in
// cache.near-cache.test.js; these check the bookkeeping no get shows.)
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { Arena } from '../lib/arena/entries/arena.js';
import { NEAR_ENTRY_BYTES, NearCache } from '../lib/cache/near-cache.js';
import { MiB } from './helpers/units.js';

/** A NearCache over a real arena; keep() is handed a made-up record (its stamps are never checked here). */
function nearCache(capacity, maxBytes) {
  const cache = new SharedCache({ memoryBytes: MiB, nearCache: 0 });
  const near = new NearCache(capacity, maxBytes, Arena.attach(cache.handle.buffer), true);
  const shard = near.shards[0];
  // Twice: a key enters on its second miss.
  const keep = (key, value) => {
    for (let i = 0; i < 2; i++) near.keep(key, hashOf(key), value, value.length, shard, 0, 0, 1, 0);
  };
  return { near, keep, close: () => cache.close() };
}

function hashOf(key) {
  let hash = 0;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash;
}

function counted(near) {
  let sum = 0;
  for (const index of near.indexes.values()) sum += near.sizes[index];
  return sum;
}

test('big values fill the byte limit: it keeps as many as fit, counts their bytes, and stays within it', () => {
  const { near, keep, close } = nearCache(1000, 64 * 1024);
  const value = 'v'.repeat(3000);
  const entryBytes = 3000 + 'k00'.length + NEAR_ENTRY_BYTES;
  for (let i = 0; i < 100; i++) {
    keep(`k${String(i).padStart(2, '0')}`, value);
    assert.ok(near.bytes <= 64 * 1024, `${near.bytes} bytes after ${i + 1} keys`);
    assert.equal(near.bytes, counted(near));
  }
  assert.equal(near.indexes.size, Math.floor((64 * 1024) / entryBytes));
  assert.equal(near.bytes, near.indexes.size * entryBytes);
  // The last kept are held (CLOCK evicted the older, unused ones).
  assert.ok(near.indexes.has('k99'));
  close();
});

test('entries evicted to make room are reused: the entry arrays do not grow past what the limits hold', () => {
  const { near, keep, close } = nearCache(1000, 64 * 1024);
  for (let round = 0; round < 50; round++) {
    // One big value pushes out many small ones, then small ones fill its room again.
    keep(`big${round}`, 'b'.repeat(3900));
    for (let i = 0; i < 40; i++) keep(`small${round}:${i}`, 's'.repeat(100));
    assert.ok(near.bytes <= 64 * 1024);
    assert.equal(near.bytes, counted(near));
  }
  assert.ok(near.keys.length <= Math.ceil((64 * 1024) / (100 + NEAR_ENTRY_BYTES)) + 1, `${near.keys.length} entries`);
  close();
});

test('the entry limit applies under the byte limit; a replaced value is counted at its new size; delete and clear give the bytes back', () => {
  const { near, keep, close } = nearCache(5, MiB);
  for (let i = 0; i < 20; i++) keep(`k${i}`, 'x'.repeat(10));
  assert.equal(near.indexes.size, 5);
  assert.equal(near.bytes, 5 * (10 + 'k19'.length + NEAR_ENTRY_BYTES));
  keep('k19', 'y'.repeat(1000));
  assert.equal(near.indexes.size, 5);
  assert.equal(near.bytes, counted(near));
  assert.equal(near.sizes[near.indexes.get('k19')], 1000 + 'k19'.length + NEAR_ENTRY_BYTES);
  near.delete('k19');
  assert.equal(near.indexes.size, 4);
  assert.equal(near.bytes, counted(near));
  near.clear();
  assert.equal(near.bytes, 0);
  assert.equal(near.indexes.size, 0);
  close();
});

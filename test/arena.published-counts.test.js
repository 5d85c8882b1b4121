// The entry counts each shard publishes in the header (which an insert under
// max sums) follow every insert, eviction, delete, expiry, sweep and clear,
// and verify() reports one that disagrees with its shard.
import assert from 'node:assert/strict';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedCache } from '../lib/index.js';
import { Arena } from '../lib/arena/entries/arena.js';
import { H32_SHARD_COUNTS, readHeader, SHARD_META_BYTES } from '../lib/arena/common/layout.js';
import { M_COUNT } from '../lib/arena/common/shard-meta.js';
import { Sweeper } from '../lib/arena/entries/sweep.js';
import { MiB } from './helpers/units.js';

/** Each shard's published count (in the header) and its count in its meta line. */
function counts(cache) {
  const buffer = cache.handle.buffer;
  const header = readHeader(buffer);
  const published = [...new Int32Array(buffer, H32_SHARD_COUNTS * 4, header.shardCount)];
  const meta = new Int32Array(buffer, header.metaOffset, (header.shardCount * SHARD_META_BYTES) / 4);
  return { published, actual: published.map((_, i) => meta[(i * SHARD_META_BYTES) / 4 + M_COUNT]) };
}

// An insert under `max` sums every shard's count. It reads them from one
// packed array, published by each shard at the end of each write, instead of
// from the shards' meta lines (which hold their locks): that array must
// follow every way an entry comes or goes.
test('with max, every shard publishes its entry count after each kind of write, and max holds exactly', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, shards: 8, max: 400, sweepIntervalMs: 0 });
  const check = (when) => {
    const { published, actual } = counts(cache);
    assert.deepEqual(published, actual, when);
    assert.equal(
      published.reduce((sum, n) => sum + n, 0),
      cache.size,
      when,
    );
    assert.deepEqual(cache.verify(), { ok: true, problems: [] }, when);
  };
  for (let i = 0; i < 300; i++) cache.set(`k${i}`, Buffer.alloc(32, i));
  check('after inserts');
  for (let i = 300; i < 1000; i++) cache.set(`k${i}`, Buffer.alloc(32, i));
  assert.equal(cache.size, 400, 'inserts past max evict down to max');
  check('after inserts that evict for max');
  for (let i = 900; i < 1000; i += 2) cache.set(`k${i}`, Buffer.alloc(200, i));
  check('after new versions of another size');
  for (let i = 900; i < 950; i++) cache.delete(`k${i}`);
  check('after deletes');
  for (let i = 0; i < 50; i++) cache.set(`short${i}`, Buffer.alloc(32), { ttl: 1 });
  await sleep(10);
  for (let i = 0; i < 10; i++) assert.equal(cache.get(`short${i}`), undefined);
  check('after reads that remove expired entries');
  const sweeper = new Sweeper(Arena.attach(cache.handle.buffer), 1);
  assert.ok(sweeper.sweep(10_000) > 0, 'the sweeper removed expired entries');
  check('after a sweep');
  cache.clear();
  check('after clear');
  assert.equal(cache.size, 0);
  for (let i = 0; i < 1000; i++) cache.set(`again${i}`, Buffer.alloc(32, i));
  assert.equal(cache.size, 400);
  check('after filling again');
  // verify() reports a published count that disagrees with its shard's.
  const { actual } = counts(cache);
  new Int32Array(cache.handle.buffer, H32_SHARD_COUNTS * 4, 1)[0] = actual[0] + 7;
  assert.deepEqual(cache.verify(), { ok: false, problems: [`shard 0: its published entry count is ${actual[0] + 7}, meta counts ${actual[0]}`] });
});

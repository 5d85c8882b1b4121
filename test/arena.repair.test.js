// Damaged records: one met while making room or reading resets its shard and
// the call goes through; verify() reports write stamps out of range or used
// twice, slot-group write counts that cannot advance, and key bytes that no
// longer hash to their stored hash.
import assert from 'node:assert/strict';
import test from 'node:test';
import { Arena } from '../lib/arena/entries/arena.js';
import { RECORD_HEADER_BYTES, STAMP_F64 } from '../lib/arena/entries/record.js';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

/** The first shard of the cache, seen through the arena internals. */
function shardOf(cache) {
  return Arena.attach(cache.handle.buffer).shards[0];
}

test('a damaged record found while making room: the shard is reset and the set goes through', () => {
  // lru keeps every record in the main ring, whose tail is damaged here.
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1, policy: 'lru' });
  for (let i = 0; i < 100; i++) cache.set(`k${i}`, Buffer.alloc(1000, i));
  const shard = shardOf(cache);
  shard.u32[(shard.main.tail >>> 2) + 3] = 12345; // the oldest record's size: not a multiple of 8
  // Fill until the tail has to be reclaimed.
  for (let i = 0; i < 2000; i++) cache.set(`more${i}`, Buffer.alloc(1000, 1));
  const stats = cache.stats();
  assert.equal(stats.shardRepairs, 1);
  assert.deepEqual(cache.get('more1999'), Buffer.alloc(1000, 1));
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a record whose value runs out of its region reads as a miss and the shard is reset', () => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1 });
  cache.set('victim', Buffer.alloc(10, 1));
  cache.set('other', 'kept until the repair');
  // The first record in the ring is "victim": make its value length absurd.
  shardOf(cache).u32[1] = 0x7fffffff;
  assert.equal(cache.get('victim'), undefined);
  assert.equal(cache.stats().shardRepairs, 1);
  assert.equal(cache.size, 0);
  cache.set('after', 'works');
  assert.equal(cache.get('after'), 'works');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('verify reports a write stamp that is ahead of its shard or used twice', () => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1 });
  cache.set('a', 'first');
  cache.set('b', 'second');
  const shard = shardOf(cache);
  const second = shard.u32[3]; // the first record's size: the second record follows it
  shard.f64[STAMP_F64] = 1e9;
  assert.deepEqual(cache.verify().problems, ['shard 0: live record at 0 has write stamp 1000000000, outside [1, 2]']);
  shard.f64[STAMP_F64] = shard.f64[second / 8 + STAMP_F64];
  assert.deepEqual(cache.verify().problems, [`shard 0: live records at 0 and ${second} have the same write stamp`]);
});

test('verify reports a slot group write count that could no longer advance, and a reset restarts it', () => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1 });
  cache.set('a', 'first');
  const shard = shardOf(cache);
  shard.groupWrites[shard.groupBase + 1] = NaN;
  shard.groupWrites[shard.groupBase + 2] = 2 ** 53;
  assert.deepEqual(cache.verify().problems, [
    'shard 0: slot group 1 has write count NaN, outside [0, 4503599627370496]',
    'shard 0: slot group 2 has write count 9007199254740992, outside [0, 4503599627370496]',
  ]);
  cache.clear();
  assert.deepEqual(cache.verify().problems, []);
  assert.ok(shard.groupWrites[shard.groupBase + 2] < 2 ** 52);
});

test('verify reports damage that lookups cannot see', () => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1 });
  cache.set('abc', 'value');
  const shard = shardOf(cache);
  shard.u8[RECORD_HEADER_BYTES] = 'x'.charCodeAt(0); // the key's first byte: "xbc" no longer hashes to the stored hash
  const { ok, problems } = cache.verify();
  assert.equal(ok, false);
  assert.deepEqual(problems, ['shard 0: live record at 0: its key bytes do not hash to its stored hash']);
});

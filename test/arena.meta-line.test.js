// A set that rewrites an entry in place writes only the first cache line of
// its shard's meta block, for every policy.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { readHeader, SHARD_META_BYTES } from '../lib/arena/common/layout.js';
import { MiB } from './helpers/units.js';

/**
 * A SharedArrayBuffer from malloc starts 16 bytes past a cache line, a mapped
 * file on one: the first 48 bytes of a meta block are one line either way.
 */
const ONE_LINE_BYTES = 48;

function metaBlock(cache) {
  const header = readHeader(cache.handle.buffer);
  return Buffer.from(cache.handle.buffer, header.metaOffset, SHARD_META_BYTES);
}

// Two threads setting keys of one shard pass its meta line back and forth:
// a set that wrote two lines would move both.
test('a set that rewrites an entry in place changes only the first cache line of its shard meta block', () => {
  for (const policy of ['hybrid', 'lru', 'lfu', 'ttl']) {
    const cache = new SharedCache({ memoryBytes: MiB, shards: 1, policy });
    cache.set('key', Buffer.alloc(64, 1));
    // Same record size: a new value, a shorter one, another kind, and the first value again.
    for (const value of [Buffer.alloc(64, 2), Buffer.alloc(60, 3), 'x'.repeat(64), Buffer.alloc(64, 1)]) {
      const before = Buffer.from(metaBlock(cache));
      cache.set('key', value);
      const after = metaBlock(cache);
      assert.notDeepEqual(after.subarray(0, ONE_LINE_BYTES), before.subarray(0, ONE_LINE_BYTES), `${policy}: the set wrote its shard's meta block`);
      assert.deepEqual(after.subarray(ONE_LINE_BYTES), before.subarray(ONE_LINE_BYTES), `${policy}: the set wrote past the first line`);
      assert.deepEqual(cache.get('key'), value);
    }
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  }
});

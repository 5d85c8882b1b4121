// Slot-group write counts (what a near-cache hit trusts): every write of a
// shard advances them, also a delete, a clear by another instance and the
// removal of an expired entry; gets, has() and verify() leave them.
import assert from 'node:assert/strict';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedCache } from '../lib/index.js';
import { readHeader, slotGroupsPerShard } from '../lib/arena/common/layout.js';
import { MiB } from './helpers/units.js';

/** The write counts of the shard's slot groups, summed (one shard: every key is in it). */
function writeCount(cache) {
  const header = readHeader(cache.handle.buffer);
  const counts = new Float64Array(cache.handle.buffer, header.writeCountsOffset, slotGroupsPerShard(header.slotsPerShard));
  return counts.reduce((sum, count) => sum + count, 0);
}

// A near-cache hit trusts a kept value without looking at its slot or record
// while the write count of the slot's group is the one its last full check
// saw (RecordStamp). So every change of a slot or its record must advance a
// count, including those that write no record; reads must not, or the check
// would never take its short path.
test('every write of a shard advances its slot groups\' write counts, with or without a record written; reads do not', async () => {
  const cache = new SharedCache({ memoryBytes: 2 * MiB, shards: 1, nearCache: 0, sweepIntervalMs: 0 });
  const other = SharedCache.attach(cache.handle, { nearCache: 0 });
  const advances = (what, action) => {
    const before = writeCount(cache);
    action();
    assert.ok(writeCount(cache) > before, `${what} advances the write count`);
  };
  const stays = (what, action) => {
    const before = writeCount(cache);
    action();
    assert.equal(writeCount(cache), before, `${what} leaves the write count`);
  };
  advances('an insert', () => cache.set('a', 'one'));
  advances('a rewrite in place', () => cache.set('a', 'two'));
  advances('a delete', () => other.delete('a'));
  stays('a delete of a missing key', () => other.delete('a'));
  cache.set('b', 'three');
  stays('gets, has and verify', () => {
    cache.get('b');
    other.get('b');
    cache.has('b');
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  });
  advances('clear() by another instance', () => other.clear());
  cache.set('short', 'lived', { ttl: 5 });
  await sleep(20);
  advances('the removal of an expired entry that a get found', () => assert.equal(cache.get('short'), undefined));
  cache.close();
  other.close();
});

// The shards' published entry counts live in the header page, their own
// counts in their meta lines: a machine crash can write one page back and
// not the other.
import assert from 'node:assert/strict';
import { closeSync, openSync, writeSync } from 'node:fs';
import test from 'node:test';
import { H32_SHARD_COUNTS } from '../lib/arena/common/layout.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';

test('a file whose published entry counts are stale opens with every shard kept, and max still holds', { skip }, (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 4 * MiB, shards: 4, max: 400 });
  for (let i = 0; i < 300; i++) cache.set(`key:${i}`, `value ${i}`);
  cache.close();
  // Counts from some earlier moment: every shard empty but one, which had more.
  const stale = new Int32Array([500, 0, 0, 0]);
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.from(stale.buffer), 0, stale.byteLength, H32_SHARD_COUNTS * 4);
  closeSync(fd);
  const reopened = SharedCache.open(path);
  const stats = reopened.stats();
  assert.equal(stats.shardRepairs, 0, 'no shard was reset');
  assert.equal(stats.entries, 300);
  assert.equal(reopened.get('key:7'), 'value 7');
  assert.deepEqual(reopened.verify(), { ok: true, problems: [] });
  for (let i = 300; i < 600; i++) reopened.set(`key:${i}`, `value ${i}`);
  assert.equal(reopened.size, 400, 'inserts evict down to max, counted from the shards themselves');
  reopened.close();
});

// Deterministic crash points of incr(): a holder "dies" after each single
// write of an increment in place of a number record (see
// lib/arena/entries/atomic-ops.js), and the shard is rebuilt as a takeover
// would. The counter must hold its value from before or after the
// increment: never lost, as a torn rewrite would be (in a file-backed
// cache, a value written without its checksum resealed fails the check).
import assert from 'node:assert/strict';
import test from 'node:test';
import { addInPlace } from '../lib/arena/entries/atomic-ops.js';
import { keyWord } from '../lib/arena/entries/record.js';
import { M_UNDO_AT } from '../lib/arena/common/shard-meta.js';
import { FoundEntry } from '../lib/arena/entries/record-stamp.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { crashPointCache, crashPoints, recordWrites, replay } from './helpers/crash-points.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const OPS = STRESS ? 200 : 30;
const KEYS = 40;

for (const file of [false, true]) {
  const what = file ? 'file-backed, with record checksums' : 'in memory';
  test(`${what}: a holder dying after any write of an increment leaves the counter at its old or new value`, { skip: file && !nativeAvailable && 'native addon unavailable' }, (t) => {
    const seed = testSeed();
    const random = seededRandom(seed);
    const { cache, shard, keys, memory } = crashPointCache(t, file, { memoryBytes: MiB });
    const universe = Array.from({ length: KEYS }, (_, i) => `n${i}`);
    // Some with a ttl: the value sits past the time field.
    for (const [i, key] of universe.entries()) cache.set(key, random.int(1000), i % 3 === 0 ? { ttl: 3_600_000 } : undefined);
    const contents = () => new Map(universe.map((key) => [key, cache.get(key)]));
    let tried = 0;
    for (let op = 0; op < OPS; op++) {
      const key = universe[random.int(KEYS)];
      const delta = random() < 0.5 ? 1 : random.int(1e6) - 5e5 + 0.5;
      const before = contents();
      const snapshot = memory.slice();
      keys.encode(key);
      const found = new FoundEntry();
      const slot = shard.findSlot(keys.bytes, keys.length, keyWord(keys.length, keys.kind), keys.hash, found);
      assert.ok(slot >= 0);
      const log = [];
      const stop = recordWrites(shard, log);
      try {
        addInPlace(shard, slot, found.offset, shard.u32[found.offset >>> 2], delta);
      } finally {
        var arrays = stop();
      }
      const after = contents();
      assert.equal(after.get(key), before.get(key) + delta);
      const where = `SEED=${seed} op ${op} (incr ${key} by ${delta}, ${log.length} writes)`;
      for (const k of crashPoints(log.length, Infinity)) {
        memory.set(snapshot);
        replay(arrays, log.slice(0, k));
        shard.recoverFromDeadHolder();
        tried++;
        const at = `${where}, died after write ${k}`;
        assert.equal(shard.meta[M_UNDO_AT], 0, `${at}: the undo record is left`);
        assert.deepEqual(cache.verify(), { ok: true, problems: [] }, at);
        const now = contents();
        for (const other of universe) if (other !== key) assert.equal(now.get(other), before.get(other), `${at}: ${other} changed`);
        assert.ok([before.get(key), after.get(key)].includes(now.get(key)), `${at}: ${key} holds ${now.get(key)}, neither ${before.get(key)} nor ${after.get(key)}`);
      }
      memory.set(snapshot);
      replay(arrays, log);
      assert.deepEqual(contents(), after, where);
    }
    t.diagnostic(`${tried} crash points over ${OPS} increments`);
  });
}

test('a number record whose lengths were damaged: incr and touch repair the shard instead of resealing past the record', { skip: !nativeAvailable && 'native addon unavailable', timeout: 60_000 }, (t) => {
  const { cache, shard, keys } = crashPointCache(t, true, { memoryBytes: MiB });
  const find = (key) => {
    keys.encode(key);
    const found = new FoundEntry();
    assert.ok(shard.findSlot(keys.bytes, keys.length, keyWord(keys.length, keys.kind), keys.hash, found) >= 0);
    return found.offset >>> 2;
  };
  for (let i = 0; i < 50; i++) cache.set(`n${i}`, i);
  // A size word that sends a reseal into the next record.
  shard.u32[find('n7') + 3] += 64;
  assert.equal(cache.incr('n7', 5), 5, 'the shard was repaired and the count started again');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  assert.ok(cache.stats().shardRepairs >= 1);
  for (let i = 0; i < 50; i++) cache.set(`n${i}`, i);
  // A value length of 2^31: a reseal over it would loop through 2 GiB.
  shard.u32[find('n9') + 1] = 2 ** 31;
  const started = Date.now();
  assert.equal(cache.touch('n9', 60_000), false);
  assert.ok(Date.now() - started < 1000, `touch took ${Date.now() - started} ms`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

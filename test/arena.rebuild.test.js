// Rebuilding a shard from its rings after its lock holder died
// (lib/arena/entries/rebuild.js): each state a holder can leave behind, made by hand
// from a real shard, and what the rebuild makes of it.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { Arena } from '../lib/arena/entries/arena.js';
import { RECORD_HEADER_BYTES, REWRITING, TYPE_DEAD, TYPE_LIVE, TYPE_MASK } from '../lib/arena/entries/record.js';
import { M_COUNT, M_LIVE_BYTES, M_RESETTING } from '../lib/arena/common/shard-meta.js';
import { seededRandom, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

/** A one-shard cache, and its shard seen through the arena internals. */
function oneShard(options) {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, shards: 1, nearCache: 0, ...options });
  const arena = Arena.attach(cache.handle.buffer);
  return { cache, arena, shard: arena.shards[0] };
}

/** What a takeover does: the dead holder's repair, under the lock. */
function recover(arena, shard) {
  const held = arena.lock.acquire(shard);
  try {
    shard.recoverFromDeadHolder();
  } finally {
    arena.lock.release(shard, held);
  }
}

/** Offsets of every record of string key `key` in the shard's rings (live or dead), oldest first. */
function recordsOf(shard, key) {
  const found = [];
  for (const ring of [shard.main, shard.small]) {
    if (ring.size === 0 || ring.used === 0) continue;
    let position = ring.tail;
    let walked = 0;
    do {
      const flags = shard.u32[position >>> 2];
      const size = (flags & TYPE_MASK) === 3 ? ring.end - position : shard.u32[(position >>> 2) + 3];
      const keyLength = flags >>> 16;
      const keyStart = position + RECORD_HEADER_BYTES;
      if ((flags & TYPE_MASK) !== 3 && Buffer.from(shard.u8.subarray(keyStart, keyStart + keyLength)).toString() === key) found.push(position);
      walked += size;
      position += size;
      if (position === ring.end) position = ring.base;
    } while (walked < ring.used);
  }
  return found;
}

test('a healthy shard is rebuilt as it was: every entry, no loss', () => {
  const { cache, arena, shard } = oneShard();
  for (let i = 0; i < 300; i++) cache.set(`k${i}`, `value ${i}`.repeat(1 + (i % 5)));
  for (let i = 0; i < 300; i += 3) cache.delete(`k${i}`);
  const before = { count: shard.meta[M_COUNT], liveBytes: shard.meta[M_LIVE_BYTES] };
  recover(arena, shard);
  assert.deepEqual({ count: shard.meta[M_COUNT], liveBytes: shard.meta[M_LIVE_BYTES] }, before);
  for (let i = 0; i < 300; i++) assert.equal(cache.get(`k${i}`), i % 3 === 0 ? undefined : `value ${i}`.repeat(1 + (i % 5)));
  assert.equal(cache.stats().lostEntries, 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('dictionary slots shifted halfway and counts off by one: the rings decide', () => {
  const { cache, arena, shard } = oneShard();
  for (let i = 0; i < 200; i++) cache.set(`k${i}`, `v${i}`);
  // As if a delete died in the middle of its backward shift.
  let cleared = 0;
  for (let slot = 0; slot < shard.slots && cleared < 20; slot += 7) {
    if (shard.table[2 * slot] !== 0) {
      shard.table[2 * slot] = 0;
      cleared++;
    }
  }
  shard.meta[M_COUNT] += 1;
  assert.notDeepEqual(cache.verify().problems, []);
  recover(arena, shard);
  for (let i = 0; i < 200; i++) assert.equal(cache.get(`k${i}`), `v${i}`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a replacement in flight leaves two live records of a key: the newer one is kept, whole', () => {
  const { cache, arena, shard } = oneShard();
  cache.set('a', 'old value');
  cache.set('a', 'a new, longer value');
  const [older, newer] = recordsOf(shard, 'a');
  assert.equal(shard.u32[older >>> 2] & TYPE_MASK, TYPE_DEAD);
  // As if the holder died before marking the old version dead.
  shard.u32[older >>> 2] = (shard.u32[older >>> 2] & ~TYPE_MASK) | TYPE_LIVE;
  recover(arena, shard);
  assert.equal(cache.get('a'), 'a new, longer value');
  assert.equal(shard.u32[older >>> 2] & TYPE_MASK, TYPE_DEAD);
  assert.equal(shard.u32[newer >>> 2] & TYPE_MASK, TYPE_LIVE);
  assert.equal(cache.size, 1);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a rewrite in place cut short is the write in flight: dropped, and counted as lost', () => {
  const { cache, arena, shard } = oneShard();
  cache.set('a', 'same size 1');
  cache.set('b', 'bystander');
  cache.set('a', 'same size 2');
  const [record] = recordsOf(shard, 'a');
  shard.u32[record >>> 2] |= REWRITING;
  recover(arena, shard);
  assert.equal(cache.get('a'), undefined);
  assert.equal(cache.get('b'), 'bystander');
  assert.equal(cache.stats().lostEntries, 1);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a clear cut short is finished', () => {
  const { cache, arena, shard } = oneShard();
  for (let i = 0; i < 50; i++) cache.set(`k${i}`, i);
  shard.meta[M_RESETTING] = 1;
  recover(arena, shard);
  assert.equal(cache.size, 0);
  assert.equal(shard.meta[M_RESETTING], 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('rings that cannot be walked: the shard is reset, its entries counted as lost', () => {
  const { cache, arena, shard } = oneShard();
  for (let i = 0; i < 40; i++) cache.set(`k${i}`, `v${i}`);
  const [record] = recordsOf(shard, 'k7');
  shard.u32[(record >>> 2) + 3] = 12; // a size no record has
  recover(arena, shard);
  assert.equal(cache.size, 0);
  assert.equal(cache.stats().lostEntries, 40);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('randomized: writes of every kind, then the bookkeeping scrambled as a dead holder could leave it; the rebuild matches a Map', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  for (let round = 0; round < 20; round++) {
    // Small enough that rings wrap, records move and entries are evicted.
    const { cache, arena, shard } = oneShard({ memoryBytes: MiB });
    const model = new Map();
    for (let op = 0; op < 2000; op++) {
      const key = `k${random.int(300)}`;
      const roll = random();
      if (roll < 0.6) {
        const value = 'x'.repeat(random.int(2000)) + key;
        cache.set(key, value);
        model.set(key, value);
      } else if (roll < 0.8) {
        cache.delete(key);
        model.delete(key);
      } else {
        cache.get(key);
      }
    }
    // Evictions happened: the model keeps only what the cache still holds.
    for (const key of [...model.keys()]) if (cache.get(key) === undefined) model.delete(key);
    // Scramble what a rebuild must not trust.
    for (let i = 0; i < 30; i++) shard.table[2 * random.int(shard.slots)] = 0;
    shard.meta[M_COUNT] += random.int(5) - 2;
    shard.meta[M_LIVE_BYTES] += random.int(100);
    shard.ghosts.slots.fill(0xdeadbeef);
    shard.ghosts.state.fill(0xdeadbeef);
    recover(arena, shard);
    assert.equal(cache.size, model.size, `SEED=${seed} round ${round}`);
    for (const [key, value] of model) assert.equal(cache.get(key), value, `SEED=${seed} round ${round} ${key}`);
    assert.equal(cache.stats().lostEntries, 0, `SEED=${seed} round ${round}`);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] }, `SEED=${seed} round ${round}`);
  }
});

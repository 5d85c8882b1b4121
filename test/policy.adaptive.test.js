// The hybrid policy's adaptive small ring (lib/arena/entries/ghost-table.js,
// policies.js S3FifoPolicy): it follows the workload where a fixed 10% small
// ring fails, its state stays within bounds whatever shared memory holds,
// and it survives the repairs and restarts that the rest of the shard does.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { Arena } from '../lib/arena/entries/arena.js';
import { SHARE_DEFAULT, SHARE_HALF, SHARE_MAX, SHARE_MIN, SHARE_ONE, shareWord } from '../lib/arena/entries/ghost-table.js';
import { lruHitRatio, s3fifoHitRatio } from '../bench/hit-ratio/references.js';
import { zipfTrace } from '../bench/hit-ratio/traces.js';
import { arenaPath } from './helpers/arena-files.js';
import { seededRandom, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

/**
 * The Corda pattern: a stream of new keys, half of which are read once more
 * 12 to 50 requests later, and never again. A 10% small ring evicts them
 * before their second read.
 */
function readTwiceTrace(requests, seed) {
  const random = seededRandom(seed);
  const due = new Map();
  const trace = [];
  let next = 0;
  while (trace.length < requests) {
    const again = due.get(trace.length);
    if (again !== undefined) {
      due.delete(trace.length);
      trace.push(again);
      continue;
    }
    const key = next++;
    trace.push(key);
    if (random() < 0.5) {
      let at = trace.length + 11 + random.int(39);
      while (due.has(at)) at++;
      due.set(at, key);
    }
  }
  return Uint32Array.from(trace);
}

/** Hit ratio of `cache` on `trace` read through (a miss is followed by a set). */
function replay(cache, trace) {
  let hits = 0;
  for (const id of trace) {
    const key = `key:${id}`;
    if (cache.get(key) !== undefined) hits++;
    else cache.set(key, id);
  }
  return hits / trace.length;
}

/** A cache bound by `max` only (small values, memory to spare). */
const boundCache = (max, options = {}) => new SharedCache({ memoryBytes: 2 * MiB, max, nearCache: 0, ...options });

/** The first shard's ghost state words (entries/ghost-table.js), through the arena internals. */
function firstShard(cache) {
  return Arena.attach(cache.handle.buffer).shards[0];
}

test('keys read twice a few dozen requests apart: hybrid grows its small ring and reaches LRU, where a fixed 10% misses them all', () => {
  const trace = readTwiceTrace(60_000, 41);
  const capacity = 90;
  const lru = lruHitRatio(trace, capacity);
  const fixed = s3fifoHitRatio(trace, capacity);
  // The pattern does what it is for: LRU keeps the second reads, S3-FIFO's 10% does not.
  assert.ok(lru > 0.3, `exact LRU ${lru}`);
  assert.ok(fixed < 0.05, `S3-FIFO with a 10% small ring ${fixed}`);
  const cache = boundCache(capacity);
  const hybrid = replay(cache, trace);
  assert.ok(hybrid >= lru - 0.005, `hybrid ${hybrid} against exact LRU ${lru}`);
  const { smallShare } = cache.stats();
  assert.ok(smallShare > 0.3, `smallShare ${smallShare}`);
  cache.close();
});

test('skewed popularity: hybrid shrinks its small ring and stays at least as good as S3-FIFO', () => {
  const trace = zipfTrace({ keys: 20_000, requests: 200_000, alpha: 0.8, seed: 7 });
  const capacity = 200;
  const cache = boundCache(capacity);
  const hybrid = replay(cache, trace);
  const fixed = s3fifoHitRatio(trace, capacity);
  assert.ok(hybrid >= fixed - 0.01, `hybrid ${hybrid} against S3-FIFO ${fixed}`);
  assert.ok(hybrid > lruHitRatio(trace, capacity) + 0.05);
  const { smallShare } = cache.stats();
  assert.ok(smallShare < 0.1, `smallShare ${smallShare}`);
  cache.close();
});

test('a small ring holding most of the cache is a CLOCK: an entry read there gets a second chance in it, not a move to the main ring', () => {
  for (const [share, promoted] of [
    [SHARE_HALF + SHARE_ONE * 0.3, false],
    [SHARE_DEFAULT, true],
  ]) {
    const cache = boundCache(60, { shards: 1 });
    const shard = firstShard(cache);
    shard.ghosts.state[0] = shareWord(share);
    for (let i = 0; i < 60; i++) cache.set(`k${i}`, i);
    for (let i = 0; i < 60; i++) assert.equal(cache.get(`k${i}`), i);
    const smallBefore = cache.stats().smallEntries;
    cache.set('new', -1);
    const { promotions, relocations, entries, smallEntries } = cache.stats();
    assert.equal(entries, 60);
    if (promoted) {
      assert.ok(promotions > 0, `share ${share / SHARE_ONE}: ${promotions} promotions`);
    } else {
      assert.equal(promotions, 0, `share ${share / SHARE_ONE}`);
      assert.ok(relocations >= smallBefore - 1, `${relocations} second chances in the small ring of ${smallBefore}`);
      assert.equal(smallEntries, smallBefore);
    }
    // Every value read stays as it was (one entry left for the new one).
    let kept = 0;
    for (let i = 0; i < 60; i++) {
      const value = cache.get(`k${i}`);
      if (value !== undefined) {
        assert.equal(value, i);
        kept++;
      }
    }
    assert.equal(kept, 59);
    cache.close();
  }
});

test('smallShare: 0.1 in a new hybrid cache, 0 for the other policies', () => {
  const hybrid = boundCache(1000);
  assert.equal(hybrid.stats().smallShare, SHARE_DEFAULT / SHARE_ONE);
  hybrid.close();
  for (const policy of ['lru', 'lfu', 'ttl']) {
    const cache = boundCache(1000, { policy });
    cache.set('a', 1);
    assert.equal(cache.stats().smallShare, 0, policy);
    cache.close();
  }
});

test('bit flips in the adaptive state: the share stays within its bounds, and the cache keeps its values', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const cache = boundCache(300, { shards: 1 });
  const shard = firstShard(cache);
  const model = new Map();
  for (let round = 0; round < 40; round++) {
    // Anything at all in the state words: the share, and both eviction counts.
    for (let w = 0; w < shard.ghosts.state.length; w++) {
      if (random() < 0.5) shard.ghosts.state[w] = random.int(2 ** 32);
      else shard.ghosts.state[w] ^= 1 << random.int(32);
    }
    // And in some ghost slots.
    for (let i = 0; i < 20; i++) shard.ghosts.slots[random.int(shard.ghosts.slots.length)] = random.int(2 ** 32);
    const share = shard.ghosts.share;
    assert.ok(share >= SHARE_MIN && share <= SHARE_MAX, `SEED=${seed} round ${round}: share ${share}`);
    for (let i = 0; i < 500; i++) {
      const key = `k${random.int(2000)}`;
      const value = `${key}:${round}:${i}`;
      if (random() < 0.6) {
        assert.equal(cache.get(key), model.has(key) && cache.has(key) ? model.get(key) : undefined, `SEED=${seed} round ${round} ${key}`);
      } else {
        cache.set(key, value);
        model.set(key, value);
      }
    }
    const { smallShare, entries, smallEntries } = cache.stats();
    assert.ok(smallShare >= SHARE_MIN / SHARE_ONE && smallShare <= SHARE_MAX / SHARE_ONE, `SEED=${seed} round ${round}: smallShare ${smallShare}`);
    assert.ok(entries <= 300, `SEED=${seed} round ${round}: ${entries} entries`);
    assert.ok(smallEntries <= entries);
  }
  // Every entry the cache holds has its latest value.
  for (const [key, value] of model) {
    const found = cache.get(key);
    if (found !== undefined) assert.equal(found, value, `SEED=${seed} ${key}`);
  }
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  cache.close();
});

test('the adaptive share survives a rebuild after a dead holder, a clear and a damaged shard reset', () => {
  const cache = boundCache(90, { shards: 1 });
  const arena = Arena.attach(cache.handle.buffer);
  const shard = arena.shards[0];
  replay(cache, readTwiceTrace(20_000, 3));
  const learned = shard.ghosts.share;
  assert.ok(learned > SHARE_DEFAULT, `learned share ${learned}`);
  // The repair a takeover runs (rebuild.js), under the lock.
  const recover = () => {
    const held = arena.lock.acquire(shard);
    try {
      shard.recoverFromDeadHolder();
    } finally {
      arena.lock.release(shard, held);
    }
  };
  recover();
  assert.equal(shard.ghosts.share, learned);
  assert.ok(shard.ghosts.slots.every((slot) => slot === 0), 'the rebuild forgets the ghosts');
  cache.clear();
  assert.equal(shard.ghosts.share, learned);
  // A damaged share word is put back, as the default, by the rebuild.
  shard.ghosts.state[0] = 0xffffffff;
  recover();
  assert.equal(shard.ghosts.state[0], shareWord(SHARE_DEFAULT));
  // A marked share out of bounds is put back within them.
  shard.ghosts.state[0] = shareWord(0xffffff);
  recover();
  assert.equal(shard.ghosts.state[0], shareWord(SHARE_MAX));
  cache.close();
});

test('a file-backed cache keeps its learned share across a restart, and every process sees one share', async (t) => {
  const path = arenaPath(t);
  const options = { memoryBytes: 2 * MiB, max: 90, shards: 1, nearCache: 0 };
  const first = SharedCache.open(path, options);
  replay(first, readTwiceTrace(20_000, 5));
  const learned = first.stats().smallShare;
  assert.ok(learned > 0.1, `learned ${learned}`);
  const second = SharedCache.open(path, options);
  assert.equal(second.stats().smallShare, learned);
  second.close();
  first.close();
  const reopened = SharedCache.open(path, options);
  assert.equal(reopened.stats().smallShare, learned);
  reopened.close();
});

test('without max the small ring keeps its 10% and its one ghost table (memory binds, and the memory goes to entries)', () => {
  const cache = new SharedCache({ memoryBytes: 2 * MiB, nearCache: 0, shards: 1 });
  const shard = firstShard(cache);
  const { header } = Arena.attach(cache.handle.buffer);
  assert.equal(header.ghostSlotsPerShard, shard.ghosts.state.length + header.maxEntriesPerShard);
  assert.equal(shard.ghosts.tables, 1);
  for (const id of readTwiceTrace(20_000, 9)) if (cache.get(`key:${id}`) === undefined) cache.set(`key:${id}`, Buffer.alloc(2000));
  assert.ok(cache.stats().evictions > 0);
  assert.equal(cache.stats().smallShare, SHARE_DEFAULT / SHARE_ONE);
  cache.close();
});

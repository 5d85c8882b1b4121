// options.nearCache and nearCacheBytes: each instance keeps ready values of the keys it reads
// often, and answers from them only while the arena entry is unchanged and
// unexpired. What a caller gets back can never change what a later get
// returns. (Linearizability with the near cache on, across threads and
// processes, is in cache.linearizable.test.js.)
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { Arena } from '../lib/arena/entries/arena.js';
import { RECORD_HEADER_BYTES, REWRITING } from '../lib/arena/entries/record.js';
import { peer, SECRET, until } from './helpers/invalidation.js';
import { freePort, redisMissing, startRedis } from './helpers/redis-server.js';
import { MiB } from './helpers/units.js';
import { NEAR_ENTRY_BYTES } from '../lib/cache/near-cache.js';
import { MAX_NEAR_CACHE } from '../lib/cache/options.js';

const newCache = (options) => new SharedCache({ memoryBytes: 4 * MiB, nearCache: 100, ...options });

/** Reads `key` until the near cache answers it (a key enters on its second miss, within three gets); returns the value. */
function warm(cache, key) {
  for (let i = 0; i < 3; i++) {
    const before = cache.stats().nearHits;
    const value = cache.get(key);
    if (cache.stats().nearHits === before + 1) return value;
  }
  assert.fail(`${key} is not answered by the near cache after three gets`);
}

test('objects come back deep-frozen and the same, strings as they are; Buffers are not kept', () => {
  const cache = newCache();
  cache.set('user', { id: 1, roles: ['admin', { scope: 'all' }] });
  cache.set('bytes', Buffer.from('abc'));
  cache.set('text', 'plain');
  const user = warm(cache, 'user');
  assert.equal(cache.get('user'), user);
  assert.ok(Object.isFrozen(user) && Object.isFrozen(user.roles) && Object.isFrozen(user.roles[1]));
  assert.throws(() => {
    user.roles.push('root');
  }, TypeError);
  assert.deepEqual(cache.get('user'), { id: 1, roles: ['admin', { scope: 'all' }] });

  // Every get of a Buffer returns a new copy: from the arena, as cheap as from a private copy.
  const bytes = cache.get('bytes');
  bytes.fill(0x21);
  for (let i = 0; i < 3; i++) assert.equal(cache.get('bytes').toString(), 'abc');
  assert.notEqual(cache.get('bytes'), cache.get('bytes'));
  assert.equal(cache.stats().nearHits, 3);

  assert.equal(warm(cache, 'text'), 'plain');
  const { hits, nearHits, gets } = cache.stats();
  assert.equal(nearHits, 4);
  assert.equal(hits, gets, 'near hits are hits');
});

test('values freezing cannot protect (Map, Set, Date, typed arrays, cycles) are decoded afresh on every get', () => {
  const cache = newCache();
  const cyclic = { name: 'loop' };
  cyclic.self = cyclic;
  const values = { map: new Map([[1, 2]]), set: new Set([1]), date: { at: new Date(5) }, typed: [new Float64Array(2)], cyclic };
  for (const [key, value] of Object.entries(values)) cache.set(key, value);
  for (const key of Object.keys(values)) {
    const first = cache.get(key);
    const second = cache.get(key);
    assert.notEqual(first, second, key);
    assert.equal(Object.isFrozen(first), false, key);
  }
  cache.get('map').set(3, 4);
  assert.deepEqual(cache.get('map'), new Map([[1, 2]]));
  assert.equal(cache.stats().nearHits, 0);
});

test('a value that is not kept comes back wholly mutable, even the parts checked before what stopped the freezing', () => {
  const cache = newCache();
  cache.set('mixed', { first: { inner: [1, 2] }, then: { at: new Date(5) } });
  for (let i = 0; i < 3; i++) {
    const value = cache.get('mixed');
    assert.equal(Object.isFrozen(value), false);
    assert.equal(Object.isFrozen(value.first), false);
    assert.equal(Object.isFrozen(value.first.inner), false);
    value.first.inner.push(3);
  }
  assert.deepEqual(cache.get('mixed').first.inner, [1, 2]);
  assert.equal(cache.stats().nearHits, 0);
});

test('a frozen Map, Set or typed array inside a value (from a codec of the user\'s) still keeps it out', () => {
  // Freezing a Map or a typed array does not make its contents immutable:
  // a frozen part must be looked into like any other.
  const frozenParts = {
    map: () => Object.freeze(new Map([[1, 2]])),
    set: () => Object.freeze(new Set([1])),
    typed: () => Object.freeze(new Float64Array(0)),
  };
  const codec = {
    name: 'frozen-parts',
    encode: (value) => Buffer.from(JSON.stringify(value)),
    decode: (bytes) => {
      const { kind } = JSON.parse(bytes.toString());
      return Object.freeze({ kind, inner: Object.freeze({ part: frozenParts[kind]() }) });
    },
  };
  const cache = newCache({ codec });
  for (const kind of Object.keys(frozenParts)) {
    cache.set(kind, { kind });
    const first = cache.get(kind);
    for (let i = 0; i < 3; i++) assert.notEqual(cache.get(kind), first, kind);
  }
  const map = cache.get('map').inner.part;
  map.set(3, 4);
  assert.deepEqual(cache.get('map').inner.part, new Map([[1, 2]]));
  assert.equal(cache.stats().nearHits, 0);
});

test('with nearCache 0, every get returns a new, mutable value', () => {
  const cache = newCache({ nearCache: 0 });
  cache.set('user', { id: 1 });
  const first = cache.get('user');
  first.id = 2;
  assert.deepEqual(cache.get('user'), { id: 1 });
  assert.equal(cache.get('user') === cache.get('user'), false);
  assert.equal(cache.stats().nearHits, 0);
});

test('a set, delete or clear by another instance ends the kept value at once; writes to other keys of the shard do not', () => {
  const writer = newCache({ shards: 1 });
  const reader = SharedCache.attach(writer.handle, { nearCache: 100 });
  writer.set('k', 'one');
  warm(reader, 'k');
  writer.set('k', 'two');
  assert.equal(reader.get('k'), 'two');
  warm(reader, 'k');
  // One shard: every other write lands in k's shard.
  for (let i = 0; i < 50; i++) writer.set(`other:${i}`, `value ${i}`);
  const before = reader.stats().nearHits;
  assert.equal(reader.get('k'), 'two');
  assert.equal(reader.stats().nearHits, before + 1);
  // Same size: rewritten in place.
  writer.set('k', 'six');
  assert.equal(reader.get('k'), 'six');
  warm(reader, 'k');
  writer.delete('k');
  assert.equal(reader.get('k'), undefined);
  writer.set('k', 'ten');
  warm(reader, 'k');
  writer.clear();
  assert.equal(reader.get('k'), undefined);
});

test('a string this instance sets replaces its kept value: the next get answers from the near cache, and any later write ends it', () => {
  const cache = newCache({ shards: 1 });
  const other = SharedCache.attach(cache.handle, { nearCache: 0 });
  cache.set('k', 'one');
  warm(cache, 'k');
  const nearHits = () => cache.stats().nearHits;
  for (const [value, how] of [
    ['two', 'rewritten in place'],
    ['a longer value', 'moved'],
    ['three', 'with a ttl', { ttl: 60_000 }],
  ]) {
    cache.set('k', value, how === 'with a ttl' ? { ttl: 60_000 } : undefined);
    const before = nearHits();
    assert.equal(cache.get('k'), value, how);
    assert.equal(nearHits(), before + 1, `${how}: answered by the near cache`);
  }
  other.set('k', 'four');
  assert.equal(cache.get('k'), 'four');
  cache.set('k', 'five');
  other.delete('k');
  assert.equal(cache.get('k'), undefined);
  // Keys not kept are not taken in by a set, nor are objects (a caller's
  // object may change after the set): their next get reads the arena.
  cache.set('fresh', 'value');
  let before = nearHits();
  assert.equal(cache.get('fresh'), 'value');
  assert.equal(nearHits(), before);
  cache.set('obj', { n: 1 });
  warm(cache, 'obj');
  const mine = { n: 2 };
  cache.set('obj', mine);
  mine.n = 3;
  before = nearHits();
  assert.deepEqual(cache.get('obj'), { n: 2 });
  assert.equal(nearHits(), before);
  cache.close();
  other.close();
});

test('a set of a string by this instance that expires is not served after its ttl', async () => {
  const cache = newCache({ shards: 1 });
  cache.set('k', 'one');
  warm(cache, 'k');
  cache.set('k', 'two', { ttl: 30 });
  assert.equal(cache.get('k'), 'two');
  await sleep(60);
  assert.equal(cache.get('k'), undefined);
  cache.close();
});

test('an eviction ends the kept value', () => {
  // lru: hybrid would keep the read entry in its main ring while the fillers pass through the small one.
  const cache = newCache({ memoryBytes: MiB, shards: 1, max: 64, policy: 'lru' });
  cache.set('hot', 'kept');
  warm(cache, 'hot');
  const other = SharedCache.attach(cache.handle, { nearCache: 0 });
  // has() does not count as a use, which would keep hot in the cache.
  for (let i = 0; other.has('hot'); i++) {
    assert.ok(i < 10_000, 'hot was never evicted');
    other.set(`filler:${i}`, 'x');
  }
  assert.equal(cache.get('hot'), undefined);
});

test('a kept value is never served after its ttl, with or without ttlResolution', async () => {
  for (const ttlResolution of [0, 20]) {
    const cache = newCache({ ttlResolution, sweepIntervalMs: 0 });
    // Timed from before the set: the entry's ttl runs from there, and warming
    // may take a while on a loaded machine.
    const expiresAt = Date.now() + 150;
    cache.set('short', { v: 1 }, { ttl: 150 });
    warm(cache, 'short');
    while (Date.now() < expiresAt - 50) {
      assert.deepEqual(cache.get('short'), { v: 1 });
      await sleep(5);
    }
    // 20 ms past the expiry (the set came just after expiresAt was taken), and past the resolution.
    await sleep(Math.max(0, expiresAt - Date.now()) + 20 + ttlResolution);
    assert.equal(cache.get('short'), undefined, `ttlResolution ${ttlResolution}`);
    cache.close();
  }
});

test('a lock holder that died: its shard is rebuilt, kept values of entries that survived still answer, the torn one does not', async () => {
  const cache = newCache({ shards: 1, lockLeaseMs: 100 });
  cache.set('k', 'before');
  cache.set('t', 'torn by the holder');
  warm(cache, 'k');
  warm(cache, 't');
  const wake = new SharedArrayBuffer(4);
  const holder = new Worker(new URL('./fixtures/lock-holder-worker.js', import.meta.url), { workerData: { buffer: cache.handle.buffer, wake } });
  await once(holder, 'message');
  // As if the holder died in the middle of rewriting t's value in place.
  const shard = Arena.attach(cache.handle.buffer).shards[0];
  const offset = recordOffsetOf(shard, 't');
  shard.u32[offset >>> 2] |= REWRITING;
  await holder.terminate();
  // The next write takes the lock over and rebuilds the shard.
  SharedCache.attach(cache.handle, { nearCache: 0 }).set('other', 'x');
  const { lockRecoveries, lostEntries } = cache.stats();
  assert.deepEqual({ lockRecoveries, lostEntries }, { lockRecoveries: 1, lostEntries: 1 });
  assert.equal(cache.get('t'), undefined);
  assert.equal(cache.get('k'), 'before');
  assert.equal(cache.get('other'), 'x');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

/** The offset of the live record of string key `key` in `shard` (found through its dictionary). */
function recordOffsetOf(shard, key) {
  for (let slot = 0; slot < shard.slots; slot++) {
    const w0 = shard.table[2 * slot];
    if (w0 === 0) continue;
    const offset = (w0 - 1) * 8;
    const keyLength = shard.u32[offset >>> 2] >>> 16;
    const keyStart = offset + RECORD_HEADER_BYTES;
    if (Buffer.from(shard.u8.subarray(keyStart, keyStart + keyLength)).toString() === key) return offset;
  }
  throw new Error(`no record of ${key}`);
}

test('gets of Buffer keys, and of keys read once, do not fill the near cache', () => {
  const cache = newCache();
  const key = Buffer.from('bytes key');
  cache.set(key, 'v');
  for (let i = 0; i < 5; i++) assert.equal(cache.get(key), 'v');
  for (let i = 0; i < 50; i++) cache.set(`once:${i}`, i);
  for (let i = 0; i < 50; i++) assert.equal(cache.get(`once:${i}`), i);
  assert.equal(cache.stats().nearHits, 0);
  for (let i = 0; i < 50; i++) assert.equal(cache.get(`once:${i}`), i);
  // The second round admitted them; the first only a few whose bits another key had set.
  const afterSecond = cache.stats().nearHits;
  assert.ok(afterSecond < 10, `${afterSecond} near hits in the second round`);
  for (let i = 0; i < 50; i++) assert.equal(cache.get(`once:${i}`), i);
  assert.equal(cache.stats().nearHits, afterSecond + 50);
});

test('a near cache smaller than the working set keeps answering correctly', () => {
  const cache = newCache({ nearCache: 8 });
  const model = new Map();
  for (let i = 0; i < 40; i++) {
    cache.set(`k${i}`, { i });
    model.set(`k${i}`, { i });
  }
  for (let round = 0; round < 40; round++) {
    // Four hot keys between sweeps over all 40.
    for (let i = 0; i < 40; i++) {
      for (const key of [`k${i}`, `k${i % 4}`]) assert.deepEqual(cache.get(key), model.get(key), `round ${round}`);
    }
    const key = `k${(round * 7) % 40}`;
    cache.set(key, { i: round, changed: true });
    model.set(key, { i: round, changed: true });
  }
  assert.ok(cache.stats().nearHits > 1000, `${cache.stats().nearHits} near hits`);
});

test('an invalidation from another host (UDP) reaches kept values in every thread', async (t) => {
  const sender = new SharedCache({ memoryBytes: 4 * MiB });
  const receiver = newCache();
  const senderBus = await new InvalidationBus(sender, { secret: SECRET, udp: {}, batchIntervalMs: 1 }).start();
  const receiverBus = await new InvalidationBus(receiver, { secret: SECRET, udp: {}, batchIntervalMs: 1 }).start();
  await peer(senderBus, receiverBus);
  const reader = SharedCache.attach(receiver.handle, { nearCache: 100 });
  t.after(async () => {
    await senderBus.close();
    await receiverBus.close();
  });
  SharedCache.attach(receiver.handle.buffer).set('k', 'cached');
  warm(reader, 'k');
  warm(receiver, 'k');
  sender.delete('k');
  await until(() => receiver.get('k') === undefined, 'the delete to reach the receiver');
  assert.equal(reader.get('k'), undefined);
});

test('an invalidation through Redis reaches kept values', { skip: redisMissing() ?? false }, async (t) => {
  const redis = await startRedis(await freePort());
  const options = { secret: SECRET, redis: { connection: redis.url }, batchIntervalMs: 1 };
  const sender = new SharedCache({ memoryBytes: 4 * MiB });
  const receiver = newCache();
  const senderBus = await new InvalidationBus(sender, options).start();
  const receiverBus = await new InvalidationBus(receiver, options).start();
  t.after(async () => {
    await senderBus.close();
    await receiverBus.close();
    await redis.kill();
  });
  SharedCache.attach(receiver.handle.buffer).set('k', 'cached');
  warm(receiver, 'k');
  sender.delete('k');
  await until(() => receiver.get('k') === undefined, 'the delete to reach the receiver through Redis');
});

test('options.nearCache must be an integer from 0 to 2^24, in new, attach and open', () => {
  const expected = (got) => `options.nearCache must be an integer from 0 (off) to 16777216 entries (got ${got})`;
  assert.throws(() => newCache({ nearCache: '10' }), { name: 'TypeError', message: 'options.nearCache must be a number (got "10")' });
  assert.throws(() => newCache({ nearCache: -1 }), { name: 'RangeError', message: expected('-1') });
  assert.throws(() => newCache({ nearCache: 1.5 }), { name: 'RangeError', message: expected('1.5') });
  assert.throws(() => newCache({ nearCache: 2 ** 24 + 1 }), { name: 'RangeError', message: expected('16777217') });
  const cache = newCache();
  assert.throws(() => SharedCache.attach(cache.handle, { nearCache: null }), { name: 'TypeError', message: 'options.nearCache must be a number (got null)' });
  assert.throws(() => SharedCache.attach(cache.handle, { nearCache: -2 }), { name: 'RangeError', message: expected('-2') });
  assert.throws(() => SharedCache.open('/nonexistent/arena', { nearCache: NaN }), { name: 'RangeError', message: expected('NaN') });
});

test('options.nearCacheBytes must be an integer from 0 to 2^40 bytes, in new, attach and open', () => {
  const expected = (got) => `options.nearCacheBytes must be an integer from 0 (off) to 2^40 bytes (got ${got})`;
  assert.throws(() => newCache({ nearCacheBytes: '1e6' }), { name: 'TypeError', message: 'options.nearCacheBytes must be a number (got "1e6")' });
  assert.throws(() => newCache({ nearCacheBytes: -1 }), { name: 'RangeError', message: expected('-1') });
  assert.throws(() => newCache({ nearCacheBytes: 0.5 }), { name: 'RangeError', message: expected('0.5') });
  assert.throws(() => newCache({ nearCacheBytes: 2 ** 40 + 1 }), { name: 'RangeError', message: expected('1099511627777') });
  const cache = newCache();
  assert.throws(() => SharedCache.attach(cache.handle, { nearCacheBytes: null }), { name: 'TypeError', message: 'options.nearCacheBytes must be a number (got null)' });
  assert.throws(() => SharedCache.attach(cache.handle, { nearCacheBytes: Infinity }), { name: 'RangeError', message: expected('Infinity') });
  assert.throws(() => SharedCache.open('/nonexistent/arena', { nearCacheBytes: NaN }), { name: 'RangeError', message: expected('NaN') });
  assert.throws(() => newCache({ nearCacheByte: 1 }), { name: 'TypeError', message: /options\.nearCacheByte is not a known option; did you mean nearCacheBytes\?/ });
});

test('an entry above 1/16 of nearCacheBytes is never kept', () => {
  // 64 KiB: entries of up to 4 KiB, estimated as value, key and NEAR_ENTRY_BYTES.
  const cache = newCache({ nearCacheBytes: 64 * 1024 });
  const room = 4096 - NEAR_ENTRY_BYTES;
  cache.set('large', 'x'.repeat(room - 'large'.length + 1));
  cache.set('largest kept', 'x'.repeat(room - 'largest kept'.length));
  for (let i = 0; i < 5; i++) cache.get('large');
  assert.equal(cache.stats().nearHits, 0);
  warm(cache, 'largest kept');
});

test('nearCacheBytes 0 turns the near cache off, as nearCache 0 does', () => {
  for (const options of [{ nearCacheBytes: 0 }, { nearCache: 0, nearCacheBytes: MiB }]) {
    const cache = newCache(options);
    cache.set('o', { a: 1 });
    for (let i = 0; i < 5; i++) assert.equal(Object.isFrozen(cache.get('o')), false);
    assert.equal(cache.stats().nearHits, 0);
    cache.close();
  }
});

test('both limits apply: the near cache keeps what fits in nearCacheBytes, at most nearCache entries', () => {
  // Entries of about 3 KiB: 64 KiB holds 20 of them.
  const value = (i) => `${i}:`.padEnd(3000, 'v');
  const hitsOfHotSet = (options, hot) => {
    const cache = newCache({ memoryBytes: 4 * MiB, ...options });
    for (let i = 0; i < hot; i++) cache.set(`k${i}`, value(i));
    // Two rounds admit every key; the third finds those still kept.
    for (let round = 0; round < 2; round++) for (let i = 0; i < hot; i++) cache.get(`k${i}`);
    const before = cache.stats().nearHits;
    for (let i = 0; i < hot; i++) assert.equal(cache.get(`k${i}`), value(i));
    const hits = cache.stats().nearHits - before;
    cache.close();
    return hits;
  };
  assert.equal(hitsOfHotSet({ nearCache: MAX_NEAR_CACHE, nearCacheBytes: 64 * 1024 }, 16), 16);
  assert.equal(hitsOfHotSet({ nearCache: 8, nearCacheBytes: 64 * 1024 }, 8), 8);
  // A sweep over more than fits keeps no key to its next turn (CLOCK evicts the oldest).
  assert.ok(hitsOfHotSet({ nearCache: MAX_NEAR_CACHE, nearCacheBytes: 64 * 1024 }, 40) <= 20);
  assert.ok(hitsOfHotSet({ nearCache: 8, nearCacheBytes: 4 * MiB }, 16) <= 8);
});

test('by default the near cache is bounded by bytes, not by a thousand entries', () => {
  const cache = new SharedCache({ memoryBytes: 16 * MiB });
  for (let i = 0; i < 5000; i++) cache.set(`k${i}`, { i });
  for (let round = 0; round < 2; round++) for (let i = 0; i < 5000; i++) cache.get(`k${i}`);
  const before = cache.stats().nearHits;
  for (let i = 0; i < 5000; i++) assert.equal(cache.get(`k${i}`).i, i);
  assert.equal(cache.stats().nearHits - before, 5000);
  cache.close();
});

test('an entry answered many times in a row still ends at once on a set, delete or clear by another instance, and its ttl still holds', async () => {
  const writer = newCache({ shards: 1 });
  const reader = SharedCache.attach(writer.handle, { nearCache: 100 });
  const hammer = (key, expected) => {
    const before = reader.stats().nearHits;
    for (let i = 0; i < 100; i++) assert.deepEqual(reader.get(key), expected);
    assert.equal(reader.stats().nearHits, before + 100);
  };
  writer.set('k', { v: 1 });
  warm(reader, 'k');
  hammer('k', { v: 1 });
  writer.set('k', { v: 2 });
  assert.deepEqual(reader.get('k'), { v: 2 });
  warm(reader, 'k');
  hammer('k', { v: 2 });
  writer.delete('k');
  assert.equal(reader.get('k'), undefined);
  writer.set('k', 'three');
  warm(reader, 'k');
  hammer('k', 'three');
  writer.clear();
  assert.equal(reader.get('k'), undefined);
  // Timed from before the set, as in the ttl test above; long enough for warm() on a loaded machine.
  const expiresAt = Date.now() + 400;
  writer.set('k', 'four', { ttl: 400 });
  warm(reader, 'k');
  while (Date.now() < expiresAt - 200) assert.equal(reader.get('k'), 'four');
  await sleep(Math.max(0, expiresAt - Date.now()) + 20);
  assert.equal(reader.get('k'), undefined);
});

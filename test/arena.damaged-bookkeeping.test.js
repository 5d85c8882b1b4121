// Damaged bookkeeping is repaired, never inherited: a shard's write stamp
// with a fraction or out of range, a ring left empty away from its base,
// counts that no longer match the rings, a record header overwritten under
// a writer that lost its lock, and a block stripe's counts and table. Each
// is made by hand on a real shard or stripe.
import assert from 'node:assert/strict';
import test from 'node:test';
import { BlockStore, SharedCache } from '../lib/index.js';
import { Arena } from '../lib/arena/entries/arena.js';
import { BlockArena } from '../lib/arena/blocks/blocks.js';
import { S_FRESH, S_HAND, SLOT_WORDS } from '../lib/arena/blocks/block-layout.js';
import { KeyEncoder } from '../lib/cache/key-encoder.js';
import { MAX_WRITE_STAMP } from '../lib/arena/entries/shard.js';
import { FoundEntry } from '../lib/arena/entries/record-stamp.js';
import { CHECKSUM_BYTES, EXPIRY_F64, recordSize, STALE_F64, STAMP_F64, VALUE_RAW } from '../lib/arena/entries/record.js';
import { M64_WRITE_STAMP, M_COUNT, M_LIVE_BYTES } from '../lib/arena/common/shard-meta.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

/** A one-shard cache, and its shard seen through the arena internals. */
function oneShard(options) {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1, nearCache: 0, sweepIntervalMs: 0, ...options });
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

/** The highest write stamp of a live record of the shard (through its dictionary). */
function highestRecordStamp(shard) {
  let highest = 0;
  for (let slot = 0; slot < shard.slots; slot++) {
    const w0 = shard.table[2 * slot];
    if (w0 !== 0) highest = Math.max(highest, shard.f64[(((w0 - 1) * 8) >>> 3) + STAMP_F64]);
  }
  return highest;
}

// A flipped low mantissa bit leaves a fraction; a flipped exponent bit
// halves or multiplies; a stray write can leave anything.
const DAMAGED_STAMPS = [
  ['a fraction', (stamp) => stamp + 0.5],
  ['a fraction below (an exponent bit: halved)', (stamp) => stamp / 2 + 0.25],
  ['NaN', () => Number.NaN],
  ['negative', () => -3],
  ['past 2^53', () => 2 ** 60],
  ['Infinity', () => Number.POSITIVE_INFINITY],
];

test('verify() reports a shard write stamp that is not a whole number in [0, 2^52]', () => {
  for (const [what, damage] of DAMAGED_STAMPS) {
    const { cache, shard } = oneShard();
    for (let i = 0; i < 20; i++) cache.set(`k${i}`, `v${i}`);
    shard.meta64[M64_WRITE_STAMP] = damage(shard.meta64[M64_WRITE_STAMP]);
    const { ok, problems } = cache.verify();
    assert.equal(ok, false, what);
    assert.ok(
      problems.some((problem) => /^shard 0: its write stamp is .*, not a whole number in \[0, 4503599627370496\]$/.test(problem)),
      `${what}: ${problems.join('; ')}`,
    );
    cache.close();
  }
});

test('clear() restarts a damaged write stamp past every stamp the shard issued; entries written after it verify', () => {
  for (const [what, damage] of DAMAGED_STAMPS) {
    const { cache, shard } = oneShard();
    for (let i = 0; i < 20; i++) cache.set(`k${i}`, `v${i}`);
    const issued = shard.meta64[M64_WRITE_STAMP];
    const damaged = damage(issued);
    shard.meta64[M64_WRITE_STAMP] = damaged;
    cache.clear();
    const restarted = shard.meta64[M64_WRITE_STAMP];
    assert.ok(Number.isInteger(restarted) && restarted > issued && restarted <= MAX_WRITE_STAMP, `${what}: restarted at ${restarted}`);
    if (Number.isFinite(damaged) && damaged < MAX_WRITE_STAMP) assert.ok(restarted > damaged, `${what}: past the damaged value too`);
    for (let i = 0; i < 20; i++) cache.set(`n${i}`, `v${i}`);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] }, what);
    cache.close();
  }
});

test('a set that finds its shard\'s write stamp damaged restarts it, keeps the shard\'s entries, and stamps a whole number', () => {
  for (const [what, damage] of DAMAGED_STAMPS) {
    const { cache, shard } = oneShard();
    for (let i = 0; i < 20; i++) cache.set(`k${i}`, `v${i}`);
    const issued = shard.meta64[M64_WRITE_STAMP];
    shard.meta64[M64_WRITE_STAMP] = damage(issued);
    cache.set('new', 'value');
    const stamp = shard.meta64[M64_WRITE_STAMP];
    assert.ok(Number.isInteger(stamp) && stamp > issued, `${what}: ${stamp}`);
    for (let i = 0; i < 20; i++) assert.equal(cache.get(`k${i}`), `v${i}`, what);
    assert.equal(cache.get('new'), 'value');
    assert.deepEqual(cache.verify(), { ok: true, problems: [] }, what);
    assert.equal(cache.stats().lostEntries, 0, what);
    cache.close();
  }
});

test('a rebuild keeps every entry when only the write stamp is damaged, and restarts it past every record', () => {
  const cases = [
    ...DAMAGED_STAMPS,
    // Whole and in range, but behind the records it stamped (a flipped high bit of the integer).
    ['a whole number behind its records', () => 10],
  ];
  for (const [what, damage] of cases) {
    const { cache, arena, shard } = oneShard();
    for (let i = 0; i < 200; i++) cache.set(`k${i}`, `value ${i}`);
    for (let i = 0; i < 200; i += 4) cache.set(`k${i}`, `value ${i} again`);
    const highest = highestRecordStamp(shard);
    shard.meta64[M64_WRITE_STAMP] = damage(shard.meta64[M64_WRITE_STAMP]);
    assert.equal(cache.verify().ok, false, what);
    recover(arena, shard);
    const stamp = shard.meta64[M64_WRITE_STAMP];
    assert.ok(Number.isInteger(stamp) && stamp > highest, `${what}: restarted at ${stamp}, records go up to ${highest}`);
    for (let i = 0; i < 200; i++) assert.equal(cache.get(`k${i}`), i % 4 === 0 ? `value ${i} again` : `value ${i}`, what);
    assert.equal(cache.stats().lostEntries, 0, what);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] }, what);
    cache.close();
  }
});

test('a stamp restarted after damage never hands out again a stamp another instance holds a near copy by', () => {
  // One write: stamp 1. Its exponent's low bit flipped makes it 0.5; a
  // restart from floor(0.5) would stamp the next record at the same place
  // 1 again, and the near copy of the first value would be served.
  for (const damaged of [0.5, Number.NaN, -1]) {
    const reader = new SharedCache({ memoryBytes: MiB, shards: 1, sweepIntervalMs: 0 });
    const writer = SharedCache.attach(reader.handle, { nearCache: 0 });
    const shard = Arena.attach(reader.handle.buffer).shards[0];
    reader.set('k', 'first');
    assert.equal(reader.get('k'), 'first');
    assert.equal(reader.get('k'), 'first');
    shard.meta64[M64_WRITE_STAMP] = damaged;
    writer.clear();
    writer.set('k', 'second');
    assert.equal(reader.get('k'), 'second', `stamp damaged to ${damaged}`);
    reader.close();
    writer.close();
  }
});

test('a rebuild that keeps nothing of a ring leaves it empty at its base; verify() requires that of an empty ring', () => {
  for (const ringName of ['main', 'small']) {
    const { cache, arena, shard } = oneShard();
    for (let i = 0; i < 2000; i++) cache.set(`k${i}`, `value ${i} `.repeat(3));
    const ring = shard[ringName];
    assert.ok(ring.used > 0, `${ringName} ring in use`);
    // A tail 8 bytes into its record: the walk finds no record there (file-backed arenas cut the ring there).
    shard.meta[ring.tailWord] += 8;
    shard.u32[shard.meta[ring.tailWord] >>> 2] = 0;
    recover(arena, shard);
    // Without checksums a ring that cannot be walked resets the shard; either way the ring is empty at its base.
    assert.deepEqual({ used: ring.used, head: shard.meta[ring.headWord], tail: ring.tail }, { used: 0, head: ring.base, tail: ring.base }, ringName);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
    // Empty, but away from its base: verify() says so.
    shard.meta[ring.headWord] = ring.base + 64;
    shard.meta[ring.tailWord] = ring.base + 64;
    const { problems } = cache.verify();
    assert.ok(problems.includes(`shard 0: ${ringName} ring is empty, but its head ${ring.base + 64} and tail ${ring.base + 64} are not its base ${ring.base}`), problems.join('; '));
    cache.close();
  }
});

test('a set into a shard whose counts no longer match its rings returns, and the shard is repaired (never an endless eviction)', () => {
  const damages = [
    ['an entry count with nothing to evict', (shard, cache) => {
      cache.clear();
      cache.set('one', 'entry');
      shard.meta[M_COUNT] = shard.maxEntries + 5;
    }],
    ['live record bytes far below the truth (compaction forever)', (shard) => {
      shard.meta[shard.main.liveWord] = -(2 ** 30);
      shard.meta[shard.small.liveWord] = -(2 ** 30);
    }],
    ['a head outside its ring', (shard) => {
      shard.meta[shard.main.headWord] = -64;
      shard.meta[shard.small.headWord] = shard.main.base + 64;
    }],
    ['a tail outside its ring', (shard) => {
      shard.meta[shard.main.tailWord] = shard.regionBytes + 4096;
      shard.meta[shard.small.tailWord] = shard.main.end - 8;
    }],
  ];
  for (const policy of ['hybrid', 'lru', 'lfu', 'ttl']) {
    for (const [what, damage] of damages) {
      const { cache, shard } = oneShard({ policy });
      // Full: the next inserts must reclaim.
      for (let i = 0; i < 12_000; i++) cache.set(`k${i}`, 'v'.repeat(100));
      damage(shard, cache);
      for (let i = 0; i < 2000; i++) cache.set(`n${i}`, 'v'.repeat(100));
      assert.equal(cache.get('n1999'), 'v'.repeat(100), `${policy}, ${what}`);
      assert.ok(cache.stats().shardRepairs >= 1, `${policy}, ${what}: repaired`);
      assert.deepEqual(cache.verify(), { ok: true, problems: [] }, `${policy}, ${what}`);
      cache.close();
    }
  }
});

const skip = !nativeAvailable && 'native addon unavailable';

/** The arena's form of string key `key` and a raw value of `length` bytes, for Arena#set. */
function keyAndEntry(arena, key, length) {
  const keys = new KeyEncoder(arena.header.maxKeyBytes, arena.stringHashStart, arena.bytesHashStart);
  keys.encode(key);
  const payload = Buffer.alloc(length, 0x61);
  const entry = { kind: VALUE_RAW, payload, length, expiresAt: 0, staleAt: 0, size: recordSize(keys.length, length + CHECKSUM_BYTES, 0) };
  return { keys, entry };
}

/**
 * Makes the next record the shard writes have its header overwritten right
 * after its value is written, as another process that took the lock over
 * from this writer (a live holder judged dead) would by writing its own
 * record there: `scribble(offset)` writes what it likes.
 */
function overwriteHeaderMidWrite(shard, scribble) {
  const writeValue = shard.writeValue;
  shard.writeValue = function (offset, ...rest) {
    writeValue.call(this, offset, ...rest);
    scribble(offset);
    shard.writeValue = writeValue;
  };
}

test('a writer whose record header is overwritten mid-write (its lock taken over) checksums only its own bytes: no read beyond the region', { skip }, (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: MiB, shards: 1, nearCache: 0 });
  t.after(() => cache.close());
  for (let i = 0; i < 100; i++) cache.set(`k${i}`, `v${i}`);
  const arena = Arena.attach(cache.handle.buffer);
  const shard = arena.shards[0];
  // Reads of the region are watched from here: a checksum over a value
  // length read back from shared memory ran up to 2^32 bytes past its end.
  const words = shard.u32;
  const bytes = shard.u8;
  let outside = 0;
  const watched = (view) =>
    new Proxy(view, {
      get(target, property) {
        if (typeof property === 'string' && /^\d+$/.test(property)) {
          if (Number(property) >= target.length && ++outside > 1000) throw new Error(`read [${property}], past the region's ${target.length} elements`);
          return target[property];
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
      set: (target, property, value) => Reflect.set(target, property, value, target),
    });
  shard.u32 = watched(words);
  shard.u8 = watched(bytes);
  overwriteHeaderMidWrite(shard, (offset) => {
    words[(offset >>> 2) + 1] = 0xfffffff0; // value length
    words[offset >>> 2] = (0xffff << 16) | 1; // key length 65535, live
  });
  const { keys, entry } = keyAndEntry(arena, 'victim-writer', 100);
  arena.set(keys, entry);
  shard.u32 = words;
  shard.u8 = bytes;
  assert.equal(outside, 0, 'nothing past the region was read');
});

test('a writer whose record header is overwritten mid-write seals only its own record: another record keeps its checksum', { skip }, (t) => {
  const path = arenaPath(t);
  let cache = SharedCache.open(path, { memoryBytes: MiB, shards: 1, nearCache: 0 });
  for (let i = 0; i < 100; i++) cache.set(`k${i}`, `value ${i}`);
  const arena = Arena.attach(cache.handle.buffer);
  const shard = arena.shards[0];
  const found = new FoundEntry();
  const bystander = shard.findSlot(Buffer.from('k50'), 3, (3 << 16) | 1, keyAndEntry(arena, 'k50', 1).keys.hash, found);
  assert.ok(bystander >= 0);
  const bystanderOffset = found.offset;
  overwriteHeaderMidWrite(shard, (offset) => {
    // The size word now reaches into the bystander's record (the checksum word goes in a record's last 4 bytes).
    shard.u32[(offset >>> 2) + 3] = bystanderOffset + 40 - offset;
  });
  const { keys, entry } = keyAndEntry(arena, 'victim-writer', 100);
  assert.ok(bystanderOffset < shard.main.end);
  arena.set(keys, entry);
  cache.close();
  // The next opener checks every record's checksum (damage done while the
  // file was open, then a clean close: only a check on opening finds it).
  cache = SharedCache.open(path, { verifyOnOpen: true });
  t.after(() => cache.close());
  assert.equal(cache.get('k50'), 'value 50', 'the bystander kept its checksum');
  assert.equal(cache.stats().checksumFailures, 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('live bytes are still counted after repairs (the shard count and live bytes come from the rings)', () => {
  const { cache, arena, shard } = oneShard();
  for (let i = 0; i < 50; i++) cache.set(`k${i}`, 'x'.repeat(i));
  const liveBytes = shard.meta[M_LIVE_BYTES];
  shard.meta[M_LIVE_BYTES] = -1;
  shard.meta64[M64_WRITE_STAMP] += 0.25;
  recover(arena, shard);
  assert.equal(shard.meta[M_LIVE_BYTES], liveBytes);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  cache.close();
});

test('a block stripe whose counts or table are damaged refuses the write as corrupt and is reset: never another stripe\'s block, never an endless probe', () => {
  const damages = [
    ['a negative fresh-block count', (stripe) => {
      stripe.meta[S_FRESH] = -3;
    }],
    ['a CLOCK hand past its blocks', (stripe) => {
      stripe.meta[S_FRESH] = stripe.blockCount;
      stripe.meta[S_HAND] = stripe.blockCount + 5;
    }],
    ['a table without a free slot', (stripe) => {
      for (let slot = 0; slot < stripe.slots; slot++) stripe.table[slot * SLOT_WORDS + 2] = 1;
    }],
  ];
  for (const [what, damage] of damages) {
    const store = new BlockStore({ memoryBytes: 4 * MiB, blockBytes: 4096 });
    const arena = BlockArena.attach(store.handle.buffer);
    // Two blocks of the first stripe, and one of another stripe, which must come through untouched.
    const inStripe = [];
    let elsewhere = null;
    for (let index = 0; inStripe.length < 2 || elsewhere === null; index++) {
      if (arena.stripeOf(1, index) === arena.stripes[0]) inStripe.push(index);
      else elsewhere ??= index;
    }
    store.write(1, elsewhere * 4096, Buffer.alloc(4096, 7));
    store.write(1, inStripe[0] * 4096, Buffer.alloc(4096, 8));
    damage(arena.stripes[0]);
    assert.throws(() => store.write(1, inStripe[1] * 4096, Buffer.alloc(4096, 9)), { name: 'ArenaCacheError', code: 'ERR_ARENA_CORRUPT' }, what);
    store.write(1, inStripe[1] * 4096, Buffer.alloc(4096, 9));
    assert.deepEqual(store.read(1, inStripe[1] * 4096, 4096), Buffer.alloc(4096, 9), what);
    assert.deepEqual(store.read(1, elsewhere * 4096, 4096), Buffer.alloc(4096, 7), `${what}: the other stripe's block`);
    store.close();
  }
});

test('a live record whose expiry or stale time is not a time (NaN never expires) fails verify(), and a rebuild drops it', () => {
  const damages = [
    ['expiry NaN', (f64, at) => {
      f64[at + EXPIRY_F64] = Number.NaN;
    }],
    ['expiry Infinity', (f64, at) => {
      f64[at + EXPIRY_F64] = Number.POSITIVE_INFINITY;
    }],
    ['stale time after the expiry', (f64, at) => {
      f64[at + STALE_F64] = f64[at + EXPIRY_F64] + 1;
    }],
  ];
  for (const [what, damage] of damages) {
    const { cache, arena, shard } = oneShard({ staleWhileRevalidate: 60_000 });
    cache.set('plain', 'kept');
    cache.set('timed', 'value', { ttl: 60_000 });
    const found = new FoundEntry();
    const slot = shard.findSlot(Buffer.from('timed'), 5, (5 << 16) | 1, keyAndEntry(arena, 'timed', 1).keys.hash, found);
    damage(shard.f64, found.offset >>> 3);
    assert.ok(slot >= 0);
    const { problems } = cache.verify();
    assert.ok(problems.some((problem) => /^shard 0: live record at \d+ has (expiry|stale) time /.test(problem)), `${what}: ${problems.join('; ')}`);
    recover(arena, shard);
    assert.equal(cache.get('timed'), undefined, what);
    assert.equal(cache.get('plain'), 'kept', what);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] }, what);
    cache.close();
  }
});

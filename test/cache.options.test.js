// SharedCache options: each is checked with an error naming it (an unknown one
// suggests the likely name), undefined takes the default, and automatic
// sharding grows with memory; memory that cannot be allocated is
// ERR_ARENA_ALLOC, and a region over 2 GiB is refused before allocating.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

const memoryRange = 'an integer from 1 MiB (1048576) to 1 TiB (1099511627776)';

test('memoryBytes has a default: 64 MiB, or room for max entries of 1 KiB (1 MiB to 1 GiB)', () => {
  const memoryOf = (options) => {
    const cache = new SharedCache(options);
    const { memoryBytes } = cache.stats();
    cache.close();
    return memoryBytes;
  };
  assert.equal(memoryOf(), 64 * MiB);
  assert.equal(memoryOf({}), 64 * MiB);
  assert.equal(memoryOf({ ttl: 1000 }), 64 * MiB);
  // An lru-cache user's first line works, and the entry limit is what bounds it.
  const small = new SharedCache({ max: 500 });
  for (let i = 0; i < 600; i++) small.set(`k${i}`, { id: i, name: `user ${i}` });
  assert.equal(small.size, 500);
  assert.equal(small.stats().memoryBytes, MiB);
  small.close();
  assert.equal(memoryOf({ max: 10_000 }), 10 * MiB);
  assert.equal(memoryOf({ max: 100_000 }), 98 * MiB);
  assert.equal(memoryOf({ max: 2_000_000 }), 1024 * MiB);
  // Beyond 1 GiB the derived size stops: a max it cannot index is the max's error.
  assert.throws(() => new SharedCache({ max: 2 ** 32 }), { name: 'RangeError', message: /^options\.max \(4294967296\) needs a dictionary of \d+ bytes, more than half of options\.memoryBytes \(1073741824\); lower max or raise memoryBytes$/ });
  assert.equal(memoryOf({ max: 500, memoryBytes: 4 * MiB }), 4 * MiB);
  // A bad max is reported as such, not as a bad derived memoryBytes.
  assert.throws(() => new SharedCache({ max: -1 }), { name: 'RangeError', message: /^options\.max must be/ });
});

test('memoryBytes must be an integer in range', () => {
  assert.throws(() => new SharedCache({ memoryBytes: '64mb' }), {
    name: 'TypeError',
    message: 'options.memoryBytes must be a number (got "64mb")',
  });
  for (const [value, shown] of [[-5, '-5'], [MiB + 0.5, String(MiB + 0.5)], [1000, '1000'], [2 ** 41, String(2 ** 41)], [NaN, 'NaN']]) {
    assert.throws(() => new SharedCache({ memoryBytes: value }), {
      name: 'RangeError',
      message: `options.memoryBytes must be ${memoryRange} (got ${shown})`,
    });
  }
});

test('options must be an object', () => {
  assert.throws(() => new SharedCache(64), { name: 'TypeError', message: 'options must be an object (got 64)' });
  assert.throws(() => new SharedCache(null), { name: 'TypeError', message: 'options must be an object (got null)' });
});

test('an unknown option is an error that suggests the likely name', () => {
  assert.throws(() => new SharedCache({ memorybytes: MiB }), {
    name: 'TypeError',
    message: 'options.memorybytes is not a known option; did you mean memoryBytes?',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, maxSize: 10 }), {
    name: 'TypeError',
    message: "options.maxSize is not a known option; did you mean memoryBytes? (lru-cache's maxSize)",
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, ttl: 1, tll: 1 }), {
    name: 'TypeError',
    message: 'options.tll is not a known option; did you mean ttl?',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, completelyDifferent: 1 }), {
    name: 'TypeError',
    message:
      'options.completelyDifferent is not a known option; valid options are memoryBytes, max, policy, ttl, staleWhileRevalidate, ttlResolution, sweepIntervalMs, sweepChecks, fetchTimeoutMs, maxKeyBytes, shards, lockLeaseMs, lockWaitMs, codec, nearCache, nearCacheBytes',
  });
});

test('max must be a non-negative integer and at least the shard count', () => {
  assert.throws(() => new SharedCache({ memoryBytes: MiB, max: -1 }), {
    name: 'RangeError',
    message: 'options.max must be an integer from 0 (no limit) to 2^32 (got -1)',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, max: 2.5 }), {
    name: 'RangeError',
    message: 'options.max must be an integer from 0 (no limit) to 2^32 (got 2.5)',
  });
  assert.throws(() => new SharedCache({ memoryBytes: 8 * MiB, shards: 4, max: 2 }), {
    name: 'RangeError',
    message: 'options.max (2) must be at least options.shards (4): each shard holds max / shards entries',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, max: 100_000_000 }), {
    name: 'RangeError',
    message: /^options\.max \(100000000\) needs a dictionary of \d+ bytes, more than half of options\.memoryBytes \(1048576\); lower max or raise memoryBytes$/,
  });
});

test('maxKeyBytes must be between 1 and 65535', () => {
  for (const value of [0, 65536, 1.5]) {
    assert.throws(() => new SharedCache({ memoryBytes: MiB, maxKeyBytes: value }), {
      name: 'RangeError',
      message: `options.maxKeyBytes must be an integer from 1 to 65535 (got ${value})`,
    });
  }
});

test('shards must be 0 or a power of two that leaves each shard enough memory', () => {
  assert.throws(() => new SharedCache({ memoryBytes: MiB, shards: 3 }), {
    name: 'RangeError',
    message: 'options.shards must be 0 (automatic) or a power of two up to 4096 (got 3)',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, shards: 8192 }), {
    name: 'RangeError',
    message: 'options.shards must be 0 (automatic) or a power of two up to 4096 (got 8192)',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, shards: 256 }), {
    name: 'RangeError',
    message: /^options\.shards \(256\) leaves each shard \d+ bytes of data, less than 16384; use fewer shards or raise options\.memoryBytes$/,
  });
  const cache = new SharedCache({ memoryBytes: 8 * MiB, shards: 8 });
  assert.equal(cache.stats().shards, 8);
});

test('lockLeaseMs must be a positive integer', () => {
  assert.throws(() => new SharedCache({ memoryBytes: MiB, lockLeaseMs: 0 }), {
    name: 'RangeError',
    message: 'options.lockLeaseMs must be an integer from 1 to 600000 milliseconds (got 0)',
  });
});

test('lockWaitMs must be an integer from 1 ms to an hour; it is stored in the arena and an open() must agree with it', (t) => {
  assert.throws(() => new SharedCache({ memoryBytes: MiB, lockWaitMs: 0 }), {
    name: 'RangeError',
    message: 'options.lockWaitMs must be an integer from 1 to 3600000 milliseconds (got 0)',
  });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, lockWaitMs: '5' }), { name: 'TypeError', message: 'options.lockWaitMs must be a number (got "5")' });
  assert.throws(() => new SharedCache({ memoryBytes: MiB, lockWaitMs: 1.5 }), { name: 'RangeError' });
  const cache = new SharedCache({ memoryBytes: MiB, lockWaitMs: 250 });
  t.after(() => cache.close());
  const attached = SharedCache.attach(cache.handle);
  t.after(() => attached.close());
  assert.equal(attached.stats().lockTimeouts, 0);
});

test('codec must have a name, encode and decode', () => {
  const good = { name: 'x', encode: () => new Uint8Array(), decode: () => null };
  const cases = [
    ['json', TypeError, 'options.codec must be an object with name, encode and decode (got "json")'],
    [{ ...good, name: '' }, TypeError, 'options.codec.name must be a non-empty string (got "")'],
    [{ ...good, name: 'n'.repeat(65) }, RangeError, 'options.codec.name must be at most 64 bytes (got 65)'],
    [{ ...good, encode: 1 }, TypeError, 'options.codec.encode must be a function (got 1)'],
    [{ ...good, decode: undefined }, TypeError, 'options.codec.decode must be a function (got undefined)'],
  ];
  for (const [codec, type, message] of cases) {
    assert.throws(() => new SharedCache({ memoryBytes: MiB, codec }), { name: type.name, message });
  }
});

test('undefined options take their defaults', () => {
  const cache = new SharedCache({ memoryBytes: MiB, ttl: undefined, max: undefined });
  cache.set('k', 1);
  assert.equal(cache.get('k'), 1);
});

test('automatic sharding grows with memory; max bounds the entries', () => {
  assert.equal(new SharedCache({ memoryBytes: MiB }).stats().shards, 1);
  assert.equal(new SharedCache({ memoryBytes: 64 * MiB }).stats().shards, 16);
  const bounded = new SharedCache({ memoryBytes: 8 * MiB, max: 100 });
  assert.ok(bounded.stats().shards <= 16, 'few shards for a small max');
  for (let i = 0; i < 1000; i++) bounded.set(`k${i}`, i);
  assert.equal(bounded.size, 100);
  assert.equal(bounded.stats().maxEntries, 100);
});

test('memory that cannot be allocated is ERR_ARENA_ALLOC', () => {
  assert.throws(() => new SharedCache({ memoryBytes: 2 ** 40 }), (error) => {
    assert.equal(error.name, 'ArenaCacheError');
    assert.equal(error.code, 'ERR_ARENA_ALLOC');
    assert.match(error.message, /^could not allocate 1099511627776 bytes of shared memory \(.+\); lower options\.memoryBytes$/);
    assert.ok(error.cause instanceof RangeError);
    return true;
  });
});

test('shards that would leave a region larger than 2 GiB are refused before allocating', () => {
  assert.throws(() => new SharedCache({ memoryBytes: 8 * 2 ** 30, shards: 2 }), {
    name: 'RangeError',
    message: /^options\.shards \(2\) gives each shard \d+ bytes of data, more than 2147479552; use more shards$/,
  });
});

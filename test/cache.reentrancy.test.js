// Re-entrancy: the cache runs user code in the middle of its own calls (a
// codec's encode and decode, getters and toJSON on a value it encodes,
// msgpackr extensions, fetch() loaders), and that code may call back into
// the same cache or another instance of its arena. Whatever it does, every
// call must act on its own key and answer with its own entry: a set stores
// under the key it was given, a get's near-cache entry is stamped with the
// record it read, and no near entry survives a write by any instance.
//
// First the attacks the review found, one by one; then a seeded model test
// in which codecs, getters, toJSON, extensions and loaders call every public
// method on both instances in random order (SEED=<n> replays a run, STRESS=1
// runs it longer).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { addExtension } from 'msgpackr';
import { SharedCache } from '../lib/index.js';
import { VALUE_CODEC } from '../lib/arena/entries/record.js';
import { kGetFound, kInvalidation, kStampIsCurrent } from '../lib/internal-symbols.js';
import { FoundEntry } from '../lib/cache/found-entry.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

// msgpackr extensions are global: every Packr and Unpackr of the process,
// the default codec's included, runs them. Each call goes to `hooks`, which
// the tests set.
const hooks = { refGet: null, pack: null, unpack: null };

/** A reference to another key, resolved on decode (the normalised-cache pattern) by hooks.refGet. */
class Ref {
  constructor(key) {
    this.key = key;
  }
}
addExtension({
  Class: Ref,
  type: 71,
  pack: (ref) => Buffer.from(ref.key),
  unpack: (bytes) => {
    const key = bytes.toString();
    return { key, value: hooks.refGet === null ? null : hooks.refGet(key) };
  },
});

/** Decodes as an object whose getter reads the cache (when the near cache walks it to freeze it) and returns 'resolved'. */
class Lazy {
  constructor(key) {
    this.key = key;
  }
}
addExtension({
  Class: Lazy,
  type: 72,
  pack: (lazy) => Buffer.from(lazy.key),
  unpack: (bytes) => {
    const key = bytes.toString();
    return {
      get value() {
        hooks.refGet?.(key);
        return 'resolved';
      },
    };
  },
});

/** Decodes as { v: 'got' } through a getter that runs hooks.unpack: the near cache's freezing walk runs it. */
class Getter {}
addExtension({
  Class: Getter,
  type: 74,
  pack: () => Buffer.from('g'),
  unpack: () => ({
    get v() {
      hooks.unpack?.();
      return 'got';
    },
  }),
});

/** Runs hooks.pack / hooks.unpack when encoded and decoded; decodes as the string 'hook'. */
class Hook {}
addExtension({
  Class: Hook,
  type: 73,
  pack: () => {
    hooks.pack?.();
    return Buffer.from('h');
  },
  unpack: () => {
    hooks.unpack?.();
    return 'hook';
  },
});

/**
 * A JSON codec whose decode resolves `{ ref }` through `resolve(ref)` into
 * `org` (set `codec.resolve` once the cache exists).
 */
function resolvingCodec(name = 'json-resolving') {
  const codec = {
    name,
    resolve: null,
    encode: (value) => Buffer.from(JSON.stringify(value)),
    decode(bytes) {
      const value = JSON.parse(bytes.toString());
      if (value !== null && typeof value.ref === 'string' && codec.resolve !== null) value.org = codec.resolve(value.ref);
      return value;
    },
  };
  return codec;
}

test('a getter on a value that reads the cache does not move the value to the key it read', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  cache.set('config', 'dark');
  const user = {
    id: 1,
    get theme() {
      return cache.get('config');
    },
  };
  cache.set('user:1', user);
  assert.deepEqual(cache.get('user:1'), { id: 1, theme: 'dark' });
  assert.equal(cache.get('config'), 'dark');
  assert.equal(cache.size, 2);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('getters that write the cache (set, delete, has, peek, info, clear) do not move or corrupt the value being set', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  cache.set('other', 'x');
  const value = {
    get a() {
      cache.set('other', { long: 'y'.repeat(300) });
      return 1;
    },
    get b() {
      return [cache.has('missing'), cache.peek('other')?.long.length, cache.info('other')?.valueBytes > 0];
    },
    get c() {
      cache.delete('other');
      cache.setMany([['m1', 1], ['m2', { two: 2 }]]);
      return 'c';
    },
  };
  cache.set('target', value, { ttl: 60_000 });
  assert.deepEqual(cache.get('target'), { a: 1, b: [false, 300, true], c: 'c' });
  assert.ok(cache.getRemainingTTL('target') > 50_000, 'the ttl given is the stored entry\'s');
  assert.equal(cache.get('other'), undefined);
  assert.deepEqual(cache.getMany(['m1', 'm2']), [1, { two: 2 }]);

  // A clear() inside the encode empties the cache before the store: the value is stored all the same.
  cache.set('cleared', {
    get v() {
      cache.clear();
      return 'v';
    },
  });
  assert.deepEqual([...cache.keys()], ['cleared']);
  assert.deepEqual(cache.get('cleared'), { v: 'v' });
});

test('a bad key throws before the codec or a getter sees the value; a long valid key is stored under itself', () => {
  let encodes = 0;
  const cache = new SharedCache({
    memoryBytes: 4 * MiB,
    codec: {
      name: 'json-counting',
      encode: (value) => {
        encodes++;
        return Buffer.from(JSON.stringify(value));
      },
      decode: (bytes) => JSON.parse(bytes.toString()),
    },
  });
  let getters = 0;
  const value = {
    get seen() {
      getters++;
      return cache.get('probe');
    },
  };
  assert.throws(() => cache.set(42, value), { name: 'TypeError', message: /key must be a string, Buffer or Uint8Array/ });
  assert.throws(() => cache.set('a\ud800b', value), { name: 'TypeError', message: /lone surrogate at index 1/ });
  assert.throws(() => cache.set('k'.repeat(cache.maxKeyBytes + 1), value), RangeError);
  assert.throws(() => cache.set('é'.repeat(cache.maxKeyBytes / 2 + 1), value), RangeError);
  assert.throws(() => cache.set(Buffer.alloc(cache.maxKeyBytes + 1), value), RangeError);
  assert.throws(() => cache.setMany([['ok', 'one'], [null, value]]), TypeError);
  assert.equal(encodes, 0);
  assert.equal(getters, 0);
  assert.equal(cache.size, 0);

  // Keys the quick check cannot vouch for, yet valid: encoded in full, and stored under themselves.
  cache.set('probe', 'p');
  const long = 'x'.repeat(cache.maxKeyBytes);
  const wide = 'é'.repeat(cache.maxKeyBytes / 2);
  cache.set(long, value);
  cache.set(wide, value);
  assert.deepEqual(cache.get(long), { seen: 'p' });
  assert.deepEqual(cache.get(wide), { seen: 'p' });
  assert.equal(cache.get('probe'), 'p');
  assert.equal(cache.size, 3);
});

test('a codec whose encode reads the cache stores under the key it was given', () => {
  const cache = new SharedCache({
    memoryBytes: 4 * MiB,
    codec: {
      name: 'json-reading',
      encode: (value) => {
        // e.g. a codec that looks up a schema version before encoding
        const version = cache.get('schema') ?? 0;
        return Buffer.from(JSON.stringify({ version, value }));
      },
      decode: (bytes) => JSON.parse(bytes.toString()).value,
    },
  });
  cache.set('schema', 'v7');
  cache.set('ids', [1, 2, 3]);
  assert.deepEqual(cache.get('ids'), [1, 2, 3]);
  assert.equal(cache.get('schema'), 'v7');
  // With a Buffer key, and a key of another length.
  cache.set(Buffer.from('a-buffer-key'), { n: 1 });
  assert.deepEqual(cache.get(Buffer.from('a-buffer-key')), { n: 1 });
  assert.equal(cache.get('schema'), 'v7');
});

test('toJSON on a value that reads the cache stores under the key it was given (default codec)', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  cache.set('rate', 1.5);
  class Money {
    constructor(amount) {
      this.amount = amount;
    }
    toJSON() {
      return { amount: this.amount * cache.get('rate') };
    }
  }
  cache.set('price', new Money(10));
  assert.deepEqual(cache.get('price'), { amount: 15 });
  assert.equal(cache.get('rate'), 1.5);
});

test('setMany encodes each value once, before storing anything, and stores every pair under its own key', () => {
  let encodes = 0;
  const cache = new SharedCache({
    memoryBytes: 4 * MiB,
    codec: {
      name: 'json-counting',
      encode: (value) => {
        encodes++;
        cache.get('probe');
        return Buffer.from(JSON.stringify(value));
      },
      decode: (bytes) => JSON.parse(bytes.toString()),
    },
  });
  cache.set('probe', 'p');
  encodes = 0;
  let stored = null;
  const withGetter = {
    get seen() {
      // Runs before any pair of the batch is stored.
      stored = cache.has('a');
      return cache.get('probe');
    },
  };
  cache.setMany([
    ['a', { n: 1 }],
    ['b', withGetter],
    ['c', 'text'],
    ['d', [4]],
  ]);
  assert.equal(encodes, 3, 'each codec value is encoded once');
  assert.equal(stored, false);
  assert.deepEqual(cache.getMany(['a', 'b', 'c', 'd', 'probe']), [{ n: 1 }, { seen: 'p' }, 'text', [4], 'p']);
  assert.equal(cache.size, 5);

  // A value too large fails the whole batch before anything is stored, whatever its getters did.
  const small = new SharedCache({ memoryBytes: 1 * MiB, shards: 1 });
  const huge = {
    get blob() {
      small.get('x');
      return 'z'.repeat(2 * MiB);
    },
  };
  assert.throws(() => small.setMany([['x', { ok: 1 }], ['y', huge]]), RangeError);
  assert.equal(small.size, 0);
});

/**
 * The normalised-cache attack on `cache` (whose codec resolves refs with
 * cache.get): after the near cache keeps user:1, `writer(op, key, value)`
 * (another instance) overwrites and deletes it, and `cache` must see both.
 */
async function normalisedAttack(cache, writer, getOptions) {
  cache.set('org:1', { name: 'acme' });
  cache.set('user:1', { name: 'ann', ref: 'org:1' });
  // A key enters the near cache on its second miss: read it a few times.
  for (let i = 0; i < 4; i++) assert.deepEqual(cache.get('user:1', getOptions), { name: 'ann', ref: 'org:1', org: { name: 'acme' } });
  assert.ok(cache.stats().nearHits > 0, 'the near cache answers user:1');
  await writer('set', 'user:1', { name: 'bob', ref: 'org:1' });
  assert.deepEqual(cache.get('user:1', getOptions), { name: 'bob', ref: 'org:1', org: { name: 'acme' } }, 'an overwrite by another instance is seen');
  for (let i = 0; i < 3; i++) cache.get('user:1', getOptions);
  await writer('delete', 'user:1');
  assert.equal(cache.get('user:1', getOptions), undefined, 'a delete by another instance is seen');
  assert.equal(cache.get('user:1'), undefined);
  assert.deepEqual(cache.get('org:1'), { name: 'acme' });
}

test('a codec whose decode reads the cache does not stamp the outer near entry with the inner one (another instance writes)', async () => {
  const codec = resolvingCodec();
  const cache = new SharedCache({ memoryBytes: 4 * MiB, codec });
  codec.resolve = (ref) => cache.get(ref);
  const other = SharedCache.attach(cache.handle, { codec: resolvingCodec() });
  await normalisedAttack(cache, async (op, key, value) => (op === 'set' ? other.set(key, value) : other.delete(key)));
});

test('a codec whose decode reads the cache with allowStale does not stamp the outer near entry with the inner one', async () => {
  const codec = resolvingCodec();
  const cache = new SharedCache({ memoryBytes: 4 * MiB, codec });
  codec.resolve = (ref) => cache.get(ref, { allowStale: true });
  const other = SharedCache.attach(cache.handle, { codec: resolvingCodec() });
  await normalisedAttack(cache, async (op, key, value) => (op === 'set' ? other.set(key, value) : other.delete(key)), { allowStale: true });
});

test('a codec whose decode reads the cache does not stamp the outer near entry with the inner one (a worker writes)', async () => {
  const codec = resolvingCodec();
  const cache = new SharedCache({ memoryBytes: 4 * MiB, codec });
  codec.resolve = (ref) => cache.get(ref);
  const worker = new Worker(new URL('./fixtures/reentrancy-writer.js', import.meta.url), {
    workerData: { handle: cache.handle, codecName: codec.name },
  });
  try {
    await normalisedAttack(cache, async (op, key, value) => {
      worker.postMessage({ op, key, value });
      await once(worker, 'message');
    });
  } finally {
    worker.postMessage({ op: 'close' });
    await once(worker, 'exit');
  }
});

test('a msgpackr extension that resolves a ref on decode (default codec): right value, right near stamp, right read stamp', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const other = SharedCache.attach(cache.handle);
  hooks.refGet = (key) => cache.get(key);
  try {
    cache.set('org:1', { name: 'acme', city: 'oslo' });
    // The ref first: the rest of the value is decoded after the nested get.
    cache.set('user:1', { org: new Ref('org:1'), name: 'ann', tags: ['a', 'b'] });
    const expected = { org: { key: 'org:1', value: { name: 'acme', city: 'oslo' } }, name: 'ann', tags: ['a', 'b'] };
    const found = new FoundEntry();
    assert.deepEqual(cache[kGetFound]('user:1', found), expected);

    // What InodeFS reads after a get: the stamp of the entry that get returned.
    const stamp = found.toRecordStamp();
    other.set('user:1', { org: new Ref('org:1'), name: 'bob', tags: [] });
    assert.equal(cache[kStampIsCurrent](stamp), false, 'the stamp read after get(user:1) is user:1\'s');

    for (let i = 0; i < 4; i++) assert.equal(cache.get('user:1').name, 'bob');
    assert.ok(cache.stats().nearHits > 0);
    other.set('user:1', { org: new Ref('org:1'), name: 'cyd', tags: [] });
    assert.equal(cache.get('user:1').name, 'cyd');
    for (let i = 0; i < 3; i++) cache.get('user:1');
    other.delete('user:1');
    assert.equal(cache.get('user:1'), undefined);
  } finally {
    hooks.refGet = null;
  }
});

test('a value whose getter reads the cache is never kept half-frozen by the near cache', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  hooks.refGet = (key) => cache.get(key);
  try {
    // The inner value cannot be frozen (a Map): the near cache declines it while it walks the outer one.
    cache.set('inner', { map: new Map([[1, 2]]) });
    cache.set('outer', { a: { x: 1 }, lazy: new Lazy('inner'), b: { y: 2 } });
    // Each key's doorkeeper bit first, so that both are admitted on the next miss.
    cache.get('inner');
    cache.get('outer');
    cache.get('outer');
    const value = cache.get('outer');
    // Kept values are wholly frozen; others come back as decoded, so changing them changes nothing for later gets.
    if (Object.isFrozen(value)) {
      assert.ok(Object.isFrozen(value.a) && Object.isFrozen(value.b), 'a kept value is frozen throughout');
    } else {
      value.a.x = 99;
    }
    assert.equal(cache.get('outer').a.x, 1);
    assert.equal(cache.get('outer').a.x, 1);
  } finally {
    hooks.refGet = null;
  }
});

test('a getter that reads the cache while the near cache freezes a value cannot hand that value\'s entry to another key', () => {
  // One entry: keeping the string the getter reads evicts the very entry the outer value was about to refill.
  const cache = new SharedCache({ memoryBytes: 4 * MiB, nearCache: 1 });
  const other = SharedCache.attach(cache.handle, { nearCache: 1 });
  cache.set('s', 'a string');
  cache.set('o', { n: 1, lazy: new Lazy('s') });
  for (let i = 0; i < 3; i++) cache.get('o');
  assert.equal(cache.stats().nearHits, 1, 'o is kept');
  // s's doorkeeper bit: its next miss keeps it.
  cache.get('s');
  other.set('o', { n: 2, lazy: new Lazy('s') });
  hooks.refGet = (key) => cache.get(key);
  try {
    assert.equal(cache.get('o').n, 2);
  } finally {
    hooks.refGet = null;
  }
  assert.equal(cache.get('s'), 'a string');
  assert.equal(cache.get('s'), 'a string');
  assert.equal(cache.get('o').n, 2);
});

test('a decode that reads a stale entry does not make fetch() see a fresh one as stale, nor the reverse', async () => {
  const codec = resolvingCodec();
  const cache = new SharedCache({ memoryBytes: 4 * MiB, codec });
  codec.resolve = (ref) => cache.get(ref, { allowStale: true });
  cache.set('org:stale', { name: 'old' }, { ttl: 20, staleWhileRevalidate: 60_000 });
  cache.set('org:fresh', { name: 'new' });
  cache.set('user:fresh', { name: 'ann', ref: 'org:stale' });
  cache.set('user:stale', { name: 'bob', ref: 'org:fresh' }, { ttl: 20, staleWhileRevalidate: 60_000 });
  await sleep(60);

  let loads = 0;
  const loader = () => {
    loads++;
    return { name: 'loaded' };
  };
  // Fresh outer, stale inner: a hit, no refresh.
  assert.deepEqual(await cache.fetch('user:fresh', loader), { name: 'ann', ref: 'org:stale', org: { name: 'old' } });
  assert.equal(loads, 0, 'a fresh value is not refreshed');
  assert.equal(cache.stats().fetchStale, 0);

  // Stale outer, fresh inner: served stale (allowStale) but never kept as fresh for get().
  for (let i = 0; i < 3; i++) assert.equal(cache.get('user:stale', { allowStale: true }).name, 'bob');
  assert.equal(cache.get('user:stale'), undefined, 'a stale value is not served without allowStale');
  assert.equal(cache.peek('user:stale'), undefined);
});

test('the invalidation bus is handed a codec value with its own value kind (a decode that reads a string entry)', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  hooks.refGet = (key) => cache.get(key);
  try {
    cache.set('label', 'a string entry');
    cache.set('marker', { ref: new Ref('label'), n: 1 });
    const stored = cache[kInvalidation]().storedValue('marker');
    assert.equal(stored[0], VALUE_CODEC);
  } finally {
    hooks.refGet = null;
  }
});

// The model test. Every piece of user code the cache runs calls maybeNested(),
// which (up to two levels deep) runs a random operation of any public method
// on either instance, applying it to the model as it goes. The expectation of
// a read is taken when the read happens: a get returns the entry as it was
// when it was looked up, even if its decode then changes it.

/** A value whose toJSON (which msgpackr and JSON.stringify call) runs user code. */
class Jsonable {
  constructor(n, nested) {
    this.n = n;
    this.nested = nested;
  }

  toJSON() {
    this.nested();
    return { t: this.n };
  }
}

const KEY_COUNT = 16;

function keyOf(n) {
  return n % 5 === 4 ? Buffer.from(`k${n}`) : `k${n}`;
}

function idOf(key) {
  return typeof key === 'string' ? `s:${key}` : `b:${key.toString('hex')}`;
}

/**
 * A JSON codec that runs `nested()` in every encode and decode, and decodes
 * objects marked `proxied` as a proxy whose traps run `nested()` (as the
 * near cache's freezing walk looks at it).
 */
function hookedJsonCodec(nested) {
  const handler = {
    ownKeys(target) {
      nested();
      return Reflect.ownKeys(target);
    },
    getPrototypeOf(target) {
      nested();
      return Reflect.getPrototypeOf(target);
    },
  };
  return {
    name: 'json-hooked',
    encode(value) {
      nested();
      return Buffer.from(JSON.stringify(value));
    },
    decode(bytes) {
      nested();
      const value = JSON.parse(bytes.toString());
      return value !== null && value.proxied === true ? new Proxy(value, handler) : value;
    },
  };
}

async function modelRun({ seed, steps, codecName, nearCache }) {
  const random = seededRandom(seed);
  const model = new Map();
  /**
   * Ids of keys with a fetch() under way. Its load is stored in a microtask
   * the model cannot see into (other loads' stores, and the user code they
   * run, come between it and the fetch's settling), so no other operation
   * touches such a key, and none clears, until it settles. (A second fetch
   * would also wait for the first one's flight.)
   */
  const inFlight = new Set();
  /** Nested fetches still to settle, each applying its load to the model when it does. */
  const pending = [];
  /** The last operations, for the failure message. */
  const trail = [];
  let depth = 0;
  let hooksOn = true;
  let nested = 0;

  function maybeNested() {
    if (!hooksOn || depth >= 2 || random() >= 0.5) return;
    depth++;
    nested++;
    try {
      operation(false);
    } finally {
      depth--;
    }
  }

  const codec = codecName === 'json' ? hookedJsonCodec(maybeNested) : undefined;
  hooks.pack = maybeNested;
  hooks.unpack = maybeNested;
  const a = new SharedCache({ memoryBytes: 16 * MiB, nearCache, codec });
  const b = SharedCache.attach(a.handle, { nearCache, codec });
  const instances = [a, b];

  function randomValue() {
    const n = random.int(1000);
    switch (random.int(codecName === 'json' ? 7 : 8)) {
      case 0:
        return { live: `text ${n}`, expected: `text ${n}` };
      case 1:
        return { live: Buffer.from(`bytes ${n}`), expected: Buffer.from(`bytes ${n}`) };
      case 2:
        return hooked({ live: { n, list: [n, 'x'] }, expected: { n, list: [n, 'x'] } });
      case 3:
        return hooked({
          live: {
            n,
            get g() {
              maybeNested();
              return n * 2;
            },
          },
          expected: { n, g: n * 2 },
        });
      case 4:
        return { live: new Jsonable(n, maybeNested), expected: { t: n } };
      case 5:
        return random() < 0.5 ? { live: n * 1.5, expected: n * 1.5 } : { live: [n, null], expected: [n, null] };
      case 6:
        // Decoded with a getter (msgpackr) or as a proxy (JSON) that runs user code when the near cache walks it.
        return codecName === 'json'
          ? { live: { n, proxied: true }, expected: { n, proxied: true } }
          : { live: { n, g: new Getter() }, expected: { n, g: { v: 'got' } } };
      default:
        // A msgpackr extension value: its pack and unpack run user code.
        return { live: { n, h: new Hook() }, expected: { n, h: 'hook' } };
    }
  }

  /** With the default codec, half the objects also hold a Hook: their decode runs user code too. */
  function hooked(value) {
    if (codecName === 'json' || random() < 0.5) return value;
    value.live.h = new Hook();
    value.expected.h = 'hook';
    return value;
  }

  /** A key no fetch is loading (see inFlight), or null when none was found in a few tries. */
  function randomKey() {
    for (let i = 0; i < 8; i++) {
      const key = keyOf(random.int(KEY_COUNT));
      if (!inFlight.has(idOf(key))) return key;
    }
    return null;
  }
  /** 1 to `most` keys for a batch operation (without the keys being loaded). */
  const randomKeys = (most) => Array.from({ length: 1 + random.int(most) }, randomKey).filter((key) => key !== null);
  const expectedOf = (key) => model.get(idOf(key))?.expected;
  /** Compares with the hooks off: comparing reads getters, and they must not run operations then. */
  function same(actual, expected, what) {
    const was = hooksOn;
    hooksOn = false;
    try {
      assert.deepEqual(actual, expected, what);
    } finally {
      hooksOn = was;
    }
  }

  function fetchOp(cache, name, top, key) {
    const id = idOf(key);
    const before = model.get(id);
    const { live, expected } = randomValue();
    let loaded = false;
    inFlight.add(id);
    const promise = cache
      .fetch(key, () => {
        loaded = true;
        maybeNested();
        return live;
      })
      .then((value) => {
        if (loaded) {
          // The load was stored just before this (nothing of this thread runs in between).
          model.set(id, { key, expected });
          assert.equal(value, live, `${name}.fetch(${id}) resolves with what its loader returned`);
        } else {
          same(value, before?.expected, `${name}.fetch(${id}) hit`);
        }
      })
      .finally(() => inFlight.delete(id));
    if (top) return promise;
    pending.push(promise);
    return null;
  }

  /** One random operation on a random instance; returns a promise for a top-level fetch. */
  function operation(top) {
    const cache = random.pick(instances);
    const name = cache === a ? 'a' : 'b';
    const op = random.int(13);
    const key = randomKey();
    if (key === null) return null;
    const id = idOf(key);
    const opName = ['get', 'peek', 'info', 'has', 'set', 'set', 'delete', 'getMany', 'setMany', 'deleteMany', 'clear', 'fetch', 'getRemainingTTL'][op];
    trail.push(`${'  '.repeat(depth)}${name}.${opName} ${[7, 8, 9, 10].includes(op) ? '' : id}`);
    if (trail.length > 40) trail.shift();
    switch (op) {
      case 0: {
        const expected = expectedOf(key);
        same(random() < 0.3 ? cache.get(key, { allowStale: true }) : cache.get(key), expected, `${name}.get(${id})`);
        return null;
      }
      case 1: {
        const expected = expectedOf(key);
        same(cache.peek(key), expected, `${name}.peek(${id})`);
        return null;
      }
      case 2: {
        const expected = expectedOf(key);
        same(cache.info(key)?.value, expected, `${name}.info(${id})`);
        return null;
      }
      case 3:
        assert.equal(cache.has(key), model.has(id), `${name}.has(${id})`);
        return null;
      case 4:
      case 5: {
        const { live, expected } = randomValue();
        cache.set(key, live);
        model.set(id, { key, expected });
        return null;
      }
      case 6:
        assert.equal(cache.delete(key), model.delete(id), `${name}.delete(${id})`);
        return null;
      case 7: {
        const keys = randomKeys(4);
        trail[trail.length - 1] += keys.map(idOf).join(', ');
        const expected = [];
        // Each key's expectation when getMany reaches it: decoding an earlier one may change it.
        function* reached() {
          for (const each of keys) {
            expected.push(expectedOf(each));
            yield each;
          }
        }
        same(cache.getMany(reached()), expected, `${name}.getMany(${keys.map(idOf).join(', ')})`);
        return null;
      }
      case 8: {
        const pairs = randomKeys(3).map((each) => [each, randomValue()]);
        trail[trail.length - 1] += pairs.map(([each]) => idOf(each)).join(', ');
        cache.setMany(pairs.map(([each, value]) => [each, value.live]));
        for (const [each, value] of pairs) model.set(idOf(each), { key: each, expected: value.expected });
        return null;
      }
      case 9: {
        const keys = randomKeys(3);
        trail[trail.length - 1] += keys.map(idOf).join(', ');
        let deleted = 0;
        for (const each of keys) if (model.delete(idOf(each))) deleted++;
        assert.equal(cache.deleteMany(keys), deleted, `${name}.deleteMany(${keys.map(idOf).join(', ')})`);
        return null;
      }
      case 10:
        // Rarer than the rest: a clear empties the model the others work on.
        if (random() < 0.3 && inFlight.size === 0) {
          trail[trail.length - 1] += '(done)';
          cache.clear();
          model.clear();
        }
        return null;
      case 11:
        return fetchOp(cache, name, top, key);
      default: {
        // Before the call: it decodes the value, and that may change the model.
        const expected = model.has(id) ? Infinity : 0;
        assert.equal(cache.getRemainingTTL(key), expected, `${name}.getRemainingTTL(${id})`);
        return null;
      }
    }
  }

  let step = 0;
  try {
    for (; step < steps; step++) {
      const fetched = operation(true);
      if (fetched !== null) await fetched;
      while (pending.length > 0) await Promise.all(pending.splice(0));
    }
    // Both instances, and both ways of reading, agree with the model at the end.
    hooksOn = false;
    for (let n = 0; n < KEY_COUNT; n++) {
      const key = keyOf(n);
      for (const cache of instances) {
        assert.deepEqual(cache.get(key), expectedOf(key), `get(${idOf(key)}) at the end`);
        assert.deepEqual(cache.peek(key), expectedOf(key), `peek(${idOf(key)}) at the end`);
      }
    }
    assert.equal(a.size, model.size);
    assert.deepEqual(
      new Map([...a.entries()].map(([key, value]) => [idOf(key), value])),
      new Map([...model].map(([id, entry]) => [id, entry.expected])),
    );
    assert.deepEqual(a.verify(), { ok: true, problems: [] });
  } catch (error) {
    throw new Error(
      `model run failed at step ${step} (SEED=${seed}, codec ${codecName}, nearCache ${nearCache}): ${error.message}\nlast operations:\n${trail.join('\n')}`,
      { cause: error },
    );
  } finally {
    hooksOn = false;
    hooks.pack = null;
    hooks.unpack = null;
  }
  const stats = a.stats();
  a.close();
  b.close();
  return { nested, nearHits: stats.nearHits };
}

for (const codecName of ['msgpackr', 'json']) {
  // The default near cache, and a tiny one whose own eviction runs all the time.
  for (const nearCache of [undefined, 4]) {
    test(`codecs, getters, toJSON, extensions and loaders calling every method on both instances: results equal a Map model (${codecName}, nearCache ${nearCache ?? 'default'})`, async () => {
      const seed = testSeed();
      const steps = STRESS ? 200_000 : 3000;
      const { nested, nearHits } = await modelRun({ seed, steps, codecName, nearCache });
      assert.ok(nested > steps / 10, `user code called the cache back (${nested} times)`);
      assert.ok(nearHits > 0, 'the near cache answered');
    });
  }
}

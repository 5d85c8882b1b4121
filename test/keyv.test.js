// The Keyv storage adapter (arenacache/keyv): every Keyv call reaches the
// cache, ttl and namespaces behave as Keyv expects, values round-trip,
// instances and workers over one cache see each other, arguments are
// checked, and each failure is reported once, as Keyv reports a store's.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { Keyv } from 'keyv';
import { ArenaCacheError, SharedCache } from '../lib/index.js';
import { createKeyv, KeyvArenaCache } from 'arenacache/keyv';
import { MiB } from './helpers/units.js';
import { runWithout } from './helpers/without-package.js';

function newCache(options) {
  return new SharedCache({ memoryBytes: 4 * MiB, ...options });
}

/** A Keyv over a new adapter on `cache`; `errors` collects what it emits. */
function keyvOver(cache, options) {
  const keyv = new Keyv({ store: new KeyvArenaCache(cache), ...options });
  const errors = [];
  keyv.on('error', (error) => errors.push(error));
  return { keyv, errors };
}

const closed = { name: 'ArenaCacheError', code: 'ERR_CACHE_CLOSED', message: 'the cache is closed: close() was called on this instance' };
const tooLarge = {
  name: 'RangeError',
  message: /^value is \d+ bytes; the largest value this cache can hold under this key is \d+ bytes \(each of its 1 shards has \d+ bytes for one entry\); raise options\.memoryBytes or lower options\.shards$/,
};

test('get, set, has, delete and clear through Keyv; entries are Keyv strings under "<namespace>:<key>"', async () => {
  const cache = newCache();
  const { keyv, errors } = keyvOver(cache);
  assert.equal(await keyv.get('a'), undefined);
  assert.equal(await keyv.has('a'), false);
  assert.equal(await keyv.set('a', { n: 1 }), true);
  assert.deepEqual(await keyv.get('a'), { n: 1 });
  assert.equal(await keyv.has('a'), true);
  assert.deepEqual([...cache.keys()], ['keyv:a']);
  assert.equal(cache.get('keyv:a'), '{"value":{"n":1}}');
  assert.equal(await keyv.delete('a'), true);
  assert.equal(await keyv.delete('a'), false);
  assert.equal(await keyv.get('a'), undefined);
  await keyv.set('b', 1);
  await keyv.set('c', 2);
  await keyv.clear();
  assert.equal(cache.size, 0);
  assert.deepEqual(errors, []);
});

test("a ttl from Keyv becomes the entry's ttl in the cache", async () => {
  const cache = newCache();
  const { keyv } = keyvOver(cache);
  const withDefault = keyvOver(cache, { namespace: 'short', ttl: 60 }).keyv;
  await keyv.set('short', 'v', 60);
  await keyv.set('long', 'v', 60_000);
  await withDefault.set('k', 'v');
  assert.equal(await keyv.get('short'), 'v');
  assert.equal(cache.has('keyv:short'), true);
  await sleep(150);
  // Keyv's has() asks the store and does not look at `expires`: only an
  // expiry in the cache makes it false.
  assert.equal(await keyv.has('short'), false);
  assert.equal(cache.get('keyv:short'), undefined);
  assert.equal(cache.has('short:k'), false);
  assert.equal(await keyv.get('long'), 'v');
});

test("no ttl (undefined or 0) means the cache's default ttl", async () => {
  const expiring = newCache({ ttl: 60 });
  const { keyv } = keyvOver(expiring);
  await keyv.set('none', 'v');
  await keyv.set('zero', 'v', 0);
  // Keyv turns 0 into undefined; other callers may pass 0 to the adapter.
  const store = new KeyvArenaCache(expiring);
  await store.set('direct-zero', 'v', 0);
  await store.setMany([{ key: 'many-zero', value: 'v', ttl: 0 }]);
  const forever = newCache();
  const other = keyvOver(forever).keyv;
  await other.set('none', 'v');
  await other.set('zero', 'v', 0);
  assert.equal(await keyv.get('none'), 'v');
  await sleep(150);
  assert.equal(expiring.has('keyv:none'), false);
  assert.equal(expiring.has('keyv:zero'), false);
  assert.equal(await store.has('direct-zero'), false);
  assert.equal(await store.has('many-zero'), false);
  assert.equal(await keyv.get('zero'), undefined);
  assert.equal(await other.get('none'), 'v');
  assert.equal(await other.get('zero'), 'v');
});

test('namespaces over one cache do not see or clear each other', async () => {
  const cache = newCache();
  const a = keyvOver(cache, { namespace: 'a' }).keyv;
  const b = keyvOver(cache, { namespace: 'b' }).keyv;
  // "ab" starts with "a" but is another namespace: clear() matches "a:".
  const ab = keyvOver(cache, { namespace: 'ab' }).keyv;
  await a.set('k', 'from a');
  await a.set('only-a', 1);
  await b.set('k', 'from b');
  await ab.set('k', 'from ab');
  cache.set('foreign', 'not Keyv');
  cache.set(Buffer.from('a:bytes'), 'byte key');
  assert.equal(await a.get('k'), 'from a');
  assert.equal(await b.get('k'), 'from b');
  assert.equal(await b.has('only-a'), false);
  assert.equal(await b.delete('only-a'), false);
  assert.equal(await a.get('only-a'), 1);

  await a.clear();
  assert.equal(await a.get('k'), undefined);
  assert.equal(await a.get('only-a'), undefined);
  assert.equal(await b.get('k'), 'from b');
  assert.equal(await ab.get('k'), 'from ab');
  assert.equal(cache.get('foreign'), 'not Keyv');
  assert.equal(cache.get(Buffer.from('a:bytes')), 'byte key');

  // Without a namespace Keyv adds no prefix and clear() empties the cache.
  const bare = keyvOver(cache, { namespace: undefined }).keyv;
  await bare.set('plain', 1);
  assert.equal(cache.get('plain'), '{"value":1}');
  await bare.clear();
  assert.equal(cache.size, 0);
});

test('Keyv routes getMany, setMany, deleteMany and hasMany to the adapter', async () => {
  const calls = [];
  class Counting extends KeyvArenaCache {}
  for (const name of ['getMany', 'setMany', 'deleteMany', 'hasMany']) {
    Counting.prototype[name] = function (...args) {
      calls.push(name);
      return KeyvArenaCache.prototype[name].apply(this, args);
    };
  }
  const cache = newCache();
  const keyv = new Keyv({ store: new Counting(cache), namespace: 'm' });
  assert.deepEqual(await keyv.setMany([{ key: 'a', value: 1 }, { key: 'b', value: 'two' }, { key: 'c', value: [3], ttl: 50 }]), [true, true, true]);
  assert.deepEqual(await keyv.getMany(['a', 'b', 'c', 'absent']), [1, 'two', [3], undefined]);
  assert.deepEqual(await keyv.get(['b', 'a']), ['two', 1]);
  assert.deepEqual(await keyv.hasMany(['a', 'absent', 'c']), [true, false, true]);
  assert.equal(cache.has('m:c'), true);
  await sleep(120);
  assert.equal(cache.has('m:c'), false, 'the ttl of a setMany entry reaches the cache');
  assert.deepEqual(await keyv.has(['a', 'c']), [true, false]);
  // true only when every key had an entry, as Keyv's own fallback answers.
  assert.equal(await keyv.deleteMany(['a', 'absent']), false);
  assert.equal(await keyv.delete(['b']), true);
  assert.deepEqual([...cache.keys()], []);
  assert.deepEqual(calls, ['setMany', 'getMany', 'getMany', 'hasMany', 'hasMany', 'deleteMany', 'deleteMany']);
});

test('values round-trip as Keyv promises: JSON types and Buffer', async () => {
  const cache = newCache();
  const { keyv } = keyvOver(cache);
  const values = {
    object: { nested: { list: [1, 'two', { three: 3 }] }, flag: true },
    string: 'héllo',
    colon: ':looks like an escape',
    number: 42.5,
    zero: 0,
    boolean: false,
    null: null,
    array: [1, [2], {}],
    buffer: Buffer.from([0, 1, 254, 255]),
  };
  for (const [key, value] of Object.entries(values)) await keyv.set(key, value);
  for (const [key, value] of Object.entries(values)) assert.deepEqual(await keyv.get(key), value, key);
  assert.ok(Buffer.isBuffer(await keyv.get('buffer')));
  // Serialized by Keyv: a string, so any thread with any codec reads it.
  assert.equal(typeof cache.get('keyv:object'), 'string');
});

test("without Keyv's serializer the cache's codec stores { value, expires } with structured clone", async () => {
  const cache = newCache();
  const { keyv } = keyvOver(cache, { serialize: undefined, deserialize: undefined });
  const value = { date: new Date(0), map: new Map([[1, 'one']]), set: new Set(['x']), big: 2n ** 70n, bytes: new Uint8Array([9, 8]) };
  await keyv.set('k', value, 60_000);
  assert.deepEqual(await keyv.get('k'), value);
  const stored = cache.get('keyv:k');
  assert.deepEqual(stored.value, value);
  assert.equal(typeof stored.expires, 'number');
  await keyv.setMany([{ key: 'm', value: new Map([[2, 'two']]) }]);
  assert.deepEqual(await keyv.getMany(['m']), [new Map([[2, 'two']])]);
});

test('two Keyv instances over one cache, or over an attached cache, see each other', async () => {
  const cache = newCache();
  const first = keyvOver(cache, { namespace: 'shared' }).keyv;
  const second = keyvOver(cache, { namespace: 'shared' }).keyv;
  const attached = keyvOver(SharedCache.attach(cache.handle), { namespace: 'shared' }).keyv;
  await first.set('k', { by: 'first' });
  assert.deepEqual(await second.get('k'), { by: 'first' });
  assert.deepEqual(await attached.get('k'), { by: 'first' });
  await attached.set('k', 'replaced');
  assert.equal(await first.get('k'), 'replaced');
  await second.delete('k');
  assert.equal(await first.has('k'), false);
});

test('a worker that attaches to the cache and wraps it in its own Keyv sees the main thread', async () => {
  const cache = newCache();
  const keyv = keyvOver(cache, { namespace: 'jobs' }).keyv;
  await keyv.set('object', { from: 'main', list: [1, 2] });
  await keyv.set('buffer', Buffer.from('bytes'));
  // Inline, so the test needs no helper file; modules come in by URL.
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const { Keyv } = await import(workerData.keyvUrl);
      const { SharedCache } = await import(workerData.indexUrl);
      const { KeyvArenaCache } = await import(workerData.adapterUrl);
      const keyv = new Keyv({ store: new KeyvArenaCache(SharedCache.attach(workerData.handle)), namespace: 'jobs' });
      const seen = await keyv.getMany(['object', 'buffer', 'absent']);
      await keyv.set('from-worker', { n: 7 });
      parentPort.postMessage({ seen, isBuffer: Buffer.isBuffer(seen[1]) });
    })().catch((error) => parentPort.postMessage({ error: String(error?.stack ?? error) }));
  `;
  const worker = new Worker(code, {
    eval: true,
    workerData: {
      handle: cache.handle,
      keyvUrl: import.meta.resolve('keyv'),
      indexUrl: new URL('../lib/index.js', import.meta.url).href,
      adapterUrl: new URL('../lib/keyv/index.js', import.meta.url).href,
    },
  });
  const [report] = await once(worker, 'message');
  await worker.terminate();
  assert.equal(report.error, undefined);
  assert.deepEqual(report.seen[0], { from: 'main', list: [1, 2] });
  assert.deepEqual(Buffer.from(report.seen[1]), Buffer.from('bytes'));
  assert.equal(report.isBuffer, true);
  assert.equal(report.seen[2], undefined);
  assert.deepEqual(await keyv.get('from-worker'), { n: 7 });
});

test("createKeyv wires keyv.iterator() to the adapter's namespace-scoped iterator", async () => {
  const cache = newCache();
  const keyv = createKeyv(cache, { namespace: 'it' });
  assert.ok(keyv.store instanceof KeyvArenaCache);
  assert.equal(keyv.store.cache, cache);
  const other = createKeyv(cache, { namespace: 'other' });
  await keyv.set('a', 1);
  await keyv.set('b:c', { d: 2 });
  await other.set('x', 'not mine');
  const seen = [];
  for await (const entry of keyv.iterator()) seen.push(entry);
  seen.sort(([a], [b]) => a.localeCompare(b));
  assert.deepEqual(seen, [['a', 1], ['b:c', { d: 2 }]]);

  // A plain `new Keyv({ store })` gets no iterator from Keyv for this store.
  assert.equal(keyvOver(cache).keyv.iterator, undefined);

  // The adapter's iterator yields prefixed keys and stored values.
  const raw = [];
  for await (const entry of keyv.store.iterator('other')) raw.push(entry);
  assert.deepEqual(raw, [['other:x', '{"value":"not mine"}']]);
});

test("disconnect() closes only a cache the adapter created", async () => {
  const given = newCache();
  const keyv = createKeyv(given);
  await keyv.disconnect();
  assert.equal(given.closed, false);
  assert.equal(given.get('anything'), undefined);

  const owning = createKeyv({ memoryBytes: MiB, ttl: 1000 });
  const { cache } = owning.store;
  assert.ok(cache instanceof SharedCache);
  assert.equal(cache.stats().memoryBytes, MiB);
  await owning.set('k', 'v');
  assert.equal(cache.get('keyv:k'), '{"value":"v"}');
  await owning.disconnect();
  assert.equal(cache.closed, true);
});

test('constructor and createKeyv arguments are checked', () => {
  const expected = (got) => `cache must be a SharedCache or the options of a new one, such as { memoryBytes: 64 * 2 ** 20 } (got ${got})`;
  for (const [value, got] of [[undefined, 'undefined'], [null, 'null'], [42, '42'], ['cache', '"cache"'], [new Map(), 'an instance of Map'], [[], 'an array of length 0']]) {
    assert.throws(() => new KeyvArenaCache(value), { name: 'TypeError', message: expected(got) });
  }
  assert.throws(() => new KeyvArenaCache(new Keyv()), { name: 'TypeError', message: expected('an instance of Keyv') });
  // Options are SharedCache's, checked by it (memoryBytes has a default).
  const defaulted = new KeyvArenaCache({});
  assert.equal(defaulted.cache.stats().memoryBytes, 64 * MiB);
  defaulted.cache.close();
  assert.throws(() => new KeyvArenaCache({ memoryBytes: MiB, namespace: 'x' }), {
    name: 'TypeError',
    message: 'options.namespace is not a known option; valid options are memoryBytes, max, policy, ttl, staleWhileRevalidate, ttlResolution, sweepIntervalMs, sweepChecks, fetchTimeoutMs, maxKeyBytes, shards, lockLeaseMs, lockWaitMs, codec, nearCache, nearCacheBytes',
  });
  const cache = newCache();
  const done = newCache();
  done.close();
  assert.throws(() => new KeyvArenaCache(done), (error) => {
    assert.ok(error instanceof ArenaCacheError);
    assert.equal(error.code, 'ERR_CACHE_CLOSED');
    assert.equal(error.message, 'cache is closed: pass a SharedCache that close() was not called on');
    return true;
  });

  const store = new KeyvArenaCache(cache);
  for (const [value, got] of [[5, '5'], [null, 'null'], [{}, 'an instance of Object']]) {
    assert.throws(() => { store.namespace = value; }, { name: 'TypeError', message: `namespace must be a string or undefined (got ${got})` });
  }
  assert.throws(() => new Keyv({ store: new KeyvArenaCache(cache), namespace: 5 }), {
    name: 'TypeError',
    message: 'namespace must be a string or undefined (got 5)',
  });

  assert.throws(() => createKeyv(cache, 'ns'), { name: 'TypeError', message: 'keyvOptions must be an object (got "ns")' });
  assert.throws(() => createKeyv(cache, { store: new Map() }), {
    name: 'TypeError',
    message: 'keyvOptions.store must not be given: createKeyv() makes the store from its first argument',
  });
  assert.throws(() => createKeyv(7), { name: 'TypeError', message: expected('7') });
});

test('a bad ttl is rejected by the adapter and emitted by Keyv', async () => {
  const cache = newCache();
  const store = new KeyvArenaCache(cache);
  const range = (got) => ({
    name: 'RangeError',
    message: `ttl must be a number of milliseconds above 0 and at most 8998403161718784 (2^53 - 2^43, about 285,000 years), or 0 or undefined for the cache's default (got ${got})`,
  });
  await assert.rejects(store.set('k', 'v', -1), range('-1'));
  await assert.rejects(store.set('k', 'v', NaN), range('NaN'));
  await assert.rejects(store.set('k', 'v', Infinity), range('Infinity'));
  await assert.rejects(store.set('k', 'v', '100'), { name: 'TypeError', message: 'ttl must be a number of milliseconds or undefined (got "100")' });
  // A bad ttl anywhere in setMany stores nothing.
  await assert.rejects(store.setMany([{ key: 'a', value: 'v' }, { key: 'b', value: 'v', ttl: -5 }]), range('-5'));
  assert.equal(cache.size, 0);

  const { keyv, errors } = keyvOver(cache);
  assert.equal(await keyv.set('k', 'v', -1), false);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].message, range('-1').message);
});

test('a value too large is emitted once by Keyv, set() resolves false, throwOnErrors rejects', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const { keyv, errors } = keyvOver(cache);
  const big = 'x'.repeat(MiB);
  assert.equal(await keyv.set('big', big), false);
  assert.equal(errors.length, 1);
  assert.equal(errors[0].name, tooLarge.name);
  assert.match(errors[0].message, tooLarge.message);
  assert.equal(await keyv.get('big'), undefined);

  // setMany stops at the failing entry: those before it are stored, and Keyv reports false for all.
  assert.deepEqual(await keyv.setMany([{ key: 'small', value: 1 }, { key: 'big', value: big }, { key: 'after', value: 2 }]), [false, false, false]);
  assert.equal(errors.length, 2);
  assert.match(errors[1].message, tooLarge.message);
  assert.equal(await keyv.get('small'), 1);
  assert.equal(await keyv.get('after'), undefined);

  const strict = keyvOver(cache, { throwOnErrors: true });
  await assert.rejects(strict.keyv.set('big', big), tooLarge);
  assert.equal(strict.errors.length, 1);
});

test('a closed cache: every failure reaches keyv.on("error") once; get is a miss, has/getMany reject', async () => {
  const cache = newCache();
  const { keyv, errors } = keyvOver(cache);
  await keyv.set('k', 'v');
  cache.close();
  const isClosed = (error) => error instanceof ArenaCacheError && error.code === closed.code && error.message === closed.message;

  // Reads: Keyv does not emit for them, so the adapter does.
  assert.equal(await keyv.get('k'), undefined);
  assert.equal(errors.length, 1);
  await assert.rejects(keyv.has('k'), closed);
  await assert.rejects(keyv.getMany(['k']), closed);
  await assert.rejects(keyv.hasMany(['k']), closed);
  assert.equal(errors.length, 4);
  // Writes: the adapter rejects and Keyv emits.
  assert.equal(await keyv.set('k', 'v'), false);
  assert.equal(await keyv.delete('k'), false);
  assert.equal(await keyv.deleteMany(['k']), false);
  assert.deepEqual(await keyv.setMany([{ key: 'k', value: 1 }]), [false]);
  await keyv.clear();
  assert.equal(errors.length, 9);
  assert.ok(errors.every(isClosed));

  const strict = keyvOver(SharedCache.attach(newCache().handle), { throwOnErrors: true });
  strict.keyv.store.cache.close();
  await assert.rejects(strict.keyv.get('k'), closed);
  await assert.rejects(strict.keyv.set('k', 'v'), closed);
  await assert.rejects(strict.keyv.clear(), closed);
  assert.equal(strict.errors.length, 3);
  assert.ok(strict.errors.every(isClosed));

  // Keyv with emitErrors: false hears nothing, as with any store.
  const quiet = new Keyv({ store: new KeyvArenaCache(newCache()), emitErrors: false });
  quiet.store.cache.close();
  assert.equal(await quiet.get('k'), undefined);
});

test('without Keyv (no error listener) a failing call only rejects', async () => {
  const cache = newCache();
  const store = new KeyvArenaCache(cache);
  cache.close();
  await assert.rejects(store.get('k'), closed);
  await assert.rejects(store.set('k', 'v'), closed);
  await assert.rejects(store.clear(), closed);
  await assert.rejects(store.iterator().next(), closed);
});

test('without keyv installed, arenacache/keyv loads, the adapter works and createKeyv() says how to get keyv', () => {
  const result = runWithout(
    'keyv',
    `const { createKeyv, KeyvArenaCache } = await import(libUrl + 'keyv/index.js');
     const store = new KeyvArenaCache({ memoryBytes: 2 ** 20 });
     await store.set('k', 'v');
     const stored = await store.get('k');
     try { createKeyv({ memoryBytes: 2 ** 20 }); console.log(JSON.stringify({ stored, created: true })); }
     catch (error) { console.log(JSON.stringify({ stored, name: error.name, code: error.code, message: error.message })); }`,
  );
  assert.deepEqual(result, {
    stored: 'v',
    name: 'ArenaCacheError',
    code: 'ERR_KEYV_MISSING',
    message: 'createKeyv() needs the keyv package, which could not be loaded; install it with "npm install keyv"',
  });
});

test("createKeyv() makes an instance of the Keyv class the user's own import gives, in ESM and in CommonJS", async () => {
  const cache = newCache();
  const keyv = createKeyv(cache);
  assert.ok(keyv instanceof Keyv, 'createKeyv() gave an instance of another copy of Keyv than import { Keyv } from "keyv"');
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  const fromRequire = require('arenacache/keyv').createKeyv(cache);
  assert.ok(fromRequire instanceof Keyv);
  cache.close();
});

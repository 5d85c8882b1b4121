// cache-manager 7 over the Keyv adapter: get/set/del/clear, ttl, mget/mset/
// mdel, wrap, namespaces sharing one SharedCache, errors with and without
// throwOnErrors, and disconnect() closing only caches the adapters created.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { createCache } from 'cache-manager';
import { Keyv } from 'keyv';
import { SharedCache } from '../lib/index.js';
import { createKeyv, KeyvArenaCache } from 'arenacache/keyv';
import { MiB } from './helpers/units.js';

function setup(keyvOptions, cacheManagerOptions) {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const keyv = new Keyv({ store: new KeyvArenaCache(cache), ...keyvOptions });
  const errors = [];
  keyv.on('error', (error) => errors.push(error));
  return { cache, keyv, errors, manager: createCache({ stores: [keyv], ...cacheManagerOptions }) };
}

test('cache-manager get, set, del and clear go through the adapter into the cache', async () => {
  const { cache, manager } = setup();
  assert.equal(await manager.get('k'), undefined);
  assert.deepEqual(await manager.set('k', { n: 1 }), { n: 1 });
  assert.deepEqual(await manager.get('k'), { n: 1 });
  assert.equal(cache.get('keyv:k'), '{"value":{"n":1}}');
  assert.equal(await manager.del('k'), true);
  assert.equal(await manager.get('k'), undefined);
  assert.equal(cache.has('keyv:k'), false);
  await manager.set('a', 1);
  await manager.set('b', Buffer.from('two'));
  assert.deepEqual(await manager.get('b'), Buffer.from('two'));
  assert.equal(await manager.clear(), true);
  assert.deepEqual([...cache.keys()], []);
});

test('cache-manager ttl: per call and default, in the cache, and ttl(key)', async () => {
  const { cache, manager } = setup(undefined, { ttl: 60 });
  const before = Date.now();
  await manager.set('default', 'v');
  await manager.set('long', 'v', 60_000);
  const expires = await manager.ttl('long');
  assert.ok(expires >= before + 60_000 && expires <= Date.now() + 60_000, `ttl() is the expiry time (got ${expires})`);
  assert.equal(await manager.ttl('absent'), undefined);
  assert.equal(cache.has('keyv:default'), true);
  await sleep(150);
  assert.equal(await manager.get('default'), undefined);
  assert.equal(cache.has('keyv:default'), false, 'the default ttl reaches the cache');
  assert.equal(await manager.get('long'), 'v');
});

test('cache-manager mget, mset and mdel', async () => {
  const { cache, manager } = setup();
  const list = [{ key: 'a', value: 1 }, { key: 'b', value: 'two', ttl: 50 }, { key: 'c', value: [3] }];
  // cache-manager answers the list with each ttl resolved (undefined: none).
  assert.deepEqual(await manager.mset(list), list.map(({ key, value, ttl }) => ({ key, value, ttl })));
  assert.deepEqual(await manager.mget(['a', 'b', 'c', 'absent']), [1, 'two', [3], undefined]);
  await sleep(120);
  assert.equal(cache.has('keyv:b'), false);
  assert.deepEqual(await manager.mget(['a', 'b']), [1, undefined]);
  assert.equal(await manager.mdel(['a', 'c']), true);
  assert.deepEqual(await manager.mget(['a', 'c']), [undefined, undefined]);
});

test('cache-manager wrap loads once, serves from the cache, and reloads after the ttl', async () => {
  const { cache, manager } = setup();
  let loads = 0;
  const load = async () => ({ load: ++loads });
  const [first, concurrent] = await Promise.all([manager.wrap('w', load, 60), manager.wrap('w', load, 60)]);
  assert.deepEqual(first, { load: 1 });
  assert.deepEqual(concurrent, { load: 1 });
  assert.deepEqual(await manager.wrap('w', load, 60), { load: 1 });
  assert.equal(loads, 1);
  const stored = JSON.parse(cache.get('keyv:w'));
  assert.deepEqual(stored.value, { load: 1 });
  assert.equal(typeof stored.expires, 'number');
  await sleep(150);
  assert.deepEqual(await manager.wrap('w', load, 60), { load: 2 });
  assert.equal(loads, 2);
});

test('cache-manager caches in different namespaces share one SharedCache without clearing each other', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const users = createCache({ stores: [createKeyv(cache, { namespace: 'users' })] });
  const pages = createCache({ stores: [createKeyv(cache, { namespace: 'pages' })] });
  await users.set('1', 'ada');
  await pages.set('1', '<html>');
  assert.equal(await users.get('1'), 'ada');
  assert.equal(await pages.get('1'), '<html>');
  await users.clear();
  assert.equal(await users.get('1'), undefined);
  assert.equal(await pages.get('1'), '<html>');
  // Another cache-manager over an attached cache sees the same entries.
  const attached = createCache({ stores: [createKeyv(SharedCache.attach(cache.handle), { namespace: 'pages' })] });
  assert.equal(await attached.get('1'), '<html>');
});

test('cache-manager errors: Keyv emits them; with throwOnErrors cache-manager rejects and reports them', async () => {
  const tooLarge = { name: 'RangeError', message: /^value is \d+ bytes; the largest value this cache can hold under this key is \d+ bytes/ };
  const big = 'x'.repeat(5 * MiB);

  // Keyv's default: the failure is Keyv's 'error' event; cache-manager sees a success.
  const lenient = setup();
  assert.equal(await lenient.manager.set('big', big), big);
  assert.equal(lenient.errors.length, 1);
  assert.equal(lenient.errors[0].name, tooLarge.name);
  assert.match(lenient.errors[0].message, tooLarge.message);
  assert.equal(await lenient.manager.get('big'), undefined);

  const strict = setup({ throwOnErrors: true });
  const events = [];
  strict.manager.on('set', (event) => events.push(event));
  await assert.rejects(strict.manager.set('big', big), tooLarge);
  assert.equal(strict.errors.length, 1);
  assert.equal(events.length, 1);
  assert.match(events[0].error.message, tooLarge.message);

  // A closed cache: get is reported by cache-manager's 'get' event and is a miss.
  strict.cache.close();
  const gets = [];
  strict.manager.on('get', (event) => gets.push(event));
  assert.equal(await strict.manager.get('k'), undefined);
  assert.equal(gets.length, 1);
  assert.equal(gets[0].error.code, 'ERR_CACHE_CLOSED');
  assert.equal(gets[0].error.message, 'the cache is closed: close() was called on this instance');
  assert.equal(strict.errors.length, 2);
});

test('cache-manager disconnect() closes only caches the adapters created', async () => {
  const given = new SharedCache({ memoryBytes: MiB });
  const owned = createKeyv({ memoryBytes: MiB });
  const manager = createCache({ stores: [createKeyv(given), owned] });
  await manager.set('k', 'v');
  assert.equal(await manager.get('k'), 'v');
  await manager.disconnect();
  assert.equal(given.closed, false);
  assert.equal(owned.store.cache.closed, true);
});

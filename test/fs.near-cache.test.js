// CacheFS's near cache (options.nearCacheBytes): repeated reads of a hot
// file are served from a private copy, which never answers differently from
// the shared cache: a write, an invalidation or an eviction by any thread
// ends it, and so does validateMs.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { untilCacheable } from './helpers/racy.js';
import { checkValue, valueOrigin } from './helpers/checked-value.js';
import { MiB } from './helpers/units.js';

const newCache = (options) => new SharedCache({ memoryBytes: 4 * MiB, ...options });

test('repeated reads of a hot file are near hits, each a private copy', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'f'), 'hot contents');
  await untilCacheable(root);
  const cfs = new CacheFS({ root, cache: newCache(), validateMs: 60_000 });
  t.after(() => cfs.close());
  assert.equal(await cfs.readFile('f', 'utf8'), 'hot contents'); // from disk
  assert.equal(await cfs.readFile('f', 'utf8'), 'hot contents'); // shared cache, copied near
  const first = await cfs.readFile('f');
  first.fill(0x21);
  assert.equal(cfs.readFileSync('f', 'utf8'), 'hot contents');
  const { reads, readHits, nearHits, readMisses } = cfs.stats();
  assert.deepEqual({ reads, readHits, nearHits, readMisses }, { reads: 4, readHits: 3, nearHits: 2, readMisses: 1 });
});

test('a write by another instance of the same cache ends the copy at once', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'f'), 'one');
  await untilCacheable(root);
  const cache = newCache();
  const reader = new CacheFS({ root, cache, validateMs: 60_000 });
  const writer = new CacheFS({ root, cache, validateMs: 60_000 });
  t.after(() => Promise.all([reader.close(), writer.close()]));
  for (let i = 0; i < 3; i++) await reader.readFile('f');
  await writer.writeFile('f', 'two');
  assert.equal(await reader.readFile('f', 'utf8'), 'two');
  await writer.unlink('f');
  await assert.rejects(reader.readFile('f'), { code: 'ENOENT' });
});

test('invalidate() by another instance, and eviction, end the copy', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'f'), 'one');
  await untilCacheable(root);
  const cache = newCache();
  const reader = new CacheFS({ root, cache, validateMs: 60_000 });
  const other = new CacheFS({ root, cache, validateMs: 60_000 });
  t.after(() => Promise.all([reader.close(), other.close()]));
  for (let i = 0; i < 3; i++) await reader.readFile('f');
  // Changed behind the cache's back: only an invalidation tells it.
  writeFileSync(path.join(root, 'f'), 'two');
  assert.equal(await reader.readFile('f', 'utf8'), 'one');
  await other.invalidate(['f']);
  assert.equal(await reader.readFile('f', 'utf8'), 'two');
  await reader.readFile('f');
  writeFileSync(path.join(root, 'f'), 'six');
  cache.clear();
  assert.equal(await reader.readFile('f', 'utf8'), 'six');
  await reader.readFile('f');
  writeFileSync(path.join(root, 'f'), 'ten');
  await other.invalidate({ prefix: '' });
  assert.equal(await reader.readFile('f', 'utf8'), 'ten');
});

test('a copy ends when its record needs validating (validateMs)', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'f'), 'old');
  await untilCacheable(root);
  const cfs = new CacheFS({ root, cache: newCache(), validateMs: 100 });
  t.after(() => cfs.close());
  for (let i = 0; i < 3; i++) await cfs.readFile('f');
  assert.ok(cfs.stats().nearHits >= 1);
  writeFileSync(path.join(root, 'f'), 'new');
  await sleep(150);
  assert.equal(await cfs.readFile('f', 'utf8'), 'new');
});

test('no near hits with nearCacheBytes 0, or for files above 1/16 of it', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'small'), 'x'.repeat(100));
  writeFileSync(path.join(root, 'large'), 'y'.repeat(5000));
  await untilCacheable(root);
  const off = new CacheFS({ root, cache: newCache(), nearCacheBytes: 0 });
  const small = new CacheFS({ root, cache: newCache(), nearCacheBytes: 64 * 1024 });
  t.after(() => Promise.all([off.close(), small.close()]));
  for (let i = 0; i < 4; i++) {
    await off.readFile('small');
    await small.readFile('large');
  }
  for (const cfs of [off, small]) {
    assert.equal(cfs.stats().nearHits, 0);
    assert.equal(cfs.stats().readHits, 3);
  }
  await small.readFile('small');
  await small.readFile('small');
  await small.readFile('small');
  assert.equal(small.stats().nearHits, 1);
});

test('with a default ttl, copies are near hits until the entry expires, never after', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'f'), 'first');
  await untilCacheable(root);
  const cfs = new CacheFS({ root, cache: newCache({ ttl: 300, ttlResolution: 0 }), validateMs: 60_000 });
  t.after(() => cfs.close());
  for (let i = 0; i < 4; i++) assert.equal(await cfs.readFile('f', 'utf8'), 'first');
  assert.equal(cfs.stats().nearHits, 2);
  // Changed behind the cache's back: only the expiry of the cached entry shows it.
  writeFileSync(path.join(root, 'f'), 'second');
  await sleep(350);
  assert.equal(await cfs.readFile('f', 'utf8'), 'second');
  assert.equal(cfs.stats().nearHits, 2);
});

test('writes to other files, in the same shard, leave a copy in place', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'hot'), 'hot contents');
  await untilCacheable(root);
  // One shard: every other write lands in the hot file's shard.
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB, shards: 1 }), validateMs: 60_000 });
  t.after(() => cfs.close());
  for (let i = 0; i < 2; i++) await cfs.readFile('hot');
  for (let i = 0; i < 20; i++) {
    await cfs.writeFile(`other${i}`, `other ${i}`);
    assert.equal(await cfs.readFile('hot', 'utf8'), 'hot contents');
  }
  assert.equal(cfs.stats().nearHits, 20);
});

test('the budget keeps the newest copies', async (t) => {
  const root = tempDir(t);
  const text = (i) => String(i % 10).repeat(1024);
  for (let i = 0; i < 24; i++) writeFileSync(path.join(root, `f${i}`), text(i));
  await untilCacheable(root);
  // 16 KiB hold 16 files of 1 KiB (the largest file kept: 1/16 of the budget).
  const cfs = new CacheFS({ root, cache: newCache(), nearCacheBytes: 16 * 1024, validateMs: 60_000 });
  t.after(() => cfs.close());
  const readAll = async (from, to) => {
    for (let i = from; i < to; i++) assert.equal(await cfs.readFile(`f${i}`, 'utf8'), text(i));
  };
  await readAll(0, 24); // from disk
  await readAll(0, 24); // from the shared cache, each copied near: f8..f23 stay
  await readAll(8, 24);
  assert.equal(cfs.stats().nearHits, 16);
  await readAll(0, 8);
  assert.equal(cfs.stats().nearHits, 16);
});

test('nearCacheBytes must be an integer from 0 to 1073741824', (t) => {
  const root = tempDir(t);
  const cache = newCache();
  assert.throws(() => new CacheFS({ root, cache, nearCacheBytes: -1 }), {
    name: 'RangeError',
    message: 'options.nearCacheBytes must be an integer from 0 (off) to 1073741824 (got -1)',
  });
  assert.throws(() => new CacheFS({ root, cache, nearCacheBytes: '1MB' }), {
    name: 'TypeError',
    message: 'options.nearCacheBytes must be a number (got "1MB")',
  });
});

test('a reader never sees an older version than a writer thread has finished writing', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'f'), '');
  const cache = newCache();
  const acknowledged = new Int32Array(new SharedArrayBuffer(4));
  const cfs = new CacheFS({ root, cache, validateMs: 60_000 });
  t.after(() => cfs.close());
  const worker = new Worker(new URL('./fixtures/near-writer.js', import.meta.url), {
    workerData: { cacheHandle: cache.handle, root, path: 'f', acknowledged, length: 200 },
  });
  const counts = { reads: 0, ok: 0, stale: 0, torn: 0, foreign: 0 };
  const until = Date.now() + (process.env.STRESS ? 10_000 : 1500);
  while (Date.now() < until) {
    const floor = Atomics.load(acknowledged, 0);
    const value = await cfs.readFile('f');
    counts.reads++;
    if (value.length === 0) continue;
    const verdict = checkValue('f', value);
    if (verdict !== 'ok') counts[verdict]++;
    else if (valueOrigin(value).sequence < floor) counts.stale++;
    else counts.ok++;
  }
  worker.postMessage('stop');
  const [writes] = await once(worker, 'message');
  await worker.terminate();
  assert.deepEqual({ stale: counts.stale, torn: counts.torn, foreign: counts.foreign }, { stale: 0, torn: 0, foreign: 0 });
  assert.ok(writes > 10 && counts.ok > 100, `writes ${writes}, reads ${JSON.stringify(counts)}`);
  assert.ok(cfs.stats().nearHits > 0, `near hits: ${JSON.stringify(cfs.stats())}`);
});

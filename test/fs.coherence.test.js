// CacheFS and the disk: changes made behind the cache's back are seen once
// validateMs has passed (at once with 0); large files are cached in blocks
// and survive eviction by being read again; another thread attached to the
// same cache reads what this one cached.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { appendFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { untilCacheable } from './helpers/racy.js';
import { MiB } from './helpers/units.js';

test('with validateMs 0 every read sees changes made by another program', async (t) => {
  const root = tempDir(t);
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB }), validateMs: 0 });
  writeFileSync(path.join(root, 'f'), 'version one');
  await untilCacheable(root);
  assert.equal(await cfs.readFile('f', 'utf8'), 'version one');
  assert.equal(await cfs.readFile('f', 'utf8'), 'version one');
  assert.equal(cfs.stats().readHits, 1);
  appendFileSync(path.join(root, 'f'), ' and more');
  assert.equal(await cfs.readFile('f', 'utf8'), 'version one and more');
  // Replaced by another file (a new inode) of the same size.
  writeFileSync(path.join(root, 'g'), 'VERSION ONE AND MORE');
  renameSync(path.join(root, 'g'), path.join(root, 'f'));
  assert.equal(cfs.readFileSync('f', 'utf8'), 'VERSION ONE AND MORE');
  unlinkSync(path.join(root, 'f'));
  await assert.rejects(cfs.readFile('f'), { code: 'ENOENT' });
  assert.ok(cfs.stats().staleFiles >= 2);
});

test('within validateMs cached data is served without touching the disk; after it, changes are seen', async (t) => {
  const root = tempDir(t);
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB }), validateMs: 150 });
  writeFileSync(path.join(root, 'f'), 'old contents');
  await untilCacheable(root);
  assert.equal(await cfs.readFile('f', 'utf8'), 'old contents');
  writeFileSync(path.join(root, 'f'), 'new contents, longer');
  assert.equal(await cfs.readFile('f', 'utf8'), 'old contents', 'the documented trade-off: trusted for validateMs');
  await sleep(200);
  assert.equal(await cfs.readFile('f', 'utf8'), 'new contents, longer');
  assert.equal(cfs.stats().validations, 1);
});

test('a large file is cached in blocks; an evicted block makes the next read go to disk, never wrong', async (t) => {
  const root = tempDir(t);
  const big = Buffer.alloc(3 * MiB + 12345);
  for (let i = 0; i < big.length; i++) big[i] = (i * 7 + (i >>> 12)) & 0xff;
  writeFileSync(path.join(root, 'big.bin'), big);
  await untilCacheable(root);
  const cache = new SharedCache({ memoryBytes: 16 * MiB });
  const cfs = new CacheFS({ root, cache, blockBytes: 64 * 1024 });
  assert.ok((await cfs.readFile('big.bin')).equals(big));
  assert.ok((await cfs.readFile('big.bin')).equals(big));
  assert.equal(cfs.stats().readHits, 1);
  assert.ok(cache.size > 49, `stored in ${cache.size} entries`);
  // Push most of it out with other entries.
  for (let i = 0; i < 300; i++) cache.set(`filler:${i}`, Buffer.alloc(60 * 1024));
  assert.ok((await cfs.readFile('big.bin')).equals(big));
  const limited = new CacheFS({ root, cache, maxFileBytes: MiB });
  assert.ok((await limited.readFile('big.bin')).equals(big), 'files above maxFileBytes are read from disk');
});

test('a worker thread with its own CacheFS on the same cache reads what this thread cached', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'shared.txt'), 'cached once, read everywhere');
  await untilCacheable(root);
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const cfs = new CacheFS({ root, cache });
  await cfs.readFile('shared.txt');
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     (async () => {
       const { SharedCache } = await import(${JSON.stringify(new URL('../lib/index.js', import.meta.url).href)});
       const { CacheFS } = await import(${JSON.stringify(new URL('../lib/fs/index.js', import.meta.url).href)});
       const cfs = new CacheFS({ root: workerData.root, cache: SharedCache.attach(workerData.handle) });
       const text = await cfs.readFile('shared.txt', 'utf8');
       await cfs.writeFile('from-worker.txt', 'written in the worker');
       parentPort.postMessage({ text, stats: cfs.stats() });
     })();`,
    { eval: true, workerData: { root, handle: cache.handle } },
  );
  const [{ text, stats }] = await once(worker, 'message');
  assert.equal(text, 'cached once, read everywhere');
  assert.equal(stats.readHits, 1, 'the worker\'s first read was a hit');
  assert.equal(await cfs.readFile('from-worker.txt', 'utf8'), 'written in the worker');
  assert.deepEqual([cfs.stats().readMisses, cfs.stats().readHits], [1, 1], 'this thread hits on what the worker wrote through');
});

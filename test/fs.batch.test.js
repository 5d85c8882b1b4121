// CacheFS batch operations: invalidate by paths, prefix or glob; batchStats.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { untilCacheable } from './helpers/racy.js';

async function setup(t) {
  const root = tempDir(t);
  mkdirSync(path.join(root, 'css/themes'), { recursive: true });
  for (const file of ['css/a.css', 'css/themes/dark.css', 'css/notes.txt', 'index.html']) writeFileSync(path.join(root, file), file);
  await untilCacheable(root);
  // A long validateMs: only invalidate() makes a change behind the cache's back visible.
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * 2 ** 20 }), validateMs: 600_000 });
  await (await cfs.warmDir('', { recursive: true })).finished;
  for (const file of ['css/a.css', 'css/themes/dark.css', 'css/notes.txt', 'index.html']) writeFileSync(path.join(root, file), `${file} changed`);
  return cfs;
}

test('invalidate(paths) drops just those files; the next read sees the disk', async (t) => {
  const cfs = await setup(t);
  assert.equal(cfs.invalidate(['index.html', 'not-cached.txt']), 1);
  assert.equal(await cfs.readFile('index.html', 'utf8'), 'index.html changed');
  assert.equal(await cfs.readFile('css/a.css', 'utf8'), 'css/a.css', 'the others are still served from the cache');
});

test('invalidate({ prefix }) and invalidate({ pattern }) drop every cached path they match', async (t) => {
  const cfs = await setup(t);
  assert.equal(cfs.invalidate({ pattern: '**/*.css' }), 2);
  assert.equal(await cfs.readFile('css/themes/dark.css', 'utf8'), 'css/themes/dark.css changed');
  assert.equal(await cfs.readFile('css/notes.txt', 'utf8'), 'css/notes.txt');
  // Cached under css/ now: the two directories, dark.css (read again above) and notes.txt.
  assert.equal(cfs.invalidate({ prefix: 'css' }), 4);
  assert.equal(await cfs.readFile('css/notes.txt', 'utf8'), 'css/notes.txt changed');
  assert.equal(await cfs.readFile('index.html', 'utf8'), 'index.html');
});

test('batchStats gives every path its stats or its error', async (t) => {
  const cfs = await setup(t);
  const results = await cfs.batchStats(['index.html', 'css', 'missing']);
  assert.equal(results[0].stats.isFile(), true);
  assert.equal(results[1].stats.isDirectory(), true);
  assert.equal(results[2].error.code, 'ENOENT');
});

test('batch operation argument errors', async (t) => {
  const cfs = await setup(t);
  assert.throws(() => cfs.invalidate('css'), { name: 'TypeError', message: 'target must be an array of paths, { prefix } or { pattern } (got "css")' });
  assert.throws(() => cfs.invalidate({}), { name: 'TypeError', message: 'target must have exactly one of prefix and pattern' });
  assert.throws(() => cfs.invalidate({ prefix: 'a', pattern: '*' }), { name: 'TypeError', message: 'target must have exactly one of prefix and pattern' });
  assert.throws(() => cfs.invalidate({ prefix: 3 }), { name: 'TypeError', message: 'target.prefix must be a string (got 3)' });
  assert.throws(() => cfs.invalidate({ prefix: '../x' }), { code: 'ERR_PATH_OUTSIDE_ROOT' });
  assert.throws(() => cfs.invalidate(['../x']), { code: 'ERR_PATH_OUTSIDE_ROOT' });
  await assert.rejects(cfs.batchStats('index.html'), { name: 'TypeError', message: 'paths must be an array of path strings (got "index.html")' });
});

test('registerMetrics exposes a CacheFS\'s counters in a prom-client registry beside its cache\'s', async (t) => {
  const { Registry } = await import('prom-client');
  const root = tempDir(t);
  writeFileSync(path.join(root, 'a.txt'), 'aaa');
  await untilCacheable(root);
  const cache = new SharedCache({ memoryBytes: 4 * 2 ** 20 });
  const cfs = new CacheFS({ root, cache });
  const registry = new Registry();
  cache.registerMetrics(registry, { name: 'assets' });
  const unregister = cfs.registerMetrics(registry, { name: 'assets' });
  await cfs.readFile('a.txt');
  await cfs.readFile('a.txt');
  await cfs.readFile('a.txt');
  await cfs.writeFile('b.txt', 'bb');
  const text = await registry.metrics();
  assert.match(text, /^arenacache_fs_reads_total\{fs="assets"\} 3$/m);
  assert.match(text, /^arenacache_fs_read_hits_total\{fs="assets"\} 2$/m);
  assert.match(text, /^arenacache_fs_near_hits_total\{fs="assets"\} 1$/m);
  assert.match(text, /^arenacache_fs_written_bytes_total\{fs="assets"\} 2$/m);
  assert.match(text, /^arenacache_hits_total\{cache="assets"\} \d+$/m);
  assert.throws(() => cfs.registerMetrics(registry, { name: 'assets' }), {
    code: 'ERR_METRICS_DUPLICATE',
    message: 'a CacheFS named "assets" is already registered in this registry; pass another options.name',
  });
  unregister();
  assert.doesNotMatch(await registry.metrics(), /fs="assets"/);
});

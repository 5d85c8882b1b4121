// The InodeFS inode cache: bounded, sized at will, and holding only
// committed data (a failed transaction leaves no trace in it).
import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { InodeFS } from '../lib/meta/index.js';
import { tempDir } from './helpers/fs-tree.js';

async function openFs(t, options) {
  const ifs = await InodeFS.open(path.join(tempDir(t), 'fs.lmdb'), options);
  t.after(() => ifs.close());
  return ifs;
}

test('cacheStats counts hits and misses; flushCache empties; setCacheSize(0) disables', async (t) => {
  const ifs = await openFs(t, { cacheSize: 100 });
  await ifs.writeFile('/f', 'x');
  ifs.flushCache();
  assert.equal(ifs.cacheStats().size, 0);
  await ifs.stat('/f'); // misses: root, dirent, inode
  await ifs.stat('/f'); // hits
  const stats = ifs.cacheStats();
  assert.equal(stats.maxSize, 100);
  assert.equal(stats.misses, 3);
  assert.equal(stats.hits, 3);
  assert.equal(stats.hitRate, 0.5);
  assert.ok(stats.size >= 3);
  ifs.setCacheSize(0);
  await ifs.stat('/f');
  assert.deepEqual({ ...ifs.cacheStats(), hits: 0, misses: 0, hitRate: 0 }, { size: 0, maxSize: 0, hits: 0, misses: 0, hitRate: 0 });
  ifs.setCacheSize(10);
  assert.equal(await ifs.readFile('/f', 'utf8'), 'x');
  assert.throws(() => ifs.setCacheSize(-1), { name: 'RangeError', message: 'size must be an integer from 0 (no cache) to 16777216 (got -1)' });
});

test('the cache stays bounded whatever the working set', async (t) => {
  const ifs = await openFs(t, { cacheSize: 200 });
  await ifs.mkdir('/d');
  for (let i = 0; i < 600; i++) await ifs.writeFile(`/d/f${i}`, `${i}`);
  for (let i = 0; i < 600; i++) assert.equal(await ifs.readFile(`/d/f${i}`, 'utf8'), `${i}`);
  assert.ok(ifs.cacheStats().size <= 200, JSON.stringify(ifs.cacheStats()));
});

test('a failed write leaves no trace in the cache or the store', async (t) => {
  const ifs = await openFs(t);
  await ifs.mkdir('/d');
  await ifs.writeFile('/d/f', 'committed');
  await ifs.stat('/d/f');
  // rename onto a non-empty directory fails inside its transaction, after the
  // source entry was already removed in it: all of it must roll back.
  await ifs.mkdir('/e');
  await ifs.writeFile('/e/x', '');
  await ifs.mkdir('/d2');
  await assert.rejects(ifs.rename('/d2', '/e'), { code: 'ENOTEMPTY' });
  assert.deepEqual(await ifs.readdir('/'), ['d', 'd2', 'e']);
  ifs.flushCache();
  assert.deepEqual(await ifs.readdir('/'), ['d', 'd2', 'e']);
  assert.equal(await ifs.readFile('/d/f', 'utf8'), 'committed');
});

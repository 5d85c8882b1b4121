// The InodeFS inode cache: bounded, sized at will, and holding only
// committed data (a failed transaction leaves no trace in it).
import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';

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

test('the path memo answers repeated lookups, and never outlives a write, a resize or a flush', async (t) => {
  const ifs = await openFs(t, { cacheSize: 100 });
  await ifs.mkdir('/d');
  await ifs.writeFile('/d/f', 'one');
  ifs.statSync('/d/f');
  const before = ifs.cacheStats();
  for (let i = 0; i < 10; i++) assert.equal(ifs.statSync('/d/f').size, 3);
  // Each memo answer counts the lookups it saved as hits (5: /, d, /d, f, /d/f).
  assert.equal(ifs.cacheStats().hits - before.hits, 50);
  assert.equal(ifs.cacheStats().misses, before.misses);
  await ifs.writeFile('/d/f', 'four');
  assert.equal(ifs.statSync('/d/f').size, 4);
  assert.equal(ifs.readFileSync('/d/f', 'utf8'), 'four');
  ifs.setCacheSize(50); // a new cache: stamps of the old one mean nothing
  ifs.statSync('/d/f');
  ifs.statSync('/d/f');
  ifs.setCacheSize(60);
  await ifs.writeFile('/d/f', 'fiver');
  assert.equal(ifs.statSync('/d/f').size, 5);
  await ifs.rename('/d', '/e');
  assert.throws(() => ifs.statSync('/d/f'), { code: 'ENOENT' });
  assert.equal(ifs.statSync('/e/f').size, 5);
  await ifs.symlink('/e/f', '/link');
  assert.equal(ifs.statSync('/link').size, 5);
  assert.equal(ifs.lstatSync('/link').isSymbolicLink(), true);
  await ifs.writeFile('/e/f', 'sixsix');
  assert.equal(ifs.statSync('/link').size, 6);
});

test('a record too large for the cache is served uncached, never left stale', async (t) => {
  const ifs = await openFs(t, { cacheSize: 100, inlineBytes: 2 ** 20 });
  await ifs.writeFile('/f', 'old');
  assert.equal(ifs.statSync('/f').size, 3);
  await ifs.writeFile('/f', Buffer.alloc(2 ** 20, 1)); // inline, larger than a cache entry can be
  assert.equal(ifs.statSync('/f').size, 2 ** 20);
  assert.deepEqual(ifs.readFileSync('/f'), Buffer.alloc(2 ** 20, 1));
  ifs.flushCache();
  assert.equal(ifs.statSync('/f').size, 2 ** 20);
});

test('one shared cache serves several stores apart, and never answers from before a reopen', async (t) => {
  const dir = tempDir(t);
  const cache = new SharedCache({ memoryBytes: 4 * 2 ** 20 });
  t.after(() => cache.close());
  const a = await InodeFS.open(path.join(dir, 'a.lmdb'), { cache });
  const b = await InodeFS.open(path.join(dir, 'b.lmdb'), { cache });
  await a.writeFile('/only-in-a', 'A data');
  a.statSync('/only-in-a');
  assert.throws(() => b.statSync('/only-in-a'), { code: 'ENOENT' });
  await b.writeFile('/only-in-a', 'B data');
  assert.equal(a.readFileSync('/only-in-a', 'utf8'), 'A data');
  a.close();
  // Another opener (another process, in real life) changes the store while the cache keeps a's entries.
  const other = await InodeFS.open(path.join(dir, 'a.lmdb'));
  await other.writeFile('/only-in-a', 'changed meanwhile');
  other.close();
  const again = await InodeFS.open(path.join(dir, 'a.lmdb'), { cache });
  t.after(() => again.close());
  assert.equal(again.readFileSync('/only-in-a', 'utf8'), 'changed meanwhile');
  b.close();
});

// InodeFS across worker threads: threads that open one store with the same
// options.cache share the inode cache and the lmdb environment; no thread
// reads a torn file or keeps a stale record. A private cache is exclusive.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import path from 'node:path';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { STRESS, testSeed } from './helpers/seeded-random.js';

const THREAD = new URL('./fixtures/inodefs-thread.js', import.meta.url);

test('worker threads share one inode cache: checksummed files, no torn reads, no stale records', { timeout: 120_000 }, async (t) => {
  const file = path.join(tempDir(t), 'fs.lmdb');
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20, max: 200 });
  t.after(() => cache.close());
  const ifs = await InodeFS.open(file, { cache, inlineBytes: 256, chunkBytes: 4096 });
  t.after(() => ifs.close());
  await ifs.mkdir('/shared');
  const paths = Array.from({ length: 6 }, (_, i) => `/shared/f${i}`);
  ifs.statSync('/shared'); // the race file's name is looked up, and cached, before the race
  const seed = testSeed();
  const steps = STRESS ? 20_000 : 1500;
  const workers = [1, 2, 3].map((id) => new Worker(THREAD, { workerData: { file, handle: cache.handle, id, steps, paths, seed: seed + id } }));
  const results = await Promise.all(workers.map(async (worker) => (await once(worker, 'message'))[0]));
  for (const { writes, reads, bad } of results) {
    assert.deepEqual(bad, [], `SEED=${seed}`);
    assert.ok(writes > 0 && reads > 0);
  }
  // What the shared cache serves is what lmdb holds (a snapshot reads lmdb, not the cache).
  const truth = ifs.createSnapshot('truth');
  t.after(() => truth.release());
  for (const p of [...paths, '/shared/race']) {
    let expected;
    try {
      expected = await truth.readFile(p);
    } catch (error) {
      assert.equal(error.code, 'ENOENT');
      await assert.rejects(ifs.readFile(p), { code: 'ENOENT' });
      continue;
    }
    assert.deepEqual(await ifs.readFile(p), expected, `${p} (SEED=${seed})`);
    assert.deepEqual({ ...(await ifs.stat(p)) }, { ...(await truth.stat(p)) });
  }
  assert.ok(ifs.cacheStats().hits > 0);
  assert.equal(ifs.fsck().ok, true);
});

test('a private inode cache excludes any other InodeFS of the same store in the process', async (t) => {
  const file = path.join(tempDir(t), 'fs.lmdb');
  const first = await InodeFS.open(file);
  await assert.rejects(InodeFS.open(file), {
    code: 'ERR_INODEFS_BUSY',
    message: `${file} is already open in this process with a private inode cache; threads share a store by each opening it with the same options.cache (a SharedCache)`,
  });
  first.close();
  const cache = new SharedCache({ memoryBytes: 2 ** 20 });
  t.after(() => cache.close());
  const shared = await InodeFS.open(file, { cache });
  const second = await InodeFS.open(file, { cache });
  await assert.rejects(InodeFS.open(file, { cacheSize: 0 }), {
    code: 'ERR_INODEFS_BUSY',
    message: `${file} is already open in this process; threads share a store by each opening it with the same options.cache (a SharedCache)`,
  });
  await shared.writeFile('/a', 'seen by both');
  assert.equal(await second.readFile('/a', 'utf8'), 'seen by both');
  second.close();
  shared.close();
  (await InodeFS.open(file)).close(); // every opener gone: a private cache may open it again
});

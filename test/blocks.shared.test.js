// BlockStore shared between threads and processes: no torn block under
// concurrent writers and eviction; dirty blocks in a file-backed store
// survive the writer's SIGKILL; writers killed mid-write never stop others.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { nativeAvailable } from '../lib/native/addon.js';
import { BlockStore } from '../lib/index.js';
import { arenaPath, killProcess, startProcess } from './helpers/arena-files.js';
import { checkBlock } from './helpers/block-value.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
const workerFile = new URL('./fixtures/block-worker.js', import.meta.url);

test('4 threads writing and reading whole blocks under eviction never see a torn or foreign block', async () => {
  const seed = testSeed();
  // Room for about a third of the 4 × 64 blocks in play: clean blocks are evicted all the time.
  const store = new BlockStore({ memoryBytes: 2 * MiB, blockBytes: 16 * 1024, stripes: 4 });
  const workers = [0, 1, 2, 3].map(
    (writer) => new Worker(workerFile, { workerData: { handle: store.handle, files: 4, blocksPerFile: 64, writer, seed: seed + writer, ms: STRESS ? 10_000 : 1000 } }),
  );
  const reports = await Promise.all(workers.map(async (worker) => (await once(worker, 'message'))[0]));
  let ok = 0;
  for (const counts of reports) {
    assert.equal(counts.torn, 0, `torn blocks (SEED=${seed})`);
    assert.equal(counts.foreign, 0, `foreign blocks (SEED=${seed})`);
    ok += counts.ok;
  }
  assert.ok(ok > 100, `blocks were read back (${ok})`);
  assert.ok(store.stats().evictions > 0, 'clean blocks were evicted');
});

test('dirty blocks of a file-backed store survive their writer\'s SIGKILL and are there to write back', { skip }, async (t) => {
  const path = arenaPath(t, 'blocks');
  const { child } = await startProcess({ mode: 'block-write', path, files: 3, blocks: 20, blockBytes: 32 * 1024 });
  await killProcess(child);
  // Nobody has the file open: this open recovers it, and the data is all there.
  const store = BlockStore.open(path);
  const dirty = store.dirty();
  assert.equal(dirty.length, 60);
  for (const range of dirty) {
    const block = store.read(range.file, range.position, range.length);
    assert.equal(checkBlock(block, range.file, range.block), 'ok');
    assert.equal(store.markClean(range), true);
  }
  assert.equal(store.stats().dirtyBlocks, 0);
  store.close();
});

test('writers killed with SIGKILL mid-write never leave readers torn or stuck', { skip, timeout: 300_000 }, async (t) => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const path = arenaPath(t, 'blocks');
  const store = BlockStore.open(path, { memoryBytes: 8 * MiB, blockBytes: 128 * 1024, stripes: 2 });
  t.after(() => store.close());
  const kills = STRESS ? 200 : 30;
  let slowest = 0;
  let checked = 0;
  for (let kill = 0; kill < kills; kill++) {
    const { child } = await startProcess({ mode: 'block-writer', path, files: 2, blocks: 8, seed: seed + kill, writer: kill });
    await sleep(random.int(10));
    await killProcess(child);
    for (let file = 0; file < 2; file++) {
      for (let index = 0; index < 8; index++) {
        const started = performance.now();
        const block = store.read(file, index * store.blockBytes, store.blockBytes);
        slowest = Math.max(slowest, performance.now() - started);
        if (block === undefined) continue;
        assert.equal(checkBlock(block, file, index), 'ok', `SEED=${seed}`);
        checked++;
      }
    }
  }
  const stats = store.stats();
  t.diagnostic(`${checked} blocks checked, slowest read ${slowest.toFixed(1)} ms, lockRecoveries ${stats.lockRecoveries}, lost dirty blocks ${stats.lostDirtyBlocks}`);
  assert.ok(checked > 0);
  assert.ok(slowest < 5000, `slowest read ${slowest} ms`);
  assert.ok(stats.lostDirtyBlocks <= stats.lockRecoveries, 'a dead writer costs at most the one block it was writing');
});

test('BlockStore.open keeps blocks across close and reopen; options must agree with the file', { skip }, async (t) => {
  const path = arenaPath(t, 'blocks');
  const store = BlockStore.open(path, { memoryBytes: 4 * MiB, blockBytes: 8192 });
  assert.equal(store.path, path);
  store.write(9, 100, Buffer.from('write-back data'));
  await store.flush();
  store.close();
  assert.throws(() => store.write(9, 0, Buffer.alloc(1)), { code: 'ERR_CACHE_CLOSED' });
  const reopened = BlockStore.open(path);
  assert.equal(reopened.blockBytes, 8192);
  assert.equal(reopened.read(9, 100, 15).toString(), 'write-back data');
  assert.equal(reopened.dirty().length, 1);
  assert.throws(() => BlockStore.open(path, { blockBytes: 4096 }), {
    name: 'ArenaCacheError',
    code: 'ERR_ARENA_MISMATCH',
    message: `block store file ${path} was created with options.blockBytes 8192, not 4096; leave the option out to use the file as it is, or pass { reset: true } to replace it`,
  });
  reopened.close();
  const cacheFile = arenaPath(t, 'cache');
  const { SharedCache } = await import('../lib/index.js');
  SharedCache.open(cacheFile, { memoryBytes: 2 * MiB }).close();
  assert.throws(() => BlockStore.open(cacheFile), {
    code: 'ERR_ARENA_NOT_ARENA',
    message: `arena file ${cacheFile} is not a BlockStore arena (it is a SharedCache arena); open() never overwrites another kind of file: remove it or choose another path`,
  });
});

// Linearizability of the atomic operations: worker threads on one in-memory
// cache (near caches on) and processes on one file-backed cache run random
// shares of incr, add, info + compareAndSet and get on shared keys at once,
// and their histories are checked (test/helpers/atomic-history.js).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { checkAtomicHistory } from './helpers/atomic-history.js';
import { processHistories } from './helpers/history.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const COUNTERS = Array.from({ length: 4 }, (_, i) => `ctr:${i}`);
const CLAIMS = Array.from({ length: 300 }, (_, i) => `claim:${i}`);
const REGISTERS = Array.from({ length: 3 }, (_, i) => `reg:${i}`);

/** `total` random operations dealt round-robin to `parties` shares. */
function randomShares(random, total, parties) {
  const shares = Array.from({ length: parties }, () => []);
  for (let i = 0; i < total; i++) {
    const roll = random();
    const op =
      roll < 0.35 ? ['incr', random.pick(COUNTERS)]
      : roll < 0.5 ? ['get', random.pick(COUNTERS)]
      : roll < 0.65 ? ['add', random.pick(CLAIMS)]
      : roll < 0.75 ? ['get', random.pick(CLAIMS)]
      : ['cas', random.pick(REGISTERS)];
    shares[i % parties].push(op);
  }
  return shares;
}

function prepare(cache) {
  for (const key of REGISTERS) cache.set(key, 'init');
}

function checked(cache, histories, seed) {
  const stats = cache.stats();
  assert.equal(stats.evictions, 0, 'the check assumes nothing is evicted');
  assert.ok(stats.increments > 0 && stats.conditionalWrites > 0 && stats.conditionalMisses > 0, 'the operations raced');
  assert.deepEqual(checkAtomicHistory(histories.flat()).slice(0, 10), [], `SEED=${seed}`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
}

test('incr, add, compareAndSet and get split across 4 workers are linearizable per key (near caches on)', async () => {
  const seed = testSeed();
  const workers = 4;
  const shares = randomShares(seededRandom(seed), STRESS ? 100_000 : 12_000, workers);
  const cache = new SharedCache({ memoryBytes: 8 * MiB });
  prepare(cache);
  const clock = new SharedArrayBuffer(4);
  const barrier = new SharedArrayBuffer(8);
  const threads = shares.map(
    (ops, writer) =>
      new Worker(new URL('./fixtures/history-worker.js', import.meta.url), {
        workerData: { handle: cache.handle, ops, writer: writer + 1, clock, barrier, parties: workers, nearCache: 1000, atomic: true },
      }),
  );
  const histories = await Promise.all(threads.map(async (worker) => (await once(worker, 'message'))[0]));
  await Promise.all(threads.map((worker) => worker.terminate()));
  checked(cache, histories, seed);
});

test('incr, add, compareAndSet and get split across 3 processes on a cache file are linearizable per key', { skip: !nativeAvailable && 'needs the native addon' }, async (t) => {
  const seed = testSeed();
  const processes = 3;
  const shares = randomShares(seededRandom(seed), STRESS ? 40_000 : 6_000, processes);
  const path = arenaPath(t);
  const clockPath = arenaPath(t, 'clock');
  writeFileSync(clockPath, Buffer.alloc(4096), { mode: 0o600 });
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB });
  t.after(() => cache.close());
  prepare(cache);
  const histories = await processHistories(shares.map((ops, writer) => ({ path, clockPath, ops, writer: writer + 1, parties: processes, atomic: true })));
  checked(cache, histories, seed);
});

test('the atomic history checker catches a lost increment, a second winner, a stale count and a lost swap', () => {
  const problems = checkAtomicHistory([
    { type: 'incr', key: 'ctr:0', writer: 1, start: 0, end: 1, result: 1 },
    { type: 'incr', key: 'ctr:0', writer: 2, start: 2, end: 3, result: 1 },
    { type: 'get', key: 'ctr:0', writer: 3, start: 4, end: 5, result: 0 },
    { type: 'add', key: 'claim:0', writer: 1, start: 0, end: 1, result: true },
    { type: 'add', key: 'claim:0', writer: 2, start: 0, end: 3, result: true },
    { type: 'cas', key: 'reg:0', writer: 1, start: 0, end: 1, read: 'init', token: '1:1', result: true },
    { type: 'cas', key: 'reg:0', writer: 2, start: 0, end: 2, read: 'init', token: '2:1', result: true },
    { type: 'cas', key: 'reg:1', writer: 2, start: 0, end: 2, read: 'init', token: '2:2', result: false },
  ]);
  assert.deepEqual(problems, [
    'ctr:0: two increments returned 1',
    'ctr:0: increment 2 of 2 returned 1',
    'ctr:0: a get at [4, 5] saw 0 after increment 1 ended',
    'claim:0: 2 adds returned true',
    'reg:0: two swaps replaced init (a lost update)',
    "reg:0: 2 swaps won, but only 1 form a chain from 'init'",
    'reg:1: a swap of init failed at [0, 2] though nothing had replaced it',
  ]);
});

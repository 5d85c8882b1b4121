// stats() after a thread's counter slot was overwritten (a damaged file, a
// stray write): the damaged slot is left out of the sums and reset, so
// every counter stays a count (never negative, NaN or absurd), the repair is
// counted in threadSlotRepairs, and verify() names the slot until then.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { closeSync, openSync, writeSync } from 'node:fs';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { HEADER_BYTES, THREAD_SLOT_BYTES } from '../lib/arena/common/layout.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { BlockStore, SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { seededRandom, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
// Counter words of a slot (float64, after the owner's tid and pid): hits is word 1, misses 2, sets 3, deletes 4.
const WORD = { hits: 1, misses: 2, sets: 3, deletes: 4 };

/** A Float64Array and an Int32Array over thread slot `slot` of `buffer`. */
function slotViews(buffer, slot) {
  const offset = HEADER_BYTES + slot * THREAD_SLOT_BYTES;
  return { f64: new Float64Array(buffer, offset, THREAD_SLOT_BYTES / 8), i32: new Int32Array(buffer, offset, THREAD_SLOT_BYTES / 4) };
}

/** 3 sets, 2 hits, 1 miss, 1 delete. */
function work(cache) {
  cache.set('a', 1).set('b', 2).set('c', 3);
  cache.get('a');
  cache.get('b');
  cache.get('zz');
  cache.delete('c');
}

/** The stats() fields that are fractions, not counts. */
const FRACTIONS = new Set(['hitRatio', 'smallShare']);

function assertCounts(stats, expected) {
  for (const [name, value] of Object.entries(stats)) {
    if (typeof value !== 'number') continue;
    if (FRACTIONS.has(name)) assert.ok(value >= 0 && value <= 1, `${name} is ${value}`);
    else assert.ok(Number.isSafeInteger(value) && value >= 0, `${name} is ${value}`);
  }
  for (const [name, value] of Object.entries(expected)) assert.equal(stats[name], value, name);
}

test('a slot holding values no counting makes is left out of stats() and reset, once', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  work(cache);
  const { f64, i32 } = slotViews(cache.handle.buffer, 3);
  i32[0] = 4242; // an owner that looks real
  i32[1] = 77;
  f64[WORD.hits] = -7;
  f64[WORD.misses] = Number.NaN;
  f64[WORD.sets] = 1e300;
  f64[WORD.deletes] = 0.5;
  assert.deepEqual(cache.verify(), {
    ok: false,
    problems: ['thread counter slot 3 is damaged (hits is -7, not a count); stats() leaves its counts out and resets it'],
  });
  assertCounts(cache.stats(), { hits: 2, misses: 1, gets: 3, hitRatio: 2 / 3, sets: 3, deletes: 1, threads: 2, threadSlotRepairs: 1 });
  assert.deepEqual([...f64.subarray(1)], new Array(f64.length - 1).fill(0), 'the counts are reset');
  assert.deepEqual([i32[0], i32[1]], [4242, 77], 'a possible owner keeps the slot');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  // Its owner counts on from zero.
  f64[WORD.hits] += 5;
  assertCounts(cache.stats(), { hits: 7, threadSlotRepairs: 1 });
});

test('repairs are a Prometheus counter too', async () => {
  const { Registry } = await import('prom-client');
  const cache = new SharedCache({ memoryBytes: MiB });
  const registry = new Registry();
  cache.registerMetrics(registry, { name: 'damaged' });
  work(cache);
  slotViews(cache.handle.buffer, 3).f64[WORD.hits] = -1;
  const text = await registry.metrics();
  assert.match(text, /# HELP arenacache_thread_slot_repairs_total Thread counter slots found damaged and reset \(their counts left out\)\./);
  assert.match(text, /^arenacache_thread_slot_repairs_total\{cache="damaged"\} 1$/m);
  assert.match(text, /^arenacache_hits_total\{cache="damaged"\} 2$/m);
});

test('an impossible owner, or a word no counter uses, marks a slot damaged too; an impossible owner is freed', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  work(cache);
  const owner = slotViews(cache.handle.buffer, 4);
  owner.i32[0] = 2 ** 30; // no Linux tid is above 2^22
  owner.i32[1] = 9;
  owner.f64[WORD.hits] = 1000;
  const unused = slotViews(cache.handle.buffer, 5);
  unused.i32[0] = 99;
  unused.f64[WORD.hits] = 1000;
  unused.f64[unused.f64.length - 1] = 1;
  assert.deepEqual(cache.verify().problems, [
    `thread counter slot 4 is damaged (its owner, thread ${2 ** 30} of process 9, cannot exist); stats() leaves its counts out and resets it`,
    `thread counter slot 5 is damaged (word ${unused.f64.length - 1}, which no counter uses, is 1); stats() leaves its counts out and resets it`,
  ]);
  assertCounts(cache.stats(), { hits: 2, threads: 2, threadSlotRepairs: 2 });
  assert.deepEqual([owner.i32[0], owner.i32[1]], [0, 0], 'the impossible owner is gone: the slot can be claimed again');
  assert.deepEqual([unused.i32[0], unused.f64[WORD.hits]], [99, 0]);
});

test('random bytes over a slot never show in stats()', (t) => {
  const seed = testSeed();
  t.diagnostic(`SEED=${seed}`);
  const random = seededRandom(seed);
  const cache = new SharedCache({ memoryBytes: MiB });
  work(cache);
  const { f64 } = slotViews(cache.handle.buffer, 2);
  const bytes = new Uint8Array(f64.buffer, f64.byteOffset, f64.byteLength);
  for (let round = 1; round <= 200; round++) {
    for (let i = 0; i < bytes.length; i++) bytes[i] = random.int(256);
    assertCounts(cache.stats(), { hits: 2, misses: 1, sets: 3, deletes: 1, threadSlotRepairs: round });
  }
});

test('this thread\'s own damaged slot is reset and counts on', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  work(cache);
  const { f64 } = slotViews(cache.handle.buffer, 0);
  assert.equal(f64[WORD.sets], 3, 'slot 0 is this thread\'s');
  f64[WORD.misses] = -1;
  assertCounts(cache.stats(), { hits: 0, misses: 0, sets: 0, threads: 1, threadSlotRepairs: 1 });
  work(cache);
  assertCounts(cache.stats(), { hits: 2, misses: 1, sets: 3, deletes: 1, threadSlotRepairs: 1 });
});

test('a damaged slot in an arena file is left out when the file is opened again', { skip }, (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: MiB });
  work(cache);
  cache.close();
  const garbage = Buffer.alloc(THREAD_SLOT_BYTES, 0xff); // NaN in every counter
  const fd = openSync(path, 'r+');
  writeSync(fd, garbage, 0, garbage.length, HEADER_BYTES + 6 * THREAD_SLOT_BYTES);
  closeSync(fd);
  const reopened = SharedCache.open(path);
  t.after(() => reopened.close());
  assertCounts(reopened.stats(), { hits: 2, misses: 1, sets: 3, deletes: 1, threadSlotRepairs: 1 });
});

test('BlockStore.stats() leaves a damaged slot out too', () => {
  const store = new BlockStore({ memoryBytes: MiB, blockBytes: 4096 });
  store.write(1, 0, Buffer.alloc(10));
  store.read(1, 0, 10);
  const { f64 } = slotViews(store.handle.buffer, 1);
  f64[WORD.sets] = -1e9;
  const stats = store.stats();
  assertCounts(stats, { blockWrites: 1, blockHits: 1, threadSlotRepairs: 1 });
});

// Threads that find the same damage at once reset it once: the
// compare-and-exchange of the damaged word picks one.
const STATS_WORKER = new URL('./fixtures/stats-worker.js', import.meta.url);

test('threads that call stats() at once over one damaged slot reset it once', async () => {
  // 256 thread slots: the damaged one (200) is never claimed by a worker, so
  // it never holds a repair counted by one (a reset would take it away).
  const cache = new SharedCache({ memoryBytes: 16 * MiB });
  work(cache);
  for (let round = 1; round <= 5; round++) {
    const go = new Int32Array(new SharedArrayBuffer(8));
    const workers = Array.from({ length: 4 }, () => new Worker(STATS_WORKER, { workerData: { handle: cache.handle, go: go.buffer } }));
    const exits = workers.map((worker) => once(worker, 'exit'));
    while (Atomics.load(go, 1) < workers.length) await new Promise((resolve) => setTimeout(resolve, 1));
    slotViews(cache.handle.buffer, 200).f64[WORD.hits] = -round;
    Atomics.store(go, 0, 1);
    Atomics.notify(go, 0);
    const seen = await Promise.all(workers.map(async (worker) => (await once(worker, 'message'))[0]));
    await Promise.all(exits);
    assert.ok(seen.every((repairs) => repairs === round - 1 || repairs === round), `round ${round}: ${seen}`);
    assertCounts(cache.stats(), { hits: 2, threadSlotRepairs: round });
  }
});

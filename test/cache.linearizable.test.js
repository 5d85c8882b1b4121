import assert from 'node:assert/strict';
import { once } from 'node:events';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { seededRandom, STRESS, testSeed } from './helpers/random.js';

const MiB = 2 ** 20;
const WORKERS = 4;

/**
 * Checks a history of set/delete/get on registers (one per key) for
 * linearizability violations that a cache without eviction must never show:
 * a read of a value already overwritten before the read began, a read of a
 * value not yet written, a miss although a write definitely preceded it, or
 * two ordered reads that see writes in the opposite order.
 */
function checkHistory(history) {
  const problems = [];
  const byKey = new Map();
  for (const op of history) {
    if (!byKey.has(op.key)) byKey.set(op.key, []);
    byKey.get(op.key).push(op);
  }
  for (const [key, ops] of byKey) {
    const writes = ops.filter((op) => op.type === 'set');
    const deletes = ops.filter((op) => op.type === 'delete');
    const mutations = ops.filter((op) => op.type !== 'get');
    const writeOf = new Map(writes.map((op) => [`${op.writer}:${op.sequence}`, op]));
    const reads = ops.filter((op) => op.type === 'get');
    for (const read of reads) {
      if (read.result === 'torn' || read.result === 'foreign') {
        problems.push(`${key}: a ${read.result} value was read`);
        continue;
      }
      if (read.result === null) {
        const definite = writes.find(
          (w) => w.end < read.start && !deletes.some((d) => d.end > w.start && d.start < read.end),
        );
        if (definite) problems.push(`${key}: miss at [${read.start}, ${read.end}] after write at [${definite.start}, ${definite.end}]`);
        continue;
      }
      const source = writeOf.get(`${read.result.writer}:${read.result.sequence}`);
      if (!source) {
        problems.push(`${key}: read a value nobody wrote`);
        continue;
      }
      if (source.start > read.end) problems.push(`${key}: read a value before it was written`);
      const overwritten = mutations.find((m) => m !== source && m.start > source.end && m.end < read.start);
      if (overwritten) problems.push(`${key}: read at ${read.start} saw a value overwritten at ${overwritten.end}`);
      read.source = source;
    }
    const valued = reads.filter((read) => read.source);
    for (const first of valued) {
      for (const second of valued) {
        if (first.end < second.start && second.source.end < first.source.start) {
          problems.push(`${key}: a later read saw an older write`);
        }
      }
    }
  }
  return problems;
}

test('operations split across 4 workers are linearizable per key', async () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const total = STRESS ? 200_000 : 16_000;
  const keys = Array.from({ length: 24 }, (_, i) => `lin:${i}`);
  const cache = new SharedCache({ memoryBytes: 8 * MiB });
  const shares = Array.from({ length: WORKERS }, () => []);
  for (let i = 0; i < total; i++) {
    const roll = random();
    const type = roll < 0.45 ? 'set' : roll < 0.55 ? 'delete' : 'get';
    shares[i % WORKERS].push([type, random.pick(keys), 20 + random.int(600)]);
  }
  const clock = new SharedArrayBuffer(4);
  const barrier = new SharedArrayBuffer(8);
  const workers = shares.map(
    (ops, writer) =>
      new Worker(new URL('./helpers/history-worker.js', import.meta.url), {
        workerData: { handle: cache.handle, ops, writer: writer + 1, clock, barrier, parties: WORKERS },
      }),
  );
  const histories = await Promise.all(workers.map(async (worker) => (await once(worker, 'message'))[0]));
  await Promise.all(workers.map((worker) => worker.terminate()));
  assert.equal(cache.stats().evictions, 0, 'the check assumes nothing is evicted');
  const problems = checkHistory(histories.flat());
  assert.deepEqual(problems.slice(0, 10), [], `SEED=${seed}`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('the history checker catches a stale read', () => {
  const problems = checkHistory([
    { type: 'set', key: 'k', writer: 1, sequence: 1, start: 0, end: 1 },
    { type: 'set', key: 'k', writer: 1, sequence: 2, start: 2, end: 3 },
    { type: 'get', key: 'k', start: 4, end: 5, result: { writer: 1, sequence: 1 } },
    { type: 'get', key: 'k', start: 6, end: 7, result: null },
  ]);
  assert.deepEqual(problems, ['k: read at 4 saw a value overwritten at 3', 'k: miss at [6, 7] after write at [0, 1]']);
});

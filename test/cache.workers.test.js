// A cache shared with worker threads: attached through workerData or
// postMessage it shares entries both ways and sums every thread's counters,
// and a piscina pool shares one cache across its workers.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

const workerFile = new URL('./fixtures/attach-worker.js', import.meta.url);

test('a worker attached through workerData shares entries both ways', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  cache.set('from-main', { n: 1 });
  cache.set('bytes', Buffer.from([1, 2, 3]));
  const worker = new Worker(workerFile, {
    workerData: { handle: cache.handle, read: ['from-main', 'bytes', 'absent'], write: [['from-worker', 'hello']] },
  });
  const [report] = await once(worker, 'message');
  assert.deepEqual(report.seen[0], { n: 1 });
  assert.deepEqual(Buffer.from(report.seen[1]), Buffer.from([1, 2, 3]));
  assert.equal(report.seen[2], undefined);
  assert.equal(report.size, 3);
  assert.equal(cache.get('from-worker'), 'hello');

  // The handle also travels by postMessage.
  const other = new SharedCache({ memoryBytes: MiB });
  other.set('posted', 'yes');
  worker.postMessage({ handle: other.handle, key: 'posted' });
  const [reply] = await once(worker, 'message');
  assert.equal(reply.later, 'yes');
  await worker.terminate();

  // Counters from every thread are summed: the worker's two hits and one
  // miss, and the main thread's hit on "from-worker".
  const stats = cache.stats();
  assert.equal(stats.hits, 3);
  assert.equal(stats.misses, 1);
  assert.equal(stats.sets, 3);
  assert.ok(stats.threads >= 2);
});

test('a piscina pool shares one cache across its workers', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const pool = new Piscina({
    filename: new URL('./fixtures/piscina-task.js', import.meta.url).href,
    minThreads: 2,
    maxThreads: 2,
  });
  try {
    const run = (from, to) =>
      Promise.all(Array.from({ length: to - from }, (_, j) => pool.run({ handle: cache.handle, key: `k${(from + j) % 10}`, value: from + j })));
    // The first round writes every key; every task of the later rounds, on
    // whichever worker it lands, must see a value written by another task.
    const first = await run(0, 10);
    assert.ok(first.every((result) => result.before === undefined));
    const later = await run(10, 40);
    assert.ok(later.every((result) => typeof result.before === 'number'));
    const threads = later[later.length - 1].threadStats;
    assert.ok(threads >= 2, `${threads} threads attached`);
    assert.equal(cache.size, 10);
    for (let k = 0; k < 10; k++) assert.ok(typeof cache.get(`k${k}`) === 'number');
    assert.equal(cache.stats().sets, 40);
  } finally {
    await pool.destroy();
  }
});

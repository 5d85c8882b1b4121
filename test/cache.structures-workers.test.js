// Object shapes added in one worker thread are decoded in every other, and
// workers adding shapes at the same moment all succeed: a shape is shared
// once, whichever worker met it first, and no value is decoded with the
// other worker's shapes (each append names the ids it takes).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { readHeader } from '../lib/arena/common/layout.js';
import { StructureRegion } from '../lib/arena/entries/structures.js';
import { SharedCache } from '../lib/index.js';
import { readShapes, writeShapes } from './helpers/shapes.js';
import { MiB } from './helpers/units.js';

const childFile = new URL('./fixtures/shape-child.js', import.meta.url);

async function run(workerData) {
  const worker = new Worker(childFile, { workerData });
  // Listening for the exit from the start: it can come in the same turn as the message.
  const exited = once(worker, 'exit');
  const [message] = await once(worker, 'message');
  await exited;
  return message;
}

function regionOf(cache) {
  const region = new StructureRegion(cache.handle.buffer, readHeader(cache.handle.buffer));
  assert.equal(region.refresh(), true);
  return region;
}

test('shapes a worker adds are decoded here, and shapes added here are decoded in a worker', async () => {
  const cache = new SharedCache({ memoryBytes: 16 * MiB });
  const { done, verify } = await run({ mode: 'write', handle: cache.handle, tag: 'worker', from: 0, to: 300 });
  assert.ok(done);
  assert.deepEqual(verify, { ok: true, problems: [] });
  assert.deepEqual(readShapes(cache, 'worker', 0, 300), { ok: 300, missing: 0, wrong: 0 });
  writeShapes(cache, 'main', 0, 300);
  const { counts } = await run({ mode: 'read', handle: cache.handle, tag: 'main', from: 0, to: 300 });
  assert.deepEqual(counts, { ok: 300, missing: 0, wrong: 0 });
});

for (const same of [false, true]) {
  test(`2 workers adding ${same ? 'the same' : 'different'} new shapes at the same moment: all decode everywhere, no shape shared twice`, async () => {
    const cache = new SharedCache({ memoryBytes: 16 * MiB });
    const start = new Int32Array(new SharedArrayBuffer(8));
    const tags = same ? ['both', 'both'] : ['left', 'right'];
    const workers = tags.map((tag) => run({ mode: 'write', handle: cache.handle, tag, from: 0, to: 400, start: start.buffer }));
    // Both wait at the barrier: released together, their appends race.
    while (Atomics.load(start, 1) < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    Atomics.store(start, 0, 1);
    Atomics.notify(start, 0);
    for (const { verify } of await Promise.all(workers)) assert.deepEqual(verify, { ok: true, problems: [] });
    for (const tag of new Set(tags)) assert.deepEqual(readShapes(cache, tag, 0, 400), { ok: 400, missing: 0, wrong: 0 });
    const region = regionOf(cache);
    const shapes = new Set(tags).size * 400 * 2; // each object nests a second shape
    assert.equal(new Set(region.structures.map((keys) => keys.join())).size, region.count, 'no shape shared twice');
    // A few may go self-describing: an encoder shares at most 512 structures
    // more than the region held when it was made, and is renewed between values.
    assert.ok(region.count <= shapes && region.count > shapes * 0.9, `${region.count} of ${shapes} shapes shared`);
    const { counts } = await run({ mode: 'read', handle: cache.handle, tag: tags[0], from: 0, to: 400 });
    assert.deepEqual(counts, { ok: 400, missing: 0, wrong: 0 });
  });
}

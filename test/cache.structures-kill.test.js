// Appenders of object shapes that die at any moment (a terminated worker, a
// process killed with SIGKILL), also between reserving a record and
// publishing it: nobody waits for them, no half-written structure is ever
// read, and the survivors go on adding shapes.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { readHeader } from '../lib/arena/common/layout.js';
import { STRUCTURES_HEADER_BYTES, StructureRegion } from '../lib/arena/entries/structures.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { paddedShapeValue, readShapes, writeShapes } from './helpers/shapes.js';
import { MiB } from './helpers/units.js';

const ROUNDS = STRESS ? 200 : 20;
const childFile = new URL('./fixtures/shape-child.js', import.meta.url);
// Long key names: each append writes about 1.5 KB, so kills land inside appends often.
const PADDING = 1500;
const padding = 'x'.repeat(PADDING);

/** Whether the region has space reserved that no published record covers: an appender stopped in between. */
function abandonedReservation(buffer) {
  const header = readHeader(buffer);
  const region = new StructureRegion(buffer, header);
  assert.equal(region.refresh(), true, region.damaged);
  const used = new Int32Array(buffer, header.structuresOffset, 2)[1];
  return STRUCTURES_HEADER_BYTES + used > region.headEnd;
}

/** After a victim `tag` died: its objects are whole or missing, and this cache still adds and reads shapes at once. */
function checkSurvivor(cache, tag, round) {
  let ok = 0;
  for (const key of cache.keys()) {
    if (!key.startsWith(`${tag}:`)) continue;
    const i = Number(key.slice(tag.length + 1));
    assert.deepEqual(cache.get(key), paddedShapeValue(tag, i, padding), `${key} is its own object`);
    ok++;
  }
  const started = performance.now();
  writeShapes(cache, `after${round}`, 0, 20);
  assert.deepEqual(readShapes(SharedCache.attach(cache.handle), `after${round}`, 0, 20), { ok: 20, missing: 0, wrong: 0 });
  assert.ok(performance.now() - started < 2000, 'no wait for the dead appender');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  return ok;
}

test(`${ROUNDS} workers terminated while adding shapes leave no half-written structure and nothing to wait for`, async (t) => {
  const random = seededRandom(testSeed());
  let inside = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const cache = new SharedCache({ memoryBytes: 16 * MiB });
    const tag = `victim${round}`;
    const worker = new Worker(childFile, { workerData: { mode: 'forever', handle: cache.handle, tag, padding: PADDING } });
    await once(worker, 'message');
    await sleep(random.int(4));
    await worker.terminate();
    if (abandonedReservation(cache.handle.buffer)) inside++;
    assert.ok(checkSurvivor(cache, tag, round) > 0);
  }
  t.diagnostic(`${inside} of ${ROUNDS} terminations came between a reservation and its publication`);
});

test(`processes killed with SIGKILL while adding shapes leave no half-written structure, also for a reopened file`, { skip: !nativeAvailable && 'native addon unavailable' }, async (t) => {
  const random = seededRandom(testSeed());
  const rounds = Math.max(5, ROUNDS / 4);
  let inside = 0;
  for (let round = 0; round < rounds; round++) {
    const path = arenaPath(t);
    const cache = SharedCache.open(path, { memoryBytes: 16 * MiB });
    const tag = `victim${round}`;
    const child = fork(childFile, [JSON.stringify({ mode: 'forever', path, tag, padding: PADDING })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await once(child, 'message');
    await sleep(random.int(4));
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    if (abandonedReservation(cache.handle.buffer)) inside++;
    const found = checkSurvivor(cache, tag, round);
    cache.close();
    // Opened again by a sole user (the recovery after a restart), the region is sound and keeps its shapes.
    const reopened = SharedCache.open(path);
    assert.deepEqual(reopened.verify(), { ok: true, problems: [] });
    assert.equal(checkSurvivor(reopened, tag, `${round}-reopened`), found);
    reopened.close();
  }
  t.diagnostic(`${inside} of ${rounds} kills came between a reservation and its publication`);
});

// The default codec keeps object shapes (msgpackr record structures) in the
// arena: objects are stored without their key names, and every instance on
// the arena decodes objects whose shapes another instance added.
import assert from 'node:assert/strict';
import test from 'node:test';
import { readHeader } from '../lib/arena/common/layout.js';
import { StructureRegion } from '../lib/arena/entries/structures.js';
import { SharedCache } from '../lib/index.js';
import { jsonCodec } from './helpers/codecs.js';
import { readShapes, writeShapes } from './helpers/shapes.js';
import { MiB } from './helpers/units.js';

/** How often `text` occurs in the whole arena. */
function occurrences(buffer, text) {
  const bytes = Buffer.from(buffer);
  const needle = Buffer.from(text);
  let count = 0;
  for (let at = bytes.indexOf(needle); at >= 0; at = bytes.indexOf(needle, at + 1)) count++;
  return count;
}

test('objects of one shape are stored without their key names: the names are in the arena once, in the structure region', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  for (let i = 0; i < 100; i++) cache.set(`user:${i}`, { someDistinctiveKeyName: i, anotherKey: `name ${i}` });
  assert.equal(occurrences(cache.handle.buffer, 'someDistinctiveKeyName'), 1);
  const { structuresOffset, structuresBytes } = readHeader(cache.handle.buffer);
  assert.equal(occurrences(cache.handle.buffer.slice(structuresOffset, structuresOffset + structuresBytes), 'someDistinctiveKeyName'), 1);
  for (let i = 0; i < 100; i++) assert.deepEqual(cache.get(`user:${i}`), { someDistinctiveKeyName: i, anotherKey: `name ${i}` });
});

test('each instance decodes objects whose shapes another instance on the arena added, both ways', () => {
  const first = new SharedCache({ memoryBytes: 4 * MiB });
  const second = SharedCache.attach(first.handle);
  writeShapes(first, 'a', 0, 50);
  assert.deepEqual(readShapes(second, 'a', 0, 50), { ok: 50, missing: 0, wrong: 0 });
  writeShapes(second, 'b', 0, 50);
  assert.deepEqual(readShapes(first, 'b', 0, 50), { ok: 50, missing: 0, wrong: 0 });
  // Interleaved: each adds shapes the other has not read yet.
  for (let i = 50; i < 100; i++) {
    writeShapes(first, 'a', i, i + 1);
    writeShapes(second, 'b', i, i + 1);
  }
  assert.deepEqual(readShapes(first, 'a', 0, 100), { ok: 100, missing: 0, wrong: 0 });
  assert.deepEqual(readShapes(second, 'a', 0, 100), { ok: 100, missing: 0, wrong: 0 });
  assert.deepEqual(readShapes(first, 'b', 0, 100), { ok: 100, missing: 0, wrong: 0 });
  const region = new StructureRegion(first.handle.buffer, readHeader(first.handle.buffer));
  assert.equal(region.refresh(), true);
  // Two shapes per object (it nests one); each was added once, by whichever instance met it first.
  assert.equal(region.count, 400);
  assert.equal(new Set(region.structures.map((keys) => keys.join())).size, 400);
  assert.deepEqual(first.verify(), { ok: true, problems: [] });
});

test('a shape the region already holds is not added again by an instance that has not read it yet', () => {
  const first = new SharedCache({ memoryBytes: MiB });
  const second = SharedCache.attach(first.handle);
  first.set('x', { sameShape: 1, alike: 'a' });
  second.set('y', { sameShape: 2, alike: 'b' });
  const region = new StructureRegion(first.handle.buffer, readHeader(first.handle.buffer));
  region.refresh();
  assert.deepEqual(region.structures, [['sameShape', 'alike']]);
  assert.deepEqual(first.get('y'), { sameShape: 2, alike: 'b' });
});

test('structured clones keep their types and references through shared structures, in another instance', () => {
  const first = new SharedCache({ memoryBytes: MiB });
  const shared = { kind: 'leaf', weight: 2 };
  const cyclic = { label: 'loop', list: [shared, shared] };
  cyclic.self = cyclic;
  const value = { when: new Date(1700000000000), tags: new Set(['a', 'b']), index: new Map([['k', { kind: 'leaf', weight: 3 }]]), cyclic, bytes: new Uint16Array([1, 2, 3]), big: 2n ** 70n };
  first.set('clone', value);
  const got = SharedCache.attach(first.handle).get('clone');
  assert.deepEqual(got, value);
  assert.equal(got.cyclic.self, got.cyclic);
  assert.equal(got.cyclic.list[0], got.cyclic.list[1]);
  assert.ok(got.index instanceof Map && got.tags instanceof Set && got.when instanceof Date && got.bytes instanceof Uint16Array);
});

test('a Buffer inside an object comes back as a Buffer of its own, also the first time an instance meets its shape', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('a', { blob: Buffer.from('first blob') });
  cache.set('b', { blob: Buffer.from('other data') });
  const other = SharedCache.attach(cache.handle);
  const a = other.get('a');
  const b = other.get('b');
  assert.ok(Buffer.isBuffer(a.blob) && Buffer.isBuffer(b.blob));
  assert.equal(a.blob.toString(), 'first blob', 'not a view of memory the next get reused');
  assert.equal(b.blob.toString(), 'other data');
});

test('a custom codec is used as given: no structure region is written', () => {
  const cache = new SharedCache({ memoryBytes: MiB, codec: jsonCodec });
  cache.set('k', { someDistinctiveKeyName: 1 });
  assert.deepEqual(cache.get('k'), { someDistinctiveKeyName: 1 });
  const region = new StructureRegion(cache.handle.buffer, readHeader(cache.handle.buffer));
  region.refresh();
  assert.equal(region.count, 0);
  assert.equal(occurrences(cache.handle.buffer, 'someDistinctiveKeyName'), 1, 'in the JSON value itself');
});

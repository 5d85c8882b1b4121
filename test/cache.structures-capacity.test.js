// Past the structure region's room, objects of new shapes are encoded
// self-describing: any number of shapes works, in every instance.
import assert from 'node:assert/strict';
import test from 'node:test';
import { readHeader } from '../lib/arena/common/layout.js';
import { StructureRegion } from '../lib/arena/entries/structures.js';
import { SharedCache } from '../lib/index.js';
import { readShapes, shapeValue, writeShapes } from './helpers/shapes.js';
import { MiB } from './helpers/units.js';

const SHAPES = 10_000;

test(`${SHAPES} distinct shapes: the region fills, and every object round-trips in every instance`, () => {
  const cache = new SharedCache({ memoryBytes: 32 * MiB });
  writeShapes(cache, 'shape', 0, SHAPES);
  const region = new StructureRegion(cache.handle.buffer, readHeader(cache.handle.buffer));
  assert.equal(region.refresh(), true);
  // Two shapes per object (it nests one): far more than 256 KiB holds.
  assert.ok(region.count > 1000 && region.count < 2 * SHAPES, `region holds ${region.count} structures`);
  assert.ok(region.bytes - region.headEnd < 256, `the region is full (${region.bytes - region.headEnd} bytes left)`);
  assert.equal(cache.stats().entries, SHAPES, 'every object fits in memory');
  assert.deepEqual(readShapes(cache, 'shape', 0, SHAPES), { ok: SHAPES, missing: 0, wrong: 0 });
  const other = SharedCache.attach(cache.handle);
  assert.deepEqual(readShapes(other, 'shape', 0, SHAPES), { ok: SHAPES, missing: 0, wrong: 0 });
  // Shapes the region holds still travel without their names; new ones after it filled do not.
  writeShapes(other, 'late', 0, 100);
  assert.deepEqual(readShapes(cache, 'late', 0, 100), { ok: 100, missing: 0, wrong: 0 });
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('objects sharing a shape of the full region stay compact; a new shape after it filled carries its definition', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  writeShapes(cache, 'fill', 0, 400);
  const region = new StructureRegion(cache.handle.buffer, readHeader(cache.handle.buffer));
  region.refresh();
  assert.ok(region.count < 800, 'a 1 MiB arena has room for fewer than 800 of these structures');
  const known = shapeValue('fill', 0);
  cache.set('known', known);
  const unknown = { aShapeNeverSeenBefore: 1, withLongKeyNames: 2 };
  cache.set('unknown', unknown);
  const stored = (key) => [...SharedCache.attach(cache.handle).entries()].find(([k]) => k === key)[1];
  assert.deepEqual(stored('known'), known);
  assert.deepEqual(stored('unknown'), unknown);
  assert.ok(Buffer.from(cache.handle.buffer).includes('aShapeNeverSeenBefore'), 'its key names are in the value');
});

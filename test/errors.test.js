// The error style: ArenaCacheError carries a stable code, its name and an
// optional cause; every code is its own name; describe() renders bad values
// briefly for messages.
import assert from 'node:assert/strict';
import test from 'node:test';
import { ArenaCacheError, codes } from '../lib/index.js';
import { describe } from '../lib/errors.js';

test('ArenaCacheError carries a stable code, a name and an optional cause', () => {
  const cause = new Error('underlying');
  const error = new ArenaCacheError(codes.ERR_ARENA_CORRUPT, 'broken', { cause });
  assert.ok(error instanceof Error);
  assert.equal(error.name, 'ArenaCacheError');
  assert.equal(error.code, 'ERR_ARENA_CORRUPT');
  assert.equal(error.message, 'broken');
  assert.equal(error.cause, cause);
});

test('every code is its own name', () => {
  for (const [name, value] of Object.entries(codes)) assert.equal(name, value);
  assert.ok(Object.isFrozen(codes));
});

test('describe renders bad values briefly', () => {
  assert.equal(describe('x'.repeat(50)), JSON.stringify(`${'x'.repeat(40)}…`));
  assert.equal(describe(5n), '5n');
  assert.equal(describe([1, 2]), 'an array of length 2');
  assert.equal(describe(Object.create(null)), 'an object');
  assert.equal(describe(() => {}), 'function (anonymous)');
});

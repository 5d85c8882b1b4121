// Keys: strings as UTF-8, Buffer and Uint8Array by their bytes (a string and
// a Buffer of the same bytes are different keys), the maxKeyBytes limit
// (4096 by default) in bytes, and a TypeError for a wrong type or a lone
// surrogate.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

test('string keys are stored as UTF-8; non-ASCII keys work', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const keys = ['plain', 'héllo', '日本語のキー', 'emoji 🎉', '', ' ', 'a\u0000b'];
  keys.forEach((key, i) => cache.set(key, i));
  keys.forEach((key, i) => assert.equal(cache.get(key), i, `key ${JSON.stringify(key)}`));
  assert.deepEqual([...cache.keys()].sort(), [...keys].sort());
});

test('Buffer and Uint8Array keys are compared by bytes', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set(Buffer.from([1, 2, 3]), 'bytes');
  assert.equal(cache.get(new Uint8Array([1, 2, 3])), 'bytes');
  assert.equal(cache.get(Buffer.from([1, 2, 3, 0]).subarray(0, 3)), 'bytes');
  assert.equal(cache.get(Buffer.from([1, 2, 4])), undefined);
  const [key] = [...cache.keys()];
  assert.ok(Buffer.isBuffer(key));
  assert.deepEqual(key, Buffer.from([1, 2, 3]));
});

test('a string key and a Buffer key with the same bytes are different keys', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('abc', 'string key');
  cache.set(Buffer.from('abc'), 'buffer key');
  assert.equal(cache.get('abc'), 'string key');
  assert.equal(cache.get(Buffer.from('abc')), 'buffer key');
  assert.equal(cache.size, 2);
  const keys = [...cache.keys()];
  assert.ok(keys.includes('abc'));
  assert.ok(keys.some((key) => Buffer.isBuffer(key) && key.toString() === 'abc'));
});

test('keys up to maxKeyBytes are accepted, longer ones are a RangeError', () => {
  const cache = new SharedCache({ memoryBytes: MiB, maxKeyBytes: 16 });
  cache.set('x'.repeat(16), 1);
  assert.equal(cache.get('x'.repeat(16)), 1);
  const message = 'key is 17 bytes long; the longest key this cache accepts is 16 bytes (options.maxKeyBytes)';
  for (const call of [
    () => cache.set('x'.repeat(17), 1),
    () => cache.get('x'.repeat(17)),
    () => cache.has('x'.repeat(17)),
    () => cache.delete('x'.repeat(17)),
    () => cache.set(Buffer.alloc(17), 1),
  ]) {
    assert.throws(call, { name: 'RangeError', message });
  }
  // Six 3-byte characters are 18 bytes even though the string has 6 chars.
  assert.throws(() => cache.set('日'.repeat(6), 1), {
    name: 'RangeError',
    message: 'key is 18 bytes long; the longest key this cache accepts is 16 bytes (options.maxKeyBytes)',
  });
  assert.equal(cache.size, 1);
});

test('the default key limit is 4096 bytes', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k'.repeat(4096), 'long');
  assert.equal(cache.get('k'.repeat(4096)), 'long');
  assert.throws(() => cache.set('k'.repeat(4097), 1), /key is 4097 bytes long/);
});

test('keys of the wrong type are a TypeError naming what was given', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const cases = [
    [42, 'key must be a string, Buffer or Uint8Array (got 42)'],
    [undefined, 'key must be a string, Buffer or Uint8Array (got undefined)'],
    [null, 'key must be a string, Buffer or Uint8Array (got null)'],
    [{ id: 1 }, 'key must be a string, Buffer or Uint8Array (got an instance of Object)'],
    [Symbol('s'), 'key must be a string, Buffer or Uint8Array (got Symbol(s))'],
    [new Uint16Array(2), 'key must be a string, Buffer or Uint8Array (got an instance of Uint16Array)'],
  ];
  for (const [key, message] of cases) {
    for (const call of [() => cache.set(key, 1), () => cache.get(key), () => cache.has(key), () => cache.delete(key)]) {
      assert.throws(call, { name: 'TypeError', message });
    }
  }
  assert.equal(cache.size, 0);
});

test('a string key with a lone surrogate is a TypeError', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.throws(() => cache.set('ab\uD800c', 1), {
    name: 'TypeError',
    message: 'key must be well-formed UTF-16: it has a lone surrogate at index 2',
  });
  assert.throws(() => cache.get('\uDC00'), {
    name: 'TypeError',
    message: 'key must be well-formed UTF-16: it has a lone surrogate at index 0',
  });
  cache.set('pair \uD83C\uDF89', 'ok');
  assert.equal(cache.get('pair 🎉'), 'ok');
});

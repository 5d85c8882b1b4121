// Values: Buffers and Uint8Arrays come back as Buffer copies, strings as
// strings, everything else through the codec with its type; every size
// class round-trips; undefined, functions, values the codec refuses and
// values larger than a shard are errors that change nothing.
import assert from 'node:assert/strict';
import test from 'node:test';
import { ArenaCacheError, SharedCache } from '../lib/index.js';
import { jsonCodec } from './helpers/codecs.js';
import { MiB } from './helpers/units.js';

test('Buffer values come back as a Buffer copy', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const original = Buffer.from('payload');
  cache.set('k', original);
  const first = cache.get('k');
  assert.ok(Buffer.isBuffer(first));
  assert.deepEqual(first, original);
  original[0] = 0; // changing the source after set does not change the cache
  first[1] = 0; // nor does changing what get returned
  assert.deepEqual(cache.get('k'), Buffer.from('payload'));
  assert.notEqual(cache.get('k'), cache.get('k'));
});

test('Uint8Array values are stored raw and returned as a Buffer', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', new Uint8Array([1, 2, 3]));
  const value = cache.get('k');
  assert.ok(Buffer.isBuffer(value));
  assert.deepEqual([...value], [1, 2, 3]);
  const view = new Uint8Array(new ArrayBuffer(16), 3, 5).fill(9);
  cache.set('view', view);
  assert.deepEqual(cache.get('view'), Buffer.alloc(5, 9));
});

test('values of every size class round-trip, including empty and unaligned lengths', () => {
  const cache = new SharedCache({ memoryBytes: 8 * MiB });
  for (const length of [0, 1, 3, 4, 5, 63, 64, 65, 255, 256, 511, 512, 513, 1000, 4096, 65537, 1_000_000]) {
    const value = Buffer.alloc(length);
    for (let i = 0; i < length; i++) value[i] = (i * 31 + length) & 0xff;
    cache.set(`len${length}`, value);
    assert.deepEqual(cache.get(`len${length}`), value, `length ${length}`);
  }
});

test('strings are stored as UTF-8 and come back as strings', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  for (const value of ['', 'ascii', 'héllo wörld', '日本語', '🎉 emoji', 'x'.repeat(10_000)]) {
    cache.set('k', value);
    assert.equal(cache.get('k'), value);
  }
  // ASCII is written as Latin-1 (the same bytes, faster): strings with other
  // Latin-1 characters, lone surrogates or control characters must not be.
  const other = SharedCache.attach(cache.handle, { nearCache: 0 });
  for (const value of ['\u00ff\u0080', 'caf\u00e9', 'a\ud800b', '\udc00', '\u0000\u007f', '\u00e9'.repeat(3000)]) {
    cache.set('k', value);
    const expected = Buffer.from(value, 'utf8').toString('utf8');
    assert.equal(other.get('k'), expected, JSON.stringify(value));
  }
  other.close();
});

test('other values go through the codec (msgpackr by default) and keep their type', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const cyclic = { name: 'loop' };
  cyclic.self = cyclic;
  const values = [
    { name: 'Ada' },
    [1, 'two', { three: 3 }],
    42,
    -1.5,
    0,
    true,
    false,
    null,
    new Date(1_700_000_000_000),
    new Map([['a', 1], [2, 'b']]),
    new Set([1, 'x']),
    2n ** 70n,
    new Float64Array([1.5, -2]),
    { nested: { deep: [new Date(5), new Map([['m', { z: 1 }]])] } },
  ];
  values.forEach((value, i) => cache.set(`v${i}`, value));
  values.forEach((value, i) => assert.deepEqual(cache.get(`v${i}`), value));
  cache.set('cyclic', cyclic);
  const back = cache.get('cyclic');
  assert.equal(back.name, 'loop');
  assert.equal(back.self, back);
});

test('undefined is not a value: a TypeError that points to delete()', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', 1);
  assert.throws(() => cache.set('k', undefined), {
    name: 'TypeError',
    message: 'value must not be undefined; use delete(key) to remove an entry',
  });
  assert.equal(cache.get('k'), 1);
});

test('functions and symbols are a TypeError', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.throws(() => cache.set('k', function named() {}), {
    name: 'TypeError',
    message: 'value must be a Buffer, Uint8Array, string or a value the codec can encode (got function named)',
  });
  assert.throws(() => cache.set('k', Symbol('s')), {
    name: 'TypeError',
    message: 'value must be a Buffer, Uint8Array, string or a value the codec can encode (got Symbol(s))',
  });
  assert.equal(cache.size, 0);
});

test('a value the codec cannot encode is a TypeError with the cause, and the cache is intact', () => {
  const cache = new SharedCache({ memoryBytes: MiB, codec: jsonCodec });
  cache.set('k', { ok: 1 });
  assert.throws(() => cache.set('k', { big: 1n }), (error) => {
    assert.equal(error.name, 'TypeError');
    assert.equal(error.message, 'value could not be encoded by the json codec: Do not know how to serialize a BigInt');
    assert.ok(error.cause instanceof TypeError);
    return true;
  });
  assert.deepEqual(cache.get('k'), { ok: 1 });
});

test('a codec whose encode does not return bytes is a TypeError', () => {
  const codec = { name: 'broken', encode: () => 'not bytes', decode: () => null };
  const cache = new SharedCache({ memoryBytes: MiB, codec });
  assert.throws(() => cache.set('k', { a: 1 }), {
    name: 'TypeError',
    message: 'the broken codec\'s encode() must return a Uint8Array (got "not bytes")',
  });
});

test('a custom codec is used for values that are not bytes or strings', () => {
  const cache = new SharedCache({ memoryBytes: MiB, codec: jsonCodec });
  cache.set('obj', { a: [1, 2] });
  cache.set('str', 'still a string');
  cache.set('buf', Buffer.from([7]));
  assert.deepEqual(cache.get('obj'), { a: [1, 2] });
  assert.equal(cache.get('str'), 'still a string');
  assert.deepEqual(cache.get('buf'), Buffer.from([7]));
});

test('a stored value the codec cannot decode is ERR_CODEC_DECODE', () => {
  let fail = false;
  const codec = {
    name: 'flaky',
    encode: (value) => Buffer.from(JSON.stringify(value)),
    decode: (bytes) => {
      if (fail) throw new Error('bad bytes');
      return JSON.parse(bytes.toString());
    },
  };
  const cache = new SharedCache({ memoryBytes: MiB, codec });
  cache.set('k', [1]);
  fail = true;
  assert.throws(() => cache.get('k'), (error) => {
    assert.ok(error instanceof ArenaCacheError);
    assert.equal(error.code, 'ERR_CODEC_DECODE');
    assert.equal(error.message, 'a stored value could not be decoded by the flaky codec: bad bytes');
    assert.equal(error.cause.message, 'bad bytes');
    return true;
  });
});

test('a value larger than a shard can ever hold is a RangeError and changes nothing', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const { maxEntryBytes, shards } = cache.stats();
  cache.set('k', 'kept');
  // 40 bytes of the entry go to the record header (24), a ttl (8) and the key padded to 8.
  assert.throws(() => cache.set('k', Buffer.alloc(2 * MiB)), {
    name: 'RangeError',
    message:
      `value is ${2 * MiB} bytes; the largest value this cache can hold under this key is ${maxEntryBytes - 40} bytes ` +
      `(each of its ${shards} shards has ${maxEntryBytes} bytes for one entry); raise options.memoryBytes or lower options.shards`,
  });
  assert.equal(cache.get('k'), 'kept');
  // The largest value that fits is accepted (it evicts everything else in its shard).
  cache.set('k', Buffer.alloc(maxEntryBytes - 40, 1));
  assert.equal(cache.get('k').length, maxEntryBytes - 40);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a Uint8Array subclass that misreports its length is stored with its real bytes', () => {
  class Liar extends Uint8Array {
    get length() {
      return 4;
    }
    get byteLength() {
      return 4;
    }
    subarray() {
      throw new Error('must not be called');
    }
  }
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('lying value', new Liar(200).fill(7));
  cache.set(new Liar(40).fill(1), 'lying key');
  cache.set('neighbour', 'intact');
  assert.deepEqual(cache.get('lying value'), Buffer.alloc(200, 7));
  assert.equal(cache.get(Buffer.alloc(40, 1)), 'lying key');
  assert.equal(cache.get('neighbour'), 'intact');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a Proxy around a Uint8Array is not taken for raw bytes: the codec gets it and refuses it', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('proxied', 'before');
  assert.throws(() => cache.set('proxied', new Proxy(new Uint8Array([1, 2, 3]), {})), {
    name: 'TypeError',
    message: /^value could not be encoded by the msgpackr-shared codec: /,
  });
  assert.equal(cache.get('proxied'), 'before');
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

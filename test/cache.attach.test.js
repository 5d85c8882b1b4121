// SharedCache.attach(): the handle is structured-cloneable and an attached
// instance sees the same entries and stats; what is not a handle, unknown
// options, a buffer that is not an arena, another layout version, a
// truncated or damaged header and another codec are each refused with their
// own error.
import assert from 'node:assert/strict';
import test from 'node:test';
import { ArenaCacheError, SharedCache } from '../lib/index.js';
import { jsonCodec } from './helpers/codecs.js';
import { MiB } from './helpers/units.js';
import { headerFieldIndex } from '../lib/arena/common/layout.js';

function copyOf(buffer, length = buffer.byteLength) {
  const copy = new SharedArrayBuffer(length);
  new Uint8Array(copy).set(new Uint8Array(buffer, 0, Math.min(length, buffer.byteLength)));
  return copy;
}

function headerChecksum(buffer) {
  const bytes = new Uint8Array(buffer, 0, 4096);
  let h = 0x811c9dc5;
  for (let i = 16; i < 452; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

function arenaError(code, message) {
  return (error) => {
    assert.ok(error instanceof ArenaCacheError, `expected an ArenaCacheError, got ${error}`);
    assert.equal(error.name, 'ArenaCacheError');
    assert.equal(error.code, code);
    if (message instanceof RegExp) assert.match(error.message, message);
    else assert.equal(error.message, message);
    return true;
  };
}

test('the handle is a plain structured-cloneable object', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const { handle } = cache;
  assert.equal(handle.type, 'arenacache.SharedCache');
  assert.equal(handle.version, 1);
  assert.ok(handle.buffer instanceof SharedArrayBuffer);
  assert.equal(cache.handle, handle);
  const cloned = structuredClone(handle);
  cache.set('k', 'shared');
  assert.equal(SharedCache.attach(cloned).get('k'), 'shared');
});

test('an attached cache sees the same entries, memory and stats', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const other = SharedCache.attach(cache.handle);
  cache.set('a', 1);
  other.set('b', 2);
  assert.equal(other.get('a'), 1);
  assert.equal(cache.get('b'), 2);
  assert.equal(other.size, 2);
  other.delete('a');
  assert.equal(cache.has('a'), false);
  assert.equal(cache.stats().sets, 2);
  assert.equal(other.stats().hits, 2);
  assert.equal(other.stats().memoryBytes, MiB);
});

test('attach accepts the SharedArrayBuffer itself', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.set('k', 'v');
  assert.equal(SharedCache.attach(cache.handle.buffer).get('k'), 'v');
});

test('attach rejects what is not a handle', () => {
  const message = (got) => `handle must be a SharedCache handle (cache.handle) or its SharedArrayBuffer (got ${got})`;
  assert.throws(() => SharedCache.attach(), { name: 'TypeError', message: message('undefined') });
  assert.throws(() => SharedCache.attach(42), { name: 'TypeError', message: message('42') });
  assert.throws(() => SharedCache.attach({ buffer: new SharedArrayBuffer(8) }), {
    name: 'TypeError',
    message: message('an instance of Object'),
  });
  assert.throws(() => SharedCache.attach(new ArrayBuffer(4096)), { name: 'TypeError', message: message('an instance of ArrayBuffer') });
  assert.throws(() => SharedCache.attach({ type: 'arenacache.SharedCache', version: 1, buffer: new ArrayBuffer(8) }), {
    name: 'TypeError',
    message: 'handle.buffer must be a SharedArrayBuffer (got an instance of ArrayBuffer)',
  });
  assert.throws(() => SharedCache.attach({ type: 'arenacache.SharedCache', version: 2, buffer: new SharedArrayBuffer(8) }), {
    name: 'RangeError',
    message: 'handle.version must be 1 (got 2)',
  });
});

test('attach rejects attach options it does not know', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.throws(() => SharedCache.attach(cache.handle, { ttl: 5 }), {
    name: 'TypeError',
    message: 'options.ttl is not a known option; valid options are codec, nearCache, nearCacheBytes',
  });
  assert.throws(() => SharedCache.attach(cache.handle, 'x'), { name: 'TypeError', message: 'options must be an object (got "x")' });
});

test('a buffer that is not an arena is ERR_ARENA_NOT_ARENA', () => {
  assert.throws(
    () => SharedCache.attach(new SharedArrayBuffer(8)),
    arenaError('ERR_ARENA_NOT_ARENA', 'buffer is not an arena: 8 bytes is too small to hold an arena header'),
  );
  assert.throws(
    () => SharedCache.attach(new SharedArrayBuffer(MiB)),
    arenaError('ERR_ARENA_NOT_ARENA', 'buffer is not an arena: magic is 0x00000000, expected 0x434e5241'),
  );
});

test('an arena of another layout version is ERR_ARENA_VERSION', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const copy = copyOf(cache.handle.buffer);
  new Uint32Array(copy)[1] = 7;
  assert.throws(
    () => SharedCache.attach(copy),
    arenaError('ERR_ARENA_VERSION', 'arena layout version 7 is not supported; this arenacache reads versions 3 to 6'),
  );
});

test('a truncated arena is ERR_ARENA_TRUNCATED', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.throws(
    () => SharedCache.attach(copyOf(cache.handle.buffer, MiB / 2)),
    arenaError('ERR_ARENA_TRUNCATED', `arena is truncated: its header describes ${MiB} bytes but the buffer has ${MiB / 2}`),
  );
  assert.throws(
    () => SharedCache.attach(copyOf(cache.handle.buffer, 1000)),
    arenaError('ERR_ARENA_TRUNCATED', 'arena is truncated: 1000 bytes cannot hold its 4096-byte header'),
  );
});

test('a damaged header is ERR_ARENA_CORRUPT', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const flipped = copyOf(cache.handle.buffer);
  new Uint8Array(flipped)[40] ^= 0xff; // inside the checksummed header fields
  assert.throws(
    () => SharedCache.attach(flipped),
    arenaError('ERR_ARENA_CORRUPT', 'arena header checksum does not match: the header was overwritten or damaged'),
  );
  // A header whose checksum matches but whose offsets do not follow from its sizes.
  const inconsistent = copyOf(cache.handle.buffer);
  new Float64Array(inconsistent)[headerFieldIndex('dataOffset')] += 64;
  new Uint32Array(inconsistent)[3] = headerChecksum(inconsistent);
  assert.throws(
    () => SharedCache.attach(inconsistent),
    arenaError('ERR_ARENA_CORRUPT', 'arena header is inconsistent: its stored offsets do not follow from its stored sizes'),
  );
  const longCodecName = copyOf(cache.handle.buffer);
  new Uint32Array(longCodecName)[384 / 4] = 65; // the codec name's length
  new Uint32Array(longCodecName)[3] = headerChecksum(longCodecName);
  assert.throws(
    () => SharedCache.attach(longCodecName),
    arenaError('ERR_ARENA_CORRUPT', 'arena header names a codec of 65 bytes, more than 64'),
  );
  const wrongSize = copyOf(cache.handle.buffer);
  new Uint32Array(wrongSize)[2] = 512;
  assert.throws(() => SharedCache.attach(wrongSize), arenaError('ERR_ARENA_CORRUPT', 'arena header size is 512, expected 4096'));
});

test('attaching with another codec than the creator used is ERR_CODEC_MISMATCH', () => {
  const cache = new SharedCache({ memoryBytes: MiB, codec: jsonCodec });
  assert.throws(
    () => SharedCache.attach(cache.handle),
    arenaError(
      'ERR_CODEC_MISMATCH',
      'the cache was created with the codec "json" but attach() was given "msgpackr-shared"; pass the same codec in options.codec',
    ),
  );
  cache.set('k', { a: 1 });
  assert.deepEqual(SharedCache.attach(cache.handle, { codec: jsonCodec }).get('k'), { a: 1 });
});

// Keys whose hashes agree in every bit the dictionary keeps (same shard, same
// tag) are told apart by their bytes: string and byte keys of 4 to 13 bytes,
// with and without a ttl.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { hashStart } from '../lib/arena/entries/hash.js';
import { readHeader } from '../lib/arena/common/layout.js';
import { TAG_MASK } from '../lib/arena/entries/policies.js';
import { KeyEncoder } from '../lib/cache/key-encoder.js';
import { MiB } from './helpers/units.js';

/**
 * Two different keys of `length` bytes whose hashes agree in every bit the
 * dictionary keeps (same shard, same tag): only comparing their bytes tells
 * them apart. Found by the birthday paradox (2^28 tags: ~40,000 keys).
 */
function collidingKeys(cache, length, kind) {
  const header = readHeader(cache.handle.buffer);
  const keys = new KeyEncoder(header.maxKeyBytes, hashStart(header.hashSeed, 0), hashStart(header.hashSeed, 1));
  const seen = new Map();
  for (let i = 0; ; i++) {
    const text = i.toString(36).padStart(length, '~').slice(-length);
    const key = kind === 'string' ? text : Buffer.from(text);
    keys.encode(key);
    const tag = (keys.hash & TAG_MASK) >>> 0;
    const other = seen.get(tag);
    if (other !== undefined) return [other, key];
    seen.set(tag, key);
  }
}

test('keys whose hashes collide are told apart by every byte, whole words and the tail alike', () => {
  for (const kind of ['string', 'bytes']) {
    for (const length of [4, 5, 7, 8, 9, 12, 13]) {
      for (const ttl of [0, 60_000]) {
        const cache = new SharedCache({ memoryBytes: MiB });
        const [a, b] = collidingKeys(cache, length, kind);
        const where = `${kind} keys of ${length} bytes, ttl ${ttl}: ${a} and ${b}`;
        cache.set(a, 'first', { ttl });
        assert.equal(cache.get(b), undefined, where);
        cache.set(b, 'second', { ttl });
        assert.equal(cache.get(a), 'first', where);
        assert.equal(cache.get(b), 'second', where);
        cache.set(a, 'third', { ttl });
        assert.equal(cache.get(b), 'second', where);
        assert.equal(cache.delete(b), true, where);
        assert.equal(cache.get(a), 'third', where);
        assert.equal(cache.get(b), undefined, where);
        assert.deepEqual(cache.verify(), { ok: true, problems: [] });
      }
    }
  }
});

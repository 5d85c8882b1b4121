// Every stored value starts 8-byte aligned in the arena, and stays aligned
// when rewritten in place, for every key length, key kind and ttl.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

/** Where `pattern` occurs in the arena's memory (it must occur exactly once). */
function positionOf(cache, pattern) {
  const memory = Buffer.from(cache.handle.buffer);
  const at = memory.indexOf(pattern);
  assert.ok(at >= 0, 'the value is in the arena');
  assert.equal(memory.indexOf(pattern, at + 1), -1, 'the value is in the arena once');
  return at;
}

// Copies between shared memory and a Buffer run word by word only when both
// are aligned alike modulo 8 (see record.js): every value must start 8-aligned.
test('every stored value starts 8-byte aligned, whatever its key length, key kind and ttl', () => {
  const cache = new SharedCache({ memoryBytes: MiB, shards: 1 });
  let n = 0;
  for (let keyLength = 0; keyLength <= 20; keyLength++) {
    for (const ttl of [0, 60_000]) {
      for (const kind of ['string', 'bytes']) {
        const value = Buffer.from(`first value ${String(n).padStart(4, '0')} here`);
        const key = kind === 'string' ? 'k'.repeat(keyLength) : Buffer.alloc(keyLength, 7);
        cache.set(key, value, { ttl });
        assert.equal(positionOf(cache, value) % 8, 0, `${kind} key of ${keyLength} bytes, ttl ${ttl}`);
        assert.deepEqual(cache.get(key), value);
        // A rewrite in place stays where it was.
        const again = Buffer.from(`later value ${String(n++).padStart(4, '0')} here`);
        cache.set(key, again, { ttl });
        assert.equal(positionOf(cache, again) % 8, 0, `${kind} key of ${keyLength} bytes, ttl ${ttl}, rewritten`);
        cache.delete(key);
      }
    }
  }
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

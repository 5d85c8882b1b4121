// close() is idempotent; afterwards every call of that instance throws
// ERR_CACHE_CLOSED while other instances of the same cache keep working.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

test('after close(), every call throws ERR_CACHE_CLOSED; other instances keep working', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const other = SharedCache.attach(cache.handle);
  cache.set('k', 1);
  assert.equal(cache.closed, false);
  cache.close();
  cache.close(); // idempotent
  assert.equal(cache.closed, true);
  const closed = { name: 'ArenaCacheError', code: 'ERR_CACHE_CLOSED', message: 'the cache is closed: close() was called on this instance' };
  for (const call of [
    () => cache.get('k'),
    () => cache.set('k', 2),
    () => cache.has('k'),
    () => cache.delete('k'),
    () => cache.clear(),
    () => cache.size,
    () => cache.stats(),
    () => cache.verify(),
    () => [...cache.keys()],
    () => [...cache.entries()],
    () => cache.startLatencySampling(),
  ]) {
    assert.throws(call, closed);
  }
  await assert.rejects(cache.fetch('k', () => 1), closed);
  assert.equal(other.get('k'), 1);
});

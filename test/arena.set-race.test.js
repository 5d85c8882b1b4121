// A set looks its key up before it takes the shard's lock: when another
// writer moved, deleted, or deleted and re-set the entry in between, the set
// looks the key up again and stores the right value.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { Arena } from '../lib/arena/entries/arena.js';
import { recordSize, VALUE_RAW } from '../lib/arena/entries/record.js';
import { KeyEncoder } from '../lib/cache/key-encoder.js';
import { MiB } from './helpers/units.js';

/** arena.set() of `key` to the Buffer `value`, as SharedCache#set would call it. */
function arenaSet(arena, keys, key, value) {
  keys.encode(key);
  arena.set(keys, { kind: VALUE_RAW, payload: value, length: value.length, expiresAt: 0, staleAt: 0, size: recordSize(keys.length, value.length, 0) });
}

// A set looks its key up before it takes the shard's lock (the lookup's cache
// misses then stay out of the critical section). Another writer may change
// the shard in between: the lookup must then be taken again, not trusted.
test('a set whose lookup another writer overtook before it took the lock looks the key up again', () => {
  const cases = {
    // The entry moved: a new version of another size was written elsewhere.
    moved: (other, keys) => arenaSet(other, keys, 'k', Buffer.alloc(200, 2)),
    // The entry went away and came back: deleted, then set again elsewhere.
    'deleted and set again': (other, keys) => {
      keys.encode('k');
      other.delete(keys);
      arenaSet(other, keys, 'filler', Buffer.alloc(64, 3));
      arenaSet(other, keys, 'k', Buffer.alloc(64, 4));
    },
    // The entry went away: a set of a key the lookup found must insert it.
    deleted: (other, keys) => {
      keys.encode('k');
      other.delete(keys);
    },
  };
  for (const [name, overtake] of Object.entries(cases)) {
    const cache = new SharedCache({ memoryBytes: MiB, shards: 1 });
    cache.set('k', Buffer.alloc(64, 1));
    const arena = Arena.attach(cache.handle.buffer);
    const other = Arena.attach(cache.handle.buffer);
    const keys = new KeyEncoder(arena.header.maxKeyBytes, arena.hashStartFor(0), arena.hashStartFor(1));
    const otherKeys = new KeyEncoder(arena.header.maxKeyBytes, arena.hashStartFor(0), arena.hashStartFor(1));
    const acquire = arena.lock.acquire.bind(arena.lock);
    let overtaken = 0;
    arena.lock.acquire = (shard) => {
      if (overtaken++ === 0) overtake(other, otherKeys);
      return acquire(shard);
    };
    arenaSet(arena, keys, 'k', Buffer.alloc(64, 9));
    assert.equal(overtaken, 1, name);
    assert.deepEqual(cache.get('k'), Buffer.alloc(64, 9), name);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] }, name);
  }
});

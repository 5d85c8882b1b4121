// Deterministic crash points: a writer "dies" after each single write of each
// mutation, and the shard is rebuilt as a takeover would (lib/arena/entries/rebuild.js).
//
// Every write a mutation makes to the shard's memory (each element store and
// each bulk copy, fill or string write, in program order) is recorded through
// proxies over the shard's typed arrays. Then, for every prefix of those
// writes, the arena is put back as it was before the mutation, the prefix is
// applied (the state a holder that died right there leaves), the shard is
// rebuilt, and the cache is checked against what it held before and after
// the mutation: verify() passes, every other entry is there with its value
// (unless the mutation itself evicted it), and the key being written holds
// its old value, its new one, or nothing: never anything else. (Increments
// of numbers, which must keep one or the other: arena.increment-crash-points.test.js.)
import assert from 'node:assert/strict';
import test from 'node:test';
import { CHECKSUM_BYTES, HAS_TTL, keyWord, RECORD_HEADER_BYTES, recordSize, TTL_BYTES, VALUE_RAW } from '../lib/arena/entries/record.js';
import { M_MOVE_FROM } from '../lib/arena/common/shard-meta.js';
import { FoundEntry } from '../lib/arena/entries/record-stamp.js';
import { SHARE_MAX, SHARE_MIN } from '../lib/arena/entries/ghost-table.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';
import { crashPointCache, crashPoints, recordWrites, replay } from './helpers/crash-points.js';

const OPS = STRESS ? 200 : 40;
const KEYS = 120;
/** Crash points tried per mutation at most, evenly spread (plus the first and last 16). */
const MAX_POINTS = STRESS ? 400 : 60;

/** The string key of the record at `offset` in the arena bytes `memory` (a snapshot). */
function keyAt(memory, shard, offset) {
  const start = shard.u8.byteOffset + offset;
  const view = new DataView(memory.buffer, memory.byteOffset);
  const keyLength = view.getUint32(start, true) >>> 16;
  const keyStart = start + RECORD_HEADER_BYTES + ((view.getUint32(start, true) & HAS_TTL) !== 0 ? TTL_BYTES : 0);
  return Buffer.from(memory.subarray(keyStart, keyStart + keyLength)).toString();
}

/** Value sizes (above 16 bytes) of the fill and of the mutations: large ones make memory bind, small ones `max`. */
const LARGE_VALUES = { fill: 16000, op: 24000 };
const SMALL_VALUES = { fill: 200, op: 300 };

// In memory with both policies; a file-backed cache, whose records carry
// checksums; and hybrid bound by `max`, where it adapts its small ring
// (ghost-table.js) and every write to its ghosts and state is a crash point.
const CASES = [
  { policy: 'hybrid', file: false, values: LARGE_VALUES },
  { policy: 'lru', file: false, values: LARGE_VALUES },
  { policy: 'hybrid', file: true, values: LARGE_VALUES },
  { policy: 'hybrid', file: false, values: SMALL_VALUES, max: 60 },
];
for (const { policy, file, values, max } of CASES) {
  const what = `${policy}${file ? ', file-backed with record checksums' : ''}${max ? `, max ${max} (the adaptive small ring)` : ''}`;
  test(`${what}: a writer dying after any write of a set, replacement, delete, eviction or clear costs only that write`, { timeout: 600_000, skip: file && !nativeAvailable && 'native addon unavailable' }, (t) => {
    const seed = testSeed();
    const random = seededRandom(seed);
    // Small: rings wrap, records are relocated and promoted, entries evicted.
    const { cache, shard, keys, memory } = crashPointCache(t, file, { memoryBytes: MiB, policy, ...(max ? { max } : {}) });
    const universe = Array.from({ length: KEYS }, (_, i) => `k${i}`);
    const contents = () => new Map(universe.flatMap((key) => {
      const value = cache.get(key);
      return value === undefined ? [] : [[key, value]];
    }));
    const mutations = {
      set(key, value) {
        keys.encode(key);
        const stored = value.length + (shard.checksums ? CHECKSUM_BYTES : 0);
        shard.store(keys, { kind: VALUE_RAW, payload: value, length: value.length, expiresAt: 0, staleAt: 0, size: recordSize(keys.length, stored, 0) });
      },
      delete(key) {
        keys.encode(key);
        const found = new FoundEntry();
        const slot = shard.findSlot(keys.bytes, keys.length, keyWord(keys.length, keys.kind), keys.hash, found);
        if (slot >= 0) shard.removeEntry(slot, found.offset);
      },
      clear() {
        shard.reset();
      },
    };
    // Full from the start: evictions, wrapped rings, and (hybrid) a small ring in use.
    for (const key of universe) cache.set(key, Buffer.alloc(16 + random.int(values.fill), 1));
    // With max, read-through traffic first: the share has moved, and both rings have ghosts.
    if (max) {
      for (let i = 0; i < 3000; i++) {
        const key = universe[random.int(KEYS)];
        if (cache.get(key) === undefined) cache.set(key, Buffer.alloc(16 + random.int(200), 1));
      }
    }
    let tried = 0;
    for (let op = 0; op < OPS; op++) {
      const key = universe[random.int(KEYS)];
      const roll = random();
      // One clear halfway at least: its crash points are the ones a half-done clear would show.
      const kind = op === OPS >> 1 || roll > 0.97 ? 'clear' : roll < 0.75 ? 'set' : 'delete';
      // Same sizes now and then: rewrites in place.
      const value = Buffer.alloc(random() < 0.3 ? 200 : 16 + random.int(values.op), op);
      const before = contents();
      const snapshot = memory.slice();
      const log = [];
      const stop = recordWrites(shard, log);
      try {
        mutations[kind](key, value);
      } finally {
        var arrays = stop();
      }
      const after = contents();
      const where = `SEED=${seed} op ${op} (${kind} ${key}, ${value.length} B, ${log.length} writes)`;
      for (const k of crashPoints(log.length, MAX_POINTS)) {
        memory.set(snapshot);
        replay(arrays, log.slice(0, k));
        // A relocation onto itself under way: its record may be dropped, as if the write had evicted it.
        const moving = shard.meta[M_MOVE_FROM] === 0 ? null : keyAt(snapshot, shard, shard.meta[M_MOVE_FROM] - 1);
        shard.recoverFromDeadHolder();
        tried++;
        const at = `${where}, died after write ${k}`;
        assert.deepEqual(cache.verify(), { ok: true, problems: [] }, at);
        if (max) {
          const share = shard.ghosts.share;
          assert.ok(share >= SHARE_MIN && share <= SHARE_MAX, `${at}: share ${share} after the rebuild`);
          assert.ok(shard.count <= max, `${at}: ${shard.count} entries`);
        }
        const now = contents();
        if (kind === 'clear') {
          // Wholly done, or not at all.
          const whole = [...before].every(([other, old]) => now.get(other)?.equals(old));
          assert.ok(now.size === 0 || (whole && now.size === before.size), `${at}: a clear half done (${now.size} of ${before.size} entries left)`);
          continue;
        }
        for (const [other, old] of before) {
          if (other === key) continue;
          const got = now.get(other);
          // Entries the mutation itself evicted may be gone; any other must be there, unchanged.
          if (after.has(other) && other !== moving) assert.ok(got !== undefined && got.equals(old), `${at}: ${other} lost or changed`);
          else assert.ok(got === undefined || got.equals(old), `${at}: evicted ${other} changed`);
        }
        for (const other of now.keys()) assert.ok(before.has(other) || other === key, `${at}: ${other} appeared`);
        const got = now.get(key);
        const allowed = [before.get(key), after.get(key)];
        assert.ok(got === undefined || allowed.some((value) => value !== undefined && got.equals(value)), `${at}: ${key} holds neither its old nor its new value`);
      }
      // Go on from the completed mutation.
      memory.set(snapshot);
      replay(arrays, log);
      assert.deepEqual(contents(), after, where);
    }
    t.diagnostic(`${tried} crash points over ${OPS} mutations`);
  assert.ok(tried > OPS, `${tried} crash points`);
  });
}

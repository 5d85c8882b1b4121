// String values all ASCII carry their record's ASCII_TEXT mark and are read
// with one latin1Slice straight from shared memory; every other string is
// decoded from a private copy of its UTF-8 bytes. Values of every kind of
// text (ASCII, Latin-1, other BMP, astral, lone surrogates, empty) read back
// as set, through get(), info(), entries() and another thread; only ASCII
// ones are marked; a record written unmarked (as earlier versions wrote
// ASCII) reads the same; verify() flags the mark on a value that is not a
// string; reads racing a writer that rewrites values in place (ASCII over
// other text and back) are always whole; after a rebuild, or a reopen
// after a writer's SIGKILL, every string is whole and keeps its mark; and
// a marked length no string can have reads as torn rather than throwing.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { Arena } from '../lib/arena/entries/arena.js';
import { FoundEntry } from '../lib/arena/entries/record-stamp.js';
import { ASCII_TEXT, VALUE_UTF8 } from '../lib/arena/entries/record.js';
import { KeyEncoder } from '../lib/cache/key-encoder.js';
import { arenaPath, killProcess } from './helpers/arena-files.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { TEXT_KINDS, textProblem, textValue, wellFormed } from './helpers/text-kinds.js';
import { MiB } from './helpers/units.js';

/** Every UTF-16 unit below 0x80 (counted here, not as the cache tells). */
function isAscii(text) {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** The arena of `cache` seen from the test, and the record word 0 of a key's live entry (null: none). */
function recordWords(cache) {
  const arena = Arena.attach(cache.handle.buffer);
  const keys = new KeyEncoder(arena.header.maxKeyBytes, arena.stringHashStart, arena.bytesHashStart);
  const found = new FoundEntry();
  return {
    arena,
    wordOf(key) {
      keys.encode(key);
      if (arena.peek(keys, true, found) === undefined) return null;
      return found.shard.u32[found.offset >>> 2];
    },
  };
}

/** Edge cases, then `count` seeded textValue()s of random kinds and lengths. */
function someTexts(random, count) {
  const texts = ['', 'a', '\x00', '\x7f', '\x80', '\xff', 'caf\xe9', '\ud800', '\udfff', 'a\ud800b', '\u{10000}', '\u{10ffff}', '\ufffd', 'x'.repeat(4096), '\xe9'.repeat(2048)];
  for (let i = 0; i < count; i++) texts.push(textValue(i, random.int(TEXT_KINDS.length), 16 + random.int(random() < 0.2 ? 70_000 : 5000)));
  return texts;
}

test('strings of every kind read back as set; only all-ASCII ones carry the ASCII mark', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const cache = new SharedCache({ memoryBytes: 64 * MiB, shards: 4 });
  const other = SharedCache.attach(cache.handle, { nearCache: 0 });
  const records = recordWords(cache);
  const texts = someTexts(random, STRESS ? 3000 : 400);
  for (const [i, text] of texts.entries()) {
    const key = `t${i}`;
    // Set twice: a value of the same length rewrites its record in place.
    cache.set(key, texts[random.int(texts.length)]);
    cache.set(key, text);
    const expected = wellFormed(text);
    const message = `text ${i} ${JSON.stringify(text.slice(0, 16))} (SEED=${seed})`;
    assert.equal(other.get(key), expected, message);
    assert.equal(cache.get(key), expected, message);
    assert.equal(cache.info(key)?.value, expected, message);
    const word = records.wordOf(key);
    assert.equal((word & ASCII_TEXT) !== 0, isAscii(text), message);
    assert.equal((word >>> 4) & 3, VALUE_UTF8, message);
  }
  const listed = new Map(other.entries());
  for (const [i, text] of texts.entries()) assert.equal(listed.get(`t${i}`), wellFormed(text), `entries(): text ${i} (SEED=${seed})`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  other.close();
  cache.close();
});

test('a string record without the ASCII mark (as earlier versions wrote ASCII) reads the same, and a rewrite marks it', () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB, shards: 1, nearCache: 0 });
  const records = recordWords(cache);
  const text = textValue(1, TEXT_KINDS.indexOf('ascii'), 3000);
  cache.set('k', text);
  const { arena } = records;
  const shard = arena.shards[0];
  const word = records.wordOf('k');
  assert.notEqual(word & ASCII_TEXT, 0);
  // Under the lock, as a writer would change it (readers retry around it).
  const held = arena.lock.acquire(shard);
  const keys = new KeyEncoder(arena.header.maxKeyBytes, arena.stringHashStart, arena.bytesHashStart);
  keys.encode('k');
  const found = new FoundEntry();
  arena.peek(keys, false, found);
  shard.u32[found.offset >>> 2] = word & ~ASCII_TEXT;
  arena.lock.release(shard, held);
  assert.equal(cache.get('k'), text);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  cache.set('k', textValue(2, TEXT_KINDS.indexOf('ascii'), 3000));
  assert.notEqual(records.wordOf('k') & ASCII_TEXT, 0);
  assert.equal(cache.get('k'), textValue(2, TEXT_KINDS.indexOf('ascii'), 3000));
  cache.close();
});

test('verify() reports the ASCII mark on a value that is not a string', () => {
  for (const value of [Buffer.from('ascii bytes'), { an: 'object' }]) {
    const cache = new SharedCache({ memoryBytes: 4 * MiB, shards: 1, nearCache: 0 });
    const records = recordWords(cache);
    cache.set('k', value);
    const word = records.wordOf('k');
    assert.equal(word & ASCII_TEXT, 0, 'only strings are marked');
    const keys = new KeyEncoder(records.arena.header.maxKeyBytes, records.arena.stringHashStart, records.arena.bytesHashStart);
    keys.encode('k');
    const found = new FoundEntry();
    records.arena.peek(keys, false, found);
    found.shard.u32[found.offset >>> 2] = word | ASCII_TEXT;
    const { ok, problems } = cache.verify();
    assert.equal(ok, false);
    assert.match(problems.join('\n'), /live record at \d+ marks a value that is not a string as ASCII/);
    cache.close();
  }
});

test('reads racing a thread that rewrites values in place (ASCII over other text and back) are always whole', async () => {
  const seed = testSeed();
  const cache = new SharedCache({ memoryBytes: 16 * MiB, shards: 2, nearCache: 0 });
  // Lengths from a few words to past the word-by-word copy of short UTF-8 values (128 bytes).
  const keys = [16, 40, 64, 130, 1000, 4096, 4096, 9000].map((bytes, i) => ({ key: `k${i}`, bytes }));
  const stop = new Int32Array(new SharedArrayBuffer(4));
  const writer = new Worker(new URL('./fixtures/text-kinds-writer.js', import.meta.url), { workerData: { handle: cache.handle, stop: stop.buffer, keys, seed } });
  await once(writer, 'message');
  const seen = new Map();
  let reads = 0;
  const until = Date.now() + (STRESS ? 10_000 : 1000);
  try {
    while (Date.now() < until) {
      for (const { key } of keys) {
        const value = cache.get(key);
        const problem = textProblem(value);
        assert.equal(problem, null, `${key} (SEED=${seed})`);
        const kind = TEXT_KINDS[Number(/^\d+\.(\d)/.exec(value)[1])];
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
        reads++;
      }
    }
  } finally {
    Atomics.store(stop, 0, 1);
    await once(writer, 'exit');
  }
  assert.ok(reads > 500, `${reads} reads`);
  assert.ok(seen.get('ascii') > 0 && seen.size > 3, `kinds read: ${JSON.stringify([...seen])} (SEED=${seed})`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  cache.close();
});

test('a rebuilt shard, and a file reopened after a writer died of SIGKILL, hold whole strings with their marks', { skip: !nativeAvailable && 'native addon unavailable' }, async (t) => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const path = arenaPath(t);
  const keys = Array.from({ length: 24 }, (_, i) => ({ key: `k${i}`, bytes: [24, 200, 4096, 20_000][i % 4] }));
  // A rebuild of every shard, as after a dead holder (records with checksums: a file).
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, shards: 2, nearCache: 0 });
  for (const [i, { key, bytes }] of keys.entries()) cache.set(key, textValue(i, i % TEXT_KINDS.length, bytes));
  const records = recordWords(cache);
  for (const shard of records.arena.shards) {
    const held = records.arena.lock.acquire(shard);
    shard.recoverFromDeadHolder();
    records.arena.lock.release(shard, held);
  }
  for (const [i, { key, bytes }] of keys.entries()) {
    const text = textValue(i, i % TEXT_KINDS.length, bytes);
    assert.equal(cache.get(key), wellFormed(text));
    assert.equal((records.wordOf(key) & ASCII_TEXT) !== 0, isAscii(text), key);
  }
  assert.equal(cache.stats().lostEntries, 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  cache.close();
  // Writers killed mid-write; each reopen (the sole opener checks every shard) serves whole values or none.
  const fixture = new URL('./fixtures/text-kinds-writer.js', import.meta.url);
  for (let kill = 0; kill < (STRESS ? 60 : 6); kill++) {
    const child = fork(fixture, [JSON.stringify({ path, keys, seed: seed + kill })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    await once(child, 'message');
    await sleep(random.int(30));
    await killProcess(child);
    const reopened = SharedCache.open(path, { nearCache: 0 });
    const marks = recordWords(reopened);
    for (const { key } of keys) {
      const value = reopened.get(key);
      if (value === undefined) continue;
      assert.equal(textProblem(value), null, `${key} after kill ${kill} (SEED=${seed})`);
      assert.equal((marks.wordOf(key) & ASCII_TEXT) !== 0, isAscii(value), `${key}'s mark after kill ${kill} (SEED=${seed})`);
    }
    assert.deepEqual(reopened.verify(), { ok: true, problems: [] });
    reopened.close();
  }
});

test('an ASCII value length past the longest string V8 makes reads as torn (a miss), not as a throw', () => {
  // Only a torn read or damage gives such a length; the region must be larger for it to pass the bounds check.
  const cache = new SharedCache({ memoryBytes: 640 * MiB, shards: 1, nearCache: 0 });
  const records = recordWords(cache);
  cache.set('k', 'ascii');
  const keys = new KeyEncoder(records.arena.header.maxKeyBytes, records.arena.stringHashStart, records.arena.bytesHashStart);
  keys.encode('k');
  const found = new FoundEntry();
  records.arena.peek(keys, false, found);
  found.shard.u32[(found.offset >>> 2) + 1] = 2 ** 29;
  assert.equal(cache.get('k'), undefined);
  cache.close();
});

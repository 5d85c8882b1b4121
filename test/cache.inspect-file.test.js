// SharedCache.inspect(path) reads a cache file without opening it as a
// cache: the file is opened O_RDONLY and mapped read-only, no lock is
// taken, no thread slot claimed, no byte written (its hash is the same after
// stats, keys, entries and verify); on a file another process hammers, no
// writer ever waits for a lock because of it, no damage is reported for a
// consistent file (busy shards are "unchecked", never problems) and it
// claims nothing in the file; an inspector made while the file was idle
// still knows a live lock holder that came later; values of any codec are listed; and its
// argument and file errors have their class, code and whole message.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { Arena } from '../lib/arena/entries/arena.js';
import { M_COUNT } from '../lib/arena/common/shard-meta.js';
import { ArenaCacheError, SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath, killProcess, startProcess, stopProcess } from './helpers/arena-files.js';
import { jsonCodec } from './helpers/codecs.js';
import { tempDir } from './helpers/fs-tree.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'the native addon is not available';

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The descriptors of this process open on `file`, with their open flags (octal, from /proc/self/fdinfo). */
function descriptorsOf(file) {
  const found = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    let target;
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue; // closed meanwhile (the readdir's own descriptor)
    }
    if (target !== file) continue;
    const flags = Number.parseInt(/^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))[1], 8);
    found.push({ fd: Number(fd), flags });
  }
  return found;
}

/** The permissions of this process's mappings of `file` (e.g. 'r--s'). */
function mappingsOf(file) {
  return readFileSync('/proc/self/maps', 'utf8')
    .split('\n')
    .filter((line) => line.endsWith(` ${file}`))
    .map((line) => line.split(/\s+/)[1]);
}

test('an idle file: stats, keys, entries and verify read it as it is and change no byte', { skip }, (t) => {
  const file = arenaPath(t, 'inspect-api');
  const cache = SharedCache.open(file, { memoryBytes: 2 * MiB, shards: 2 });
  cache.set('text', 'plain');
  cache.set('obj', { n: 1, list: [1, 2] });
  cache.set(Buffer.from([7]), Buffer.from([1, 2, 3]));
  cache.get('text');
  cache.get('missing');
  cache.close();
  const before = sha256(file);
  const inspector = SharedCache.inspect(file);
  t.after(() => inspector.close());
  assert.equal(inspector.path, file);
  assert.equal(inspector.codecName, 'msgpackr-shared');
  assert.equal(inspector.decodes, true);
  const stats = inspector.stats();
  assert.equal(stats.entries, 3);
  assert.equal(stats.sets, 3);
  assert.equal(stats.hits, 1);
  assert.equal(stats.misses, 1);
  assert.equal(stats.threads, 0, 'nobody uses the file; the inspector is no user');
  assert.deepEqual(Object.keys(stats), Object.keys(new SharedCache({ memoryBytes: MiB }).stats()));
  assert.deepEqual(inspector.verify(), { ok: true, problems: [], unchecked: [] });
  const { keys, unchecked } = inspector.keys();
  assert.deepEqual(unchecked, []);
  assert.deepEqual(keys.map(String).sort(), ['\u0007', 'obj', 'text']);
  const entries = inspector.entries();
  const byKey = Object.fromEntries(entries.entries.map(({ key, ...rest }) => [typeof key === 'string' ? key : `hex:${key.toString('hex')}`, rest]));
  assert.deepEqual(byKey, {
    text: { valueKind: 'string', value: 'plain' },
    obj: { valueKind: 'codec', value: { n: 1, list: [1, 2] } },
    'hex:07': { valueKind: 'buffer', value: Buffer.from([1, 2, 3]) },
  });
  // Inspected again and again: not a counter moves, not a byte changes.
  for (let i = 0; i < 3; i++) {
    inspector.stats();
    inspector.verify();
    inspector.entries();
  }
  assert.deepEqual(inspector.stats(), stats);
  assert.equal(sha256(file), before);
  // Read-only all the way down: the descriptor and the mapping.
  assert.deepEqual(
    descriptorsOf(file).map(({ flags }) => flags & 3),
    [0],
    'one descriptor, O_RDONLY',
  );
  assert.deepEqual(mappingsOf(file), ['r--s']);
  inspector.close();
  inspector.close();
  assert.deepEqual(descriptorsOf(file), [], 'close() gives the descriptor back');
  assert.throws(() => inspector.stats(), { name: 'ArenaCacheError', code: 'ERR_CACHE_CLOSED', message: 'the inspector is closed: close() was called on it' });
});

test('a damaged file: verify reports the damage as found, and the next open() still repairs it', { skip }, (t) => {
  const file = arenaPath(t, 'inspect-damaged');
  const cache = SharedCache.open(file, { memoryBytes: 2 * MiB, shards: 1 });
  cache.set('a', 'first');
  Arena.attach(cache.handle.buffer).shards[0].meta[M_COUNT] = 5;
  cache.close();
  const before = sha256(file);
  const inspector = SharedCache.inspect(file);
  const found = inspector.verify();
  inspector.close();
  assert.equal(found.ok, false);
  assert.deepEqual(found.problems, ['shard 0: 1 slots are used, meta counts 5']);
  assert.equal(sha256(file), before);
  // Damage done through the mapping, then a clean close: only a check on opening finds it.
  const opened = SharedCache.open(file, { verifyOnOpen: true });
  assert.equal(opened.stats().shardRepairs, 1, 'the recovery the inspection left to the next opener');
  opened.close();
});

test('a file another process hammers: no lock waited for, no false damage, nothing claimed, read-only', { skip }, async (t) => {
  const file = arenaPath(t, 'inspect-live');
  const seeded = SharedCache.open(file, { memoryBytes: 4 * MiB, shards: 4 });
  seeded.close();
  const keys = Array.from({ length: 300 }, (_, i) => `k${i}`);
  const { child } = await startProcess({ mode: 'hammer', path: file, keys, seed: 7, writer: 1, maxLength: 400 });
  let stopped = false;
  t.after(() => stopped || child.kill('SIGKILL'));
  const inspector = SharedCache.inspect(file);
  t.after(() => inspector.close());
  const rounds = 20;
  let checked = 0;
  let unchecked = 0;
  for (let round = 0; round < rounds; round++) {
    const result = inspector.verify();
    assert.deepEqual(result.problems, [], `round ${round}: a consistent file has no problems`);
    assert.equal(result.ok, true);
    for (const { shard, reason } of result.unchecked) {
      assert.ok(shard >= 0 && shard < 4);
      assert.match(reason, /^(it changed under every read \(writers kept it busy\)|its lock is held by a live thread of process \d+)$/);
    }
    unchecked += result.unchecked.length;
    checked += 4 - result.unchecked.length;
    const listed = inspector.keys();
    for (const key of listed.keys) assert.ok(keys.includes(key), `a key the writer wrote (${key})`);
    assert.equal(inspector.stats().threads, 1, "the hammering process's one thread; the inspector claims no slot");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  t.diagnostic(`shards checked ${checked}, busy (not checked) ${unchecked}`);
  assert.ok(checked > 0, 'some shards were checked while the other process wrote');
  assert.deepEqual(
    descriptorsOf(file).map(({ flags }) => flags & 3),
    [0],
  );
  assert.deepEqual(mappingsOf(file), ['r--s']);
  const report = await stopProcess(child);
  stopped = true;
  t.diagnostic(`the writer's slowest operation while inspected: ${report.counts.slowestMs.toFixed(2)} ms`);
  assert.equal(report.stats.lockWaits, 0, 'the writer never found a lock held: the inspector takes none');
  assert.equal(report.stats.lockTimeouts, 0);
  assert.equal(report.counts.torn + report.counts.foreign, 0);
  assert.deepEqual(report.verify, { ok: true, problems: [] });
});

test('an inspector made while the file was idle sees the processes that open it later', { skip }, async (t) => {
  const file = arenaPath(t, 'inspect-later');
  SharedCache.open(file, { memoryBytes: 2 * MiB, shards: 2 }).close();
  const inspector = SharedCache.inspect(file);
  t.after(() => inspector.close());
  assert.equal(inspector.stats().threads, 0);
  const { child } = await startProcess({ mode: 'hold-lock', path: file, shard: 1 });
  t.after(() => killProcess(child));
  assert.equal(inspector.stats().threads, 1);
  // A live holder: not checked, never taken for a dead one.
  assert.deepEqual(inspector.verify(), {
    ok: true,
    problems: [],
    unchecked: [{ shard: 1, reason: `its lock is held by a live thread of process ${child.pid}` }],
  });
  assert.deepEqual(inspector.keys(), { keys: [], unchecked: [{ shard: 1, reason: `its lock is held by a live thread of process ${child.pid}` }] });
});

test('a file of another codec: values as that codec\'s bytes, or decoded with options.codec', { skip }, (t) => {
  const file = arenaPath(t, 'inspect-codec');
  const cache = SharedCache.open(file, { memoryBytes: 2 * MiB, codec: jsonCodec });
  cache.set('obj', { a: 1 });
  cache.close();
  const bare = SharedCache.inspect(file);
  t.after(() => bare.close());
  assert.equal(bare.codecName, 'json');
  assert.equal(bare.decodes, false);
  assert.deepEqual(bare.entries().entries, [{ key: 'obj', valueKind: 'encoded', value: Buffer.from('{"a":1}'), codec: 'json' }]);
  const decoding = SharedCache.inspect(file, { codec: jsonCodec });
  t.after(() => decoding.close());
  assert.deepEqual(decoding.entries().entries, [{ key: 'obj', valueKind: 'codec', value: { a: 1 } }]);
  const refusing = { name: 'json', encode: () => Buffer.alloc(0), decode: () => { throw new Error('no'); } };
  const failing = SharedCache.inspect(file, { codec: refusing });
  t.after(() => failing.close());
  assert.deepEqual(failing.entries().entries, [
    { key: 'obj', valueKind: 'encoded', value: Buffer.from('{"a":1}'), codec: 'json', error: 'the json codec could not decode it: no' },
  ]);
  assert.throws(() => SharedCache.inspect(file, { codec: { ...jsonCodec, name: 'other' } }), {
    name: 'ArenaCacheError',
    code: 'ERR_CODEC_MISMATCH',
    message: 'the cache was created with the codec "json" but inspect() was given "other"; pass the same codec in options.codec, or none',
  });
});

test('errors: arguments, a missing file, another kind of file, a symlink, a file cut short', { skip }, (t) => {
  assert.throws(() => SharedCache.inspect(5), { name: 'TypeError', message: 'path must be a string (got 5)' });
  assert.throws(() => SharedCache.inspect(''), { name: 'RangeError', message: 'path must be a non-empty file path without NUL characters (got "")' });
  const file = arenaPath(t, 'inspect-errors');
  assert.throws(() => SharedCache.inspect(file, 'json'), { name: 'TypeError', message: 'options must be an object (got "json")' });
  assert.throws(() => SharedCache.inspect(file, { readOnly: true }), { name: 'TypeError', message: 'options.readOnly is not a known option; valid options are codec' });
  assert.throws(() => SharedCache.inspect(file, { codec: 5 }), { name: 'TypeError', message: 'options.codec must be an object with name, encode and decode (got 5)' });
  const missing = (error) => error instanceof ArenaCacheError && error.code === 'ERR_ARENA_FILE' && error.message === `arena file ${file} does not exist` && error.cause?.code === 'ENOENT';
  assert.throws(() => SharedCache.inspect(file), missing);
  const dir = tempDir(t, 'inspect-errors');
  const text = path.join(dir, 'notes.txt');
  writeFileSync(text, 'hello world\n');
  assert.throws(() => SharedCache.inspect(text), {
    name: 'ArenaCacheError',
    code: 'ERR_ARENA_NOT_ARENA',
    message: `arena file ${text} is not a SharedCache arena (it starts with 0x6c6c6568, not the magic 0x434e5241)`,
  });
  const empty = path.join(dir, 'empty');
  writeFileSync(empty, '');
  assert.throws(() => SharedCache.inspect(empty), { name: 'ArenaCacheError', code: 'ERR_ARENA_FILE', message: `arena file ${empty} holds no arena yet` });
  const real = arenaPath(t, 'inspect-real');
  SharedCache.open(real, { memoryBytes: 2 * MiB }).close();
  const link = path.join(dir, 'link');
  symlinkSync(real, link);
  assert.throws(() => SharedCache.inspect(link), {
    name: 'ArenaCacheError',
    code: 'ERR_ARENA_FILE',
    message: `arena file ${link} is a symbolic link; arena files are opened without following links`,
  });
  const short = path.join(dir, 'short');
  writeFileSync(short, readFileSync(real).subarray(0, 100));
  assert.throws(() => SharedCache.inspect(short), { name: 'ArenaCacheError', code: 'ERR_ARENA_TRUNCATED', message: `arena file ${short} is 100 bytes, too small for an arena header` });
  assert.deepEqual(descriptorsOf(short), [], 'a failed inspect() leaves no descriptor open');
});

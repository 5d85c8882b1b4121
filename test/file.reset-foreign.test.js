// `reset: true` replaces arenas, never other files: an existing non-empty
// file that does not start with the arena's magic is refused with
// ERR_ARENA_NOT_ARENA whatever `reset` says (and no message suggests
// `reset` for it), a file of another user is refused before its content is
// looked at, and the command line's `cache reset` refuses the same files
// with the same codes. A damaged arena (its magic there) can still be reset,
// and an empty file, or one whose creation never finished, becomes an arena.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chownSync, closeSync, openSync, readFileSync, statSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { headerFieldIndex, MAGIC } from '../lib/arena/common/layout.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { BlockStore, SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
const isRoot = process.getuid?.() === 0;
const bin = fileURLToPath(new URL('../bin/arenacache.js', import.meta.url));

/** Runs `arenacache cache <command> <file> --json`: its exit code and parsed stdout. */
function cliJson(command, file) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, 'cache', command, file, '--json'], { encoding: 'utf8' }, (error, stdout) => {
      if (error !== null && typeof error.code !== 'number') reject(error);
      else resolve({ code: error === null ? 0 : error.code, value: JSON.parse(stdout) });
    });
  });
}

/** `path`'s bytes, and an mtime far enough in the past that any write would change it. */
function freeze(path) {
  const past = new Date('2001-02-03T04:05:06Z');
  utimesSync(path, past, past);
  const stat = statSync(path);
  return { bytes: readFileSync(path), mtimeMs: stat.mtimeMs, size: stat.size, ino: stat.ino };
}

function assertUnchanged(path, before, what) {
  const stat = statSync(path);
  assert.equal(stat.ino, before.ino, `${what}: the same file is still there`);
  assert.equal(stat.size, before.size, `${what}: its size is unchanged`);
  assert.equal(stat.mtimeMs, before.mtimeMs, `${what}: its mtime is unchanged`);
  assert.ok(readFileSync(path).equals(before.bytes), `${what}: its bytes are unchanged`);
}

/** Every way of opening `path` that could replace it, each refused with `code` (and without suggesting reset). */
function assertRefused(path, code) {
  const attempts = [
    ['open()', () => SharedCache.open(path)],
    ['open() with memoryBytes', () => SharedCache.open(path, { memoryBytes: MiB })],
    ['open() with reset: true', () => SharedCache.open(path, { memoryBytes: MiB, reset: true })],
    ['BlockStore.open() with reset: true', () => BlockStore.open(path, { memoryBytes: MiB, reset: true })],
  ];
  for (const [what, attempt] of attempts) {
    assert.throws(attempt, (error) => {
      assert.equal(error.name, 'ArenaCacheError', what);
      assert.equal(error.code, code, `${what}: ${error.message}`);
      assert.doesNotMatch(error.message, /reset/, `${what}: the message must not suggest reset for a file that is not an arena`);
      return true;
    });
  }
}

test('reset: true on a JSON file is refused with ERR_ARENA_NOT_ARENA, and the file is unchanged', { skip }, async (t) => {
  const path = arenaPath(t, 'config.json');
  writeFileSync(path, `${JSON.stringify({ database: { host: 'db', port: 5432 }, features: ['a', 'b'] }, null, 2)}\n`, { mode: 0o600 });
  const before = freeze(path);
  assertRefused(path, 'ERR_ARENA_NOT_ARENA');
  assert.throws(() => SharedCache.open(path, { memoryBytes: MiB, reset: true }), {
    code: 'ERR_ARENA_NOT_ARENA',
    message: `arena file ${path} is not a SharedCache arena (it starts with 0x20200a7b, not the magic 0x434e5241); open() never overwrites another kind of file: remove it or choose another path`,
  });
  assertUnchanged(path, before, 'the JSON file');
  // The command line's reset refuses it with the same code.
  const cli = await cliJson('reset', path);
  assert.equal(cli.code, 1);
  assert.equal(cli.value.error.code, 'ERR_ARENA_NOT_ARENA');
  assert.doesNotMatch(cli.value.error.message, /reset/);
  assertUnchanged(path, before, 'the JSON file after the command');
});

test('reset: true on a file of another user is refused with ERR_ARENA_PERMISSIONS, and the file is unchanged', { skip: skip || (!isRoot && 'needs root to give a file to another user (uid 65534)') }, async (t) => {
  for (const [name, content] of [
    ['json', `${JSON.stringify({ owner: 'nobody' })}\n`],
    ['arena', null],
  ]) {
    const path = arenaPath(t, `foreign-${name}`);
    if (content === null) SharedCache.open(path, { memoryBytes: MiB }).close();
    else writeFileSync(path, content, { mode: 0o644 });
    chownSync(path, 65534, 65534);
    const before = freeze(path);
    assertRefused(path, 'ERR_ARENA_PERMISSIONS');
    assertUnchanged(path, before, `the ${name} file of user 65534`);
    const cli = await cliJson('reset', path);
    assert.equal(cli.code, 1);
    assert.equal(cli.value.error.code, 'ERR_ARENA_PERMISSIONS');
    assertUnchanged(path, before, `the ${name} file of user 65534 after the command`);
  }
});

test('other files that are not arenas are refused whatever reset says: short ones, a header of zeros, a block store', { skip }, (t) => {
  const tiny = arenaPath(t, 'tiny');
  writeFileSync(tiny, '{}\n', { mode: 0o600 });
  // 4 KiB of zeros then data: a sparse or preallocated file, not an arena whose creation never finished.
  const zeros = arenaPath(t, 'zeros');
  writeFileSync(zeros, Buffer.concat([Buffer.alloc(8192), Buffer.from('data after a hole')]), { mode: 0o600 });
  const store = arenaPath(t, 'blocks');
  BlockStore.open(store, { memoryBytes: MiB }).close();
  for (const path of [tiny, zeros]) {
    const before = freeze(path);
    assertRefused(path, 'ERR_ARENA_NOT_ARENA');
    assertUnchanged(path, before, path);
  }
  const before = freeze(store);
  for (const attempt of [() => SharedCache.open(store, { memoryBytes: MiB, reset: true }), () => SharedCache.open(store)]) {
    assert.throws(attempt, (error) => error.code === 'ERR_ARENA_NOT_ARENA' && !/reset/.test(error.message));
  }
  assertUnchanged(store, before, 'the block store');
  const cache = arenaPath(t, 'cache');
  SharedCache.open(cache, { memoryBytes: MiB }).close();
  const cacheBefore = freeze(cache);
  assert.throws(() => BlockStore.open(cache, { memoryBytes: MiB, reset: true }), (error) => error.code === 'ERR_ARENA_NOT_ARENA' && !/reset/.test(error.message));
  assertUnchanged(cache, cacheBefore, 'the cache file');
});

test('a damaged arena (its magic there) is refused with its code and a hint, and reset: true replaces it', { skip }, (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: MiB });
  cache.set('k', 'v');
  cache.close();
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(8, 0xee), 0, 8, headerFieldIndex('shardCount') * 8);
  closeSync(fd);
  assert.throws(() => SharedCache.open(path), { code: 'ERR_ARENA_CORRUPT', message: /open it with \{ reset: true \} to replace it with a new arena$/ });
  const reset = SharedCache.open(path, { memoryBytes: MiB, reset: true });
  assert.equal(reset.get('k'), undefined);
  reset.set('k', 'new');
  assert.equal(reset.get('k'), 'new');
  reset.close();
  // An arena cut to its first 8 bytes still has its magic: cut short, and resettable.
  const cut = arenaPath(t, 'cut');
  SharedCache.open(cut, { memoryBytes: MiB }).close();
  writeFileSync(cut, readFileSync(cut).subarray(0, 8));
  assert.throws(() => SharedCache.open(cut), { code: 'ERR_ARENA_TRUNCATED' });
  SharedCache.open(cut, { memoryBytes: MiB, reset: true }).close();
});

test('an empty file, and one whose creation never finished (the magic, then zeros), become arenas with or without reset', { skip }, (t) => {
  for (const reset of [false, true]) {
    const empty = arenaPath(t, `empty-${reset}`);
    writeFileSync(empty, '', { mode: 0o600 });
    const fromEmpty = SharedCache.open(empty, { memoryBytes: MiB, reset });
    fromEmpty.set('a', 1);
    assert.equal(fromEmpty.get('a'), 1);
    fromEmpty.close();
    for (const size of [4, 4096, MiB]) {
      const unfinished = arenaPath(t, `unfinished-${size}-${reset}`);
      const bytes = Buffer.alloc(size);
      bytes.writeUInt32LE(MAGIC >>> 0, 0);
      writeFileSync(unfinished, bytes, { mode: 0o600 });
      assert.throws(() => SharedCache.open(unfinished), { code: 'ERR_ARENA_FILE', message: `arena file ${unfinished} holds no arena yet; pass options.memoryBytes to create one` });
      const created = SharedCache.open(unfinished, { memoryBytes: MiB, reset });
      created.set('b', 2);
      assert.equal(created.get('b'), 2);
      created.close();
      const reopened = SharedCache.open(unfinished);
      assert.equal(reopened.get('b'), 2);
      reopened.close();
    }
  }
});

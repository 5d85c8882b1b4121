// SharedCache.open(): creating, reopening, flushing and closing a
// file-backed cache, and every error of its options and its file.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import test from 'node:test';
import { nativeAvailable } from '../lib/native/addon.js';
import { ArenaCacheError, SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
const isRoot = process.getuid?.() === 0;

test('open creates a 0600 file of memoryBytes, and a second open shares its entries', { skip }, async (t) => {
  const path = arenaPath(t);
  const first = SharedCache.open(path, { memoryBytes: 4 * MiB, ttl: 60_000 });
  const stat = statSync(path);
  assert.equal(stat.mode & 0o777, 0o600);
  assert.equal(stat.size, 4 * MiB);
  assert.equal(first.path, path);
  first.set('k', { nested: [1, 2] });
  const second = SharedCache.open(path);
  assert.deepEqual(second.get('k'), { nested: [1, 2] });
  second.set('from-second', 'v');
  assert.equal(first.get('from-second'), 'v');
  assert.equal(second.stats().memoryBytes, 4 * MiB);
  await first.flush();
  first.close();
  assert.equal(second.get('k').nested[1], 2, 'closing one instance leaves the other working');
  second.close();
  assert.throws(() => second.get('k'), { code: 'ERR_CACHE_CLOSED' });
  await assert.rejects(second.flush(), { code: 'ERR_CACHE_CLOSED' });
  const third = SharedCache.open(path);
  assert.deepEqual(third.get('k'), { nested: [1, 2] }, 'entries survive every instance closing');
  third.close();
});

test('options.mode sets the mode of a new file', { skip }, (t) => {
  const path = arenaPath(t);
  SharedCache.open(path, { memoryBytes: MiB, mode: 0o700 }).close();
  assert.equal(statSync(path).mode & 0o777, 0o700);
});

test('an empty existing file becomes a new arena', { skip }, (t) => {
  const path = arenaPath(t);
  writeFileSync(path, '', { mode: 0o600 });
  const cache = SharedCache.open(path, { memoryBytes: MiB });
  cache.set('a', 'b');
  assert.equal(cache.get('a'), 'b');
  cache.close();
});

test('options given to open() must agree with the file; left out, the file\'s apply', { skip }, (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 2 * MiB, policy: 'lru', max: 1000, ttl: 5000, shards: 2 });
  t.after(() => cache.close());
  const reopened = SharedCache.open(path, { policy: 'lru', memoryBytes: 2 * MiB, max: 1000 });
  assert.equal(reopened.stats().policy, 'lru');
  reopened.close();
  const cases = [
    [{ memoryBytes: 4 * MiB }, 'options.memoryBytes 2097152, not 4194304'],
    [{ policy: 'lfu' }, 'options.policy "lru", not "lfu"'],
    [{ max: 10 }, 'options.max 1000, not 10'],
    [{ ttl: 1 }, 'options.ttl 5000, not 1'],
    [{ shards: 4 }, 'options.shards 2, not 4'],
    [{ maxKeyBytes: 100 }, 'options.maxKeyBytes 4096, not 100'],
    [{ lockWaitMs: 100 }, 'options.lockWaitMs 500, not 100'],
  ];
  for (const [options, detail] of cases) {
    assert.throws(() => SharedCache.open(path, options), {
      name: 'ArenaCacheError',
      code: 'ERR_ARENA_MISMATCH',
      message: `arena file ${path} was created with ${detail}; leave the option out to use the file as it is, or pass { reset: true } to replace it`,
    });
  }
  const json = { name: 'json', encode: (v) => Buffer.from(JSON.stringify(v)), decode: (b) => JSON.parse(b) };
  assert.throws(() => SharedCache.open(path, { codec: json }), {
    code: 'ERR_CODEC_MISMATCH',
    message: 'the cache was created with the codec "msgpackr-shared" but open() was given "json"; pass the same codec in options.codec',
  });
});

test('reset replaces the arena, but only while nobody else has the file open', { skip }, (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: MiB });
  cache.set('old', 1);
  assert.throws(() => SharedCache.open(path, { memoryBytes: 2 * MiB, reset: true }), {
    name: 'ArenaCacheError',
    code: 'ERR_ARENA_BUSY',
    message: `arena file ${path} cannot be reset while it is open elsewhere (in another process, or by another open() in this one)`,
  });
  assert.equal(cache.get('old'), 1, 'a refused reset changes nothing');
  cache.close();
  const reset = SharedCache.open(path, { memoryBytes: 2 * MiB, reset: true, policy: 'lfu' });
  assert.equal(reset.get('old'), undefined);
  assert.equal(reset.stats().memoryBytes, 2 * MiB);
  assert.equal(reset.stats().policy, 'lfu');
  assert.equal(statSync(path).size, 2 * MiB);
  reset.close();
});

test('the file must exist, or memoryBytes must be given to create it', { skip }, (t) => {
  const path = arenaPath(t);
  assert.throws(() => SharedCache.open(path), {
    name: 'ArenaCacheError',
    code: 'ERR_ARENA_FILE',
    message: `arena file ${path} does not exist; pass options.memoryBytes to create it`,
  });
  assert.throws(() => SharedCache.open('/nonexistent-dir/x.arena', { memoryBytes: MiB }), {
    code: 'ERR_ARENA_FILE',
    message: "could not open arena file /nonexistent-dir/x.arena: ENOENT: no such file or directory, open '/nonexistent-dir/x.arena'",
  });
});

test('a symlink, a directory, a foreign owner and a writable-by-others mode are refused', { skip }, (t) => {
  const target = arenaPath(t, 'target');
  SharedCache.open(target, { memoryBytes: MiB }).close();
  const link = arenaPath(t, 'link');
  symlinkSync(target, link);
  assert.throws(() => SharedCache.open(link), {
    code: 'ERR_ARENA_FILE',
    message: `arena file ${link} is a symbolic link; arena files are opened without following links`,
  });
  const directory = arenaPath(t, 'dir');
  mkdirSync(directory);
  assert.throws(() => SharedCache.open(directory, { memoryBytes: MiB }), { code: 'ERR_ARENA_FILE' });
  chmodSync(target, 0o666);
  assert.throws(() => SharedCache.open(target), {
    name: 'ArenaCacheError',
    code: 'ERR_ARENA_PERMISSIONS',
    message: `arena file ${target} has mode 0666, which lets other users write to it; chmod it to 600`,
  });
  chmodSync(target, 0o600);
  if (isRoot) {
    chownSync(target, 12345, 12345);
    assert.throws(() => SharedCache.open(target), {
      code: 'ERR_ARENA_PERMISSIONS',
      message: `arena file ${target} belongs to user 12345, not to this process's user 0; another user could change what this process reads`,
    });
  }
});

test('a file system without room is ERR_ARENA_ALLOC, and leaves no file behind', { skip: skip || (!isRoot && 'needs root to mount a small tmpfs') }, (t) => {
  const mountPoint = mkdtempSync('/tmp/arenacache-small-tmpfs-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mountPoint]);
  } catch (error) {
    t.skip(`cannot mount a tmpfs here: ${error.message.split('\n')[0]}`);
    rmSync(mountPoint, { recursive: true, force: true });
    return;
  }
  t.after(() => {
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });
  const path = `${mountPoint}/big.arena`;
  assert.throws(() => SharedCache.open(path, { memoryBytes: 16 * MiB }), (error) => {
    assert.ok(error instanceof ArenaCacheError);
    assert.equal(error.code, 'ERR_ARENA_ALLOC');
    assert.match(error.message, /^could not allocate 16777216 bytes for arena file .*big\.arena \(ENOSPC: no space left on device, posix_fallocate\); free space on its file system or lower options\.memoryBytes$/);
    assert.equal(error.cause.code, 'ENOSPC');
    return true;
  });
  assert.throws(() => statSync(path), { code: 'ENOENT' });
  // A file system without a page left: even the magic, written first, does not fit.
  const filler = `${mountPoint}/filler`;
  const fd = openSync(filler, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(64 * 1024));
  } catch (error) {
    assert.equal(error.code, 'ENOSPC');
  } finally {
    closeSync(fd);
  }
  assert.throws(() => SharedCache.open(path, { memoryBytes: MiB }), (error) => {
    assert.equal(error.code, 'ERR_ARENA_ALLOC');
    assert.match(error.message, /^could not write the magic of arena file .*big\.arena \(ENOSPC: no space left on device, write\); free space on its file system$/);
    return true;
  });
  assert.throws(() => statSync(path), { code: 'ENOENT' });
});

test('open() argument and option errors name what was expected', { skip }, (t) => {
  const path = arenaPath(t);
  assert.throws(() => SharedCache.open(42), { name: 'TypeError', message: 'path must be a string (got 42)' });
  assert.throws(() => SharedCache.open(''), { name: 'RangeError', message: 'path must be a non-empty file path without NUL characters (got "")' });
  assert.throws(() => SharedCache.open('a\0b'), { name: 'RangeError' });
  assert.throws(() => SharedCache.open(path, 'big'), { name: 'TypeError', message: 'options must be an object (got "big")' });
  assert.throws(() => SharedCache.open(path, { memoryBytes: MiB, rest: true }), {
    name: 'TypeError',
    message: 'options.rest is not a known option; did you mean reset?',
  });
  assert.throws(() => SharedCache.open(path, { readOnly: true }), {
    name: 'TypeError',
    message: 'options.readOnly is not a known option of SharedCache.open(); to read a cache file without recovering, locking or writing it, use SharedCache.inspect(path)',
  });
  assert.throws(() => SharedCache.open(path, { memoryBytes: MiB, reset: 1 }), { name: 'TypeError', message: 'options.reset must be a boolean (got 1)' });
  assert.throws(() => SharedCache.open(path, { memoryBytes: MiB, populate: 'yes' }), {
    name: 'TypeError',
    message: 'options.populate must be a boolean (got "yes")',
  });
  assert.throws(() => SharedCache.open(path, { memoryBytes: MiB, mode: 0o1777 }), {
    name: 'RangeError',
    message: 'options.mode must be a file mode from 0 to 0o777, such as 0o600 (got 1023)',
  });
  assert.throws(() => SharedCache.open(path, { memoryBytes: MiB, mode: 0o400 }), {
    name: 'RangeError',
    message: 'options.mode must let the owner read and write (0o600 or wider) (got 0o400)',
  });
  assert.throws(() => SharedCache.open(path, { reset: true }), {
    name: 'TypeError',
    message: 'options.memoryBytes is required with options.reset: true (the size of the new arena)',
  });
  assert.throws(() => SharedCache.open(path, { memoryBytes: 5 }), { name: 'RangeError', message: /^options\.memoryBytes must be an integer from 1 MiB/ });
  assert.throws(() => SharedCache.open(path, { policy: 'mru' }), { name: 'RangeError', message: /^options\.policy must be one of/ });
  assert.throws(() => statSync(path), { code: 'ENOENT' }, 'no file is created by a call that fails its checks');
});

test('flush() of an in-memory cache resolves at once; path is null', async () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  await cache.flush();
  assert.equal(cache.path, null);
  assert.equal(cache.handle.path, null);
});

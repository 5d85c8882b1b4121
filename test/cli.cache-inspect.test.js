// arenacache cache stats|keys|verify inspect a cache file read-only (issue
// 37, finding 5): on a file no process has open they report the damage they
// find, not the state an opener's recovery leaves, and the file's bytes are
// the same afterwards; a file of another codec needs no --codec (keys
// --values shows its values as that codec's bytes, or decoded with
// --codec); and a missing file, a symbolic link, a FIFO, a file cut short
// fail with a clear message and exit code, never a hang or a crash.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, truncateSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Arena } from '../lib/arena/entries/arena.js';
import { STAMP_F64 } from '../lib/arena/entries/record.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath, killProcess, startProcess } from './helpers/arena-files.js';
import { jsonCodec } from './helpers/codecs.js';
import { cli, cliFailure as failure, cliJson as json } from './helpers/cli.js';
import { tempDir } from './helpers/fs-tree.js';
import { MiB } from './helpers/units.js';

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** A closed cache file with a few entries, damaged by `damage(arena)` while it was open. */
function damagedFile(t, damage, options = {}) {
  const file = arenaPath(t, 'inspect');
  const cache = SharedCache.open(file, { memoryBytes: 2 * MiB, shards: 1, ...options });
  cache.set('a', 'first');
  cache.set('b', 'second');
  damage(Arena.attach(cache.handle.buffer));
  cache.close();
  return file;
}

test('verify on a file damaged while no process had it open: reports the damage, changes no byte', async (t) => {
  const file = damagedFile(t, (arena) => {
    arena.shards[0].f64[STAMP_F64] = 1e9;
  });
  const before = sha256(file);
  const problem = 'shard 0: live record at 0 has write stamp 1000000000, outside [1, 2]';
  const [text, asJson, stats, keys] = await Promise.all([cli('cache', 'verify', file), json('cache', 'verify', file), json('cache', 'stats', file), cli('cache', 'keys', file)]);
  assert.deepEqual(text, { code: 3, stdout: `FAILED  ${file}: 1 problem(s)\n  ${problem}\n`, stderr: '' });
  assert.equal(asJson.code, 3);
  assert.deepEqual(asJson.value, { ok: false, problems: [problem], unchecked: [] });
  assert.equal(stats.code, 0);
  assert.equal(stats.value.entries, 2);
  assert.equal(stats.value.shardRepairs, 0, 'nothing was repaired');
  assert.equal(stats.value.threads, 0, 'no process uses the file, and the commands are not users');
  assert.deepEqual(keys, { code: 0, stdout: 'a\nb\n', stderr: '' });
  assert.equal(sha256(file), before, 'the file is byte for byte what it was');
  // Again, after the commands: still the damage as found.
  assert.deepEqual(await cli('cache', 'verify', file), text);
});

test('verify on a file whose lock a killed process left held: reports it, and the file stays as it was', async (t) => {
  const file = arenaPath(t, 'inspect-held');
  const cache = SharedCache.open(file, { memoryBytes: 2 * MiB, shards: 2 });
  for (let i = 0; i < 20; i++) cache.set(`k${i}`, `v${i}`);
  cache.close();
  const { child } = await startProcess({ mode: 'hold-lock', path: file, shard: 1 });
  const pid = child.pid;
  await killProcess(child);
  const before = sha256(file);
  const problem = `shard 1: its lock is held by a thread of process ${pid} that has exited, maybe in the middle of a write; the next process to open the file repairs the shard`;
  const [text, asJson, stats] = await Promise.all([cli('cache', 'verify', file), json('cache', 'verify', file), json('cache', 'stats', file)]);
  assert.deepEqual(text, { code: 3, stdout: `FAILED  ${file}: 1 problem(s)\n  ${problem}\n`, stderr: '' });
  assert.deepEqual(asJson.value, { ok: false, problems: [problem], unchecked: [] });
  assert.equal(stats.value.entries, 20);
  assert.equal(stats.value.lockRecoveries, 0, 'the lock was not taken over');
  assert.equal(stats.value.threads, 0);
  assert.equal(sha256(file), before);
  // The next opener does repair it (the recovery the inspection left alone).
  const opened = SharedCache.open(file);
  assert.equal(opened.stats().lockRecoveries, 1);
  assert.deepEqual(opened.verify(), { ok: true, problems: [] });
  opened.close();
  assert.deepEqual(await cli('cache', 'verify', file), { code: 0, stdout: `ok      ${file}\n`, stderr: '' });
});

test('a file of another codec: stats, keys and verify need no --codec; keys --values shows its values as that codec\'s bytes', async (t) => {
  const file = arenaPath(t, 'inspect-json');
  const cache = SharedCache.open(file, { memoryBytes: 2 * MiB, codec: jsonCodec });
  cache.set('obj', { name: 'ada' });
  cache.set('text', 'plain');
  cache.set('raw', Buffer.from([1, 2, 255]));
  cache.close();
  const before = sha256(file);
  const codec = 'test/helpers/codecs.js#jsonCodec';
  const [stats, keys, verify, values, valuesJson, decoded] = await Promise.all([
    json('cache', 'stats', file),
    cli('cache', 'keys', file),
    cli('cache', 'verify', file),
    cli('cache', 'keys', file, '--values'),
    json('cache', 'keys', file, '--values'),
    cli('cache', 'keys', file, '--values', '--codec', codec),
  ]);
  assert.equal(stats.code, 0);
  assert.equal(stats.value.entries, 3);
  assert.equal(stats.value.sets, 3);
  assert.deepEqual(keys, { code: 0, stdout: 'obj\nraw\ntext\n', stderr: '' });
  assert.deepEqual(verify, { code: 0, stdout: `ok      ${file}\n`, stderr: '' });
  const encoded = Buffer.from(JSON.stringify({ name: 'ada' })).toString('hex');
  assert.deepEqual(values, { code: 0, stdout: `obj\t<json> hex:${encoded}\nraw\thex:0102ff\ntext\t"plain"\n`, stderr: '' });
  assert.deepEqual(valuesJson.value, [
    { key: 'obj', kind: 'string', valueKind: 'encoded', codec: 'json', value: encoded },
    { key: 'raw', kind: 'string', valueKind: 'buffer', value: '0102ff' },
    { key: 'text', kind: 'string', valueKind: 'string', value: 'plain' },
  ]);
  assert.deepEqual(decoded, { code: 0, stdout: `obj\t{ name: 'ada' }\nraw\thex:0102ff\ntext\t"plain"\n`, stderr: '' });
  assert.equal(sha256(file), before);
});

test('keys --values on a file of the default codec: values decoded for display', async (t) => {
  const file = arenaPath(t, 'inspect-default');
  const cache = SharedCache.open(file, { memoryBytes: 2 * MiB });
  cache.set('user:1', { name: 'ada', tags: ['x'] });
  cache.set(Buffer.from([0xab]), 42);
  cache.close();
  const [text, asJson] = await Promise.all([cli('cache', 'keys', file, '--values'), json('cache', 'keys', file, '--values')]);
  assert.deepEqual(text, { code: 0, stdout: `user:1\t{ name: 'ada', tags: [ 'x' ] }\nhex:ab\t42\n`, stderr: '' });
  assert.deepEqual(asJson.value, [
    { key: 'user:1', kind: 'string', valueKind: 'codec', value: { name: 'ada', tags: ['x'] } },
    // Numbers are stored as numbers since layout version 6 (not through the codec).
    { key: 'ab', kind: 'buffer', valueKind: 'number', value: 42 },
  ]);
});

test('a symbolic link, a FIFO, a file cut short, a missing file: a clear error and exit code, never a hang', async (t) => {
  const dir = tempDir(t, 'cli-inspect');
  const target = arenaPath(t, 'inspect-target');
  const cache = SharedCache.open(target, { memoryBytes: 2 * MiB });
  cache.set('k', 'v');
  cache.close();
  const link = path.join(dir, 'link.arena');
  symlinkSync(target, link);
  const fifo = path.join(dir, 'fifo');
  const made = await new Promise((resolve) => execFile('mkfifo', [fifo], (error) => resolve(error === null)));
  const cut = arenaPath(t, 'inspect-cut');
  const full = SharedCache.open(cut, { memoryBytes: 2 * MiB });
  full.close();
  truncateSync(cut, MiB);
  const missing = arenaPath(t, 'inspect-missing');
  const directory = path.join(dir, 'sub');
  mkdirSync(directory);
  const [linked, linkedJson, piped, cutShort, cutJson, gone, goneJson] = await Promise.all([
    cli('cache', 'verify', link),
    json('cache', 'stats', link),
    made ? cli('cache', 'keys', fifo) : null,
    cli('cache', 'verify', cut),
    json('cache', 'stats', cut),
    cli('cache', 'verify', missing),
    json('cache', 'keys', missing),
  ]);
  assert.deepEqual(linked, failure(1, `arena file ${link} is a symbolic link; arena files are opened without following links`));
  assert.deepEqual(linkedJson.value, { error: { code: 'ERR_ARENA_FILE', message: `arena file ${link} is a symbolic link; arena files are opened without following links` } });
  if (made) assert.deepEqual(piped, failure(1, `arena file ${fifo} is not a regular file`));
  const cutMessage = `arena file ${cut}: arena is truncated: its header describes ${2 * MiB} bytes but the buffer has ${MiB}`;
  assert.deepEqual(cutShort, failure(1, cutMessage));
  assert.deepEqual(cutJson.value, { error: { code: 'ERR_ARENA_TRUNCATED', message: cutMessage } });
  assert.deepEqual(gone, failure(5, `cache file ${missing} does not exist`));
  assert.deepEqual(goneJson.value, { error: { code: 'ERR_ARENA_FILE', message: `cache file ${missing} does not exist` } });
  assert.equal(readFileSync(cut).length, MiB, 'the cut file is left as it is');
});

test('stats counts the threads of the processes using the file, never the command', async (t) => {
  const file = arenaPath(t, 'inspect-users');
  SharedCache.open(file, { memoryBytes: 2 * MiB, shards: 2 }).close();
  const { child } = await startProcess({ mode: 'hold-lock', path: file, shard: 0 });
  t.after(() => killProcess(child));
  const [stats, verify] = await Promise.all([json('cache', 'stats', file), json('cache', 'verify', file)]);
  assert.equal(stats.value.threads, 1, 'the one thread of the other process');
  // Its lock is held by a live thread: shard 0 is busy, not damaged.
  assert.equal(verify.code, 0);
  assert.deepEqual(verify.value, {
    ok: true,
    problems: [],
    unchecked: [{ shard: 0, reason: `its lock is held by a live thread of process ${child.pid}` }],
  });
  assert.deepEqual(await cli('cache', 'verify', file), { code: 0, stdout: `ok      ${file} (1 of 2 shards not checked)\n  shard 0: not checked: its lock is held by a live thread of process ${child.pid}\n`, stderr: '' });
});

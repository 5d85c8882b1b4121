// Restarts: what the sole opener of an arena file checks, by what the
// processes before it left (lib/arena/entries/restart.js), and what
// stats().lastOpen says of it. A clean close is trusted without a check; a
// process that died leaves only the shards it held locked to rebuild; a
// file that may have been through a machine crash, or is a copy, or was
// opened with verifyOnOpen, has every shard checked.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { headerFieldIndex, H32_CLEAN_MARK, LAYOUT_VERSION, SHARD_META_BYTES } from '../lib/arena/common/layout.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { fileClose, fileLock, fileOpen, LOCK_EXCLUSIVE } from '../lib/native/mapped-file.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath, forgetCleanClose, killProcess, startProcess } from './helpers/arena-files.js';
import { checkValue, makeValue } from './helpers/checked-value.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
const SHARDS = 4;
const LIB = new URL('../lib/index.js', import.meta.url).href;
/** A worker that opens the file (waiting for its lock), writes, reports the mark it sees, and waits to be terminated. */
const WAITING_OPENER = `
  const { parentPort, workerData } = require('node:worker_threads');
  const { readFileSync } = require('node:fs');
  (async () => {
    const { SharedCache } = await import(workerData.lib);
    parentPort.postMessage({ opening: true });
    const cache = SharedCache.open(workerData.path);
    for (let i = 0; i < 200; i++) cache.set('w' + i + Math.random(), 'x'.repeat(100));
    parentPort.postMessage({ markWhileWriting: readFileSync(workerData.path).readUInt32LE(${H32_CLEAN_MARK * 4}) });
    setInterval(() => {}, 1000);
  })();
`;

/** A file of `count` checked values over SHARDS shards, closed cleanly. */
function filledFile(path, count = 2000) {
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, shards: SHARDS });
  for (let i = 0; i < count; i++) cache.set(`k${i}`, makeValue(`k${i}`, 1, i, 40 + (i % 200)));
  assert.equal(cache.stats().lastOpen.how, 'created');
  cache.close();
}

function markOf(path) {
  return readFileSync(path).readUInt32LE(H32_CLEAN_MARK * 4);
}

/** Every entry of `cache` checks out, and verify() finds nothing. */
function assertSound(cache, count = 2000) {
  let held = 0;
  for (let i = 0; i < count; i++) {
    const value = cache.get(`k${i}`);
    if (value === undefined) continue;
    held++;
    assert.equal(checkValue(`k${i}`, value), 'ok', `k${i}`);
  }
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  return held;
}

/** Flips every bit of the byte at `at` of the file (a byte written over might already hold the value written). */
function flipByte(path, at) {
  const fd = openSync(path, 'r+');
  try {
    const byte = Buffer.alloc(1);
    readSync(fd, byte, 0, 1, at);
    byte[0] ^= 0xff;
    writeSync(fd, byte, 0, 1, at);
  } finally {
    closeSync(fd);
  }
}

/** Leaves shard `index`'s lock held in the closed file, as a writer killed inside it would. */
function lockShardInFile(path, index) {
  const fd = openSync(path, 'r+');
  try {
    const header = Buffer.alloc(4096);
    readSync(fd, header, 0, 4096, 0);
    const at = header.readDoubleLE(headerFieldIndex('metaOffset') * 8) + index * SHARD_META_BYTES;
    const word = Buffer.alloc(4);
    readSync(fd, word, 0, 4, at);
    word.writeInt32LE(word.readInt32LE(0) | 1);
    writeSync(fd, word, 0, 4, at);
  } finally {
    closeSync(fd);
  }
}

test('a clean close is trusted: the next open checks no shard, and says so in stats().lastOpen', { skip }, (t) => {
  const path = arenaPath(t);
  filledFile(path);
  assert.notEqual(markOf(path), 0, 'the last close marked the file clean');
  const cache = SharedCache.open(path);
  const { lastOpen } = cache.stats();
  assert.equal(lastOpen.how, 'clean');
  assert.equal(lastOpen.shardsChecked, 0);
  assert.equal(lastOpen.shardsRepaired, 0);
  assert.equal(lastOpen.entriesLost, 0);
  assert.ok(lastOpen.ms >= 0 && lastOpen.ms < 60_000, `ms ${lastOpen.ms}`);
  assert.ok(Math.abs(lastOpen.at - Date.now()) < 60_000, `at ${lastOpen.at}`);
  // The mark is gone while the file is open: a crash from here on is not a clean close.
  assert.equal(markOf(path), 0);
  assert.equal(assertSound(cache), 2000);
  cache.close();
});

test('only the last user marks the file clean: a close while another open() holds it leaves no mark', { skip }, (t) => {
  const path = arenaPath(t);
  filledFile(path);
  const first = SharedCache.open(path);
  const second = SharedCache.open(path);
  assert.equal(second.stats().lastOpen.how, 'clean', 'every instance reads how the sole opener found the file');
  first.close();
  assert.equal(markOf(path), 0);
  second.close();
  assert.notEqual(markOf(path), 0);
});

test('a worker attached to the file keeps it from being marked until it closes too', { skip }, async (t) => {
  const path = arenaPath(t);
  filledFile(path);
  const cache = SharedCache.open(path);
  const attached = SharedCache.attach(cache.handle);
  cache.close();
  assert.equal(markOf(path), 0, 'the mapping still has a user in this process');
  attached.close();
  assert.notEqual(markOf(path), 0);
});

test('a writer killed with SIGKILL mid-writes: the next open checks no shard it did not hold, rebuilds any it held, and serves nothing torn', { skip }, async (t) => {
  const path = arenaPath(t);
  filledFile(path);
  const keys = Array.from({ length: 2000 }, (_, i) => `k${i}`);
  for (let round = 0; round < 3; round++) {
    const { child } = await startProcess({ mode: 'writer', path, keys, writer: 2 + round, seed: round, minLength: 40, maxLength: 3000 });
    await new Promise((resolve) => setTimeout(resolve, 150));
    await killProcess(child);
    const cache = SharedCache.open(path);
    const { lastOpen } = cache.stats();
    // The writer cleared the mark when it opened the file: its death is a crash, never a clean close.
    assert.equal(lastOpen.how, 'crash', `round ${round}`);
    assert.equal(lastOpen.shardsChecked, 0);
    assert.ok(lastOpen.shardsRepaired <= 1, `a killed writer holds at most one shard (${lastOpen.shardsRepaired})`);
    assert.ok(assertSound(cache) > 1900);
    cache.close();
  }
});

test('a shard left locked is rebuilt on every kind of restart, a clean one too', { skip }, (t) => {
  const path = arenaPath(t);
  filledFile(path);
  lockShardInFile(path, 2);
  const cache = SharedCache.open(path);
  const { lastOpen } = cache.stats();
  assert.equal(lastOpen.how, 'clean');
  assert.equal(lastOpen.shardsRepaired, 1);
  assert.equal(lastOpen.entriesLost, 0);
  assert.equal(cache.stats().lockRecoveries, 1);
  assert.equal(assertSound(cache), 2000);
  cache.close();
});

test('a file last opened under another boot (a machine crash) has every shard checked, and damage found is repaired', { skip }, (t) => {
  const path = arenaPath(t);
  filledFile(path);
  const cache = SharedCache.open(path);
  cache.set('after', 'x');
  // A process exit without close() on another boot: no mark, a boot that is not this one.
  cache.close();
  forgetCleanClose(path);
  // And a record damaged, as a page written back in part leaves it.
  flipByte(path, readFileSync(path).readDoubleLE(headerFieldIndex('dataOffset') * 8) + 40);
  const reopened = SharedCache.open(path);
  const { lastOpen } = reopened.stats();
  assert.equal(lastOpen.how, 'checked');
  // Every shard is checked: at open, or, past the open's time budget
  // (RESTART_CHECK_BUDGET_MS, a loaded machine), at its first use.
  assert.equal(lastOpen.shardsChecked + lastOpen.shardsPending, SHARDS);
  assert.ok(assertSound(reopened) >= 1999);
  const after = reopened.stats();
  assert.equal(after.lastOpen.shardsPending, 0);
  assert.equal(after.shardRepairs, 1, 'the damaged shard repaired once, at open or at its first use');
  reopened.close();
});

test('a copy of a file its processes did not close cleanly is checked: it is not the file the record names', { skip }, (t) => {
  const path = arenaPath(t);
  const copy = arenaPath(t, 'copy');
  filledFile(path);
  // Open and leave without a clean close: a second instance's close leaves no mark while the first is open.
  const cache = SharedCache.open(path);
  const other = SharedCache.open(path);
  other.close();
  copyFileSync(path, copy);
  cache.close();
  const fromCopy = SharedCache.open(copy);
  assert.equal(fromCopy.stats().lastOpen.how, 'checked');
  // Every shard, at open or (past the open's time budget) at its first use.
  assert.equal(fromCopy.stats().lastOpen.shardsChecked + fromCopy.stats().lastOpen.shardsPending, SHARDS);
  assert.equal(assertSound(fromCopy), 2000);
  assert.equal(fromCopy.stats().lastOpen.shardsPending, 0);
  fromCopy.close();
  // A copy of a cleanly closed file is as clean as the file.
  copyFileSync(path, copy);
  const fromCleanCopy = SharedCache.open(copy);
  assert.equal(fromCleanCopy.stats().lastOpen.how, 'clean');
  fromCleanCopy.close();
});

test('options.verifyOnOpen checks every shard of a cleanly closed file, and finds damage a clean close cannot vouch against', { skip }, (t) => {
  const path = arenaPath(t);
  filledFile(path);
  // Damage done while nobody had the file open (another program, a damaged disk).
  const image = readFileSync(path);
  const tablesOffset = image.readDoubleLE(headerFieldIndex('tablesOffset') * 8);
  const fd = openSync(path, 'r+');
  writeSync(fd, Buffer.alloc(64, 0x5a), 0, 64, tablesOffset);
  closeSync(fd);
  const cache = SharedCache.open(path, { verifyOnOpen: true });
  const { lastOpen } = cache.stats();
  assert.equal(lastOpen.how, 'checked');
  assert.equal(lastOpen.shardsChecked, SHARDS);
  assert.equal(lastOpen.shardsRepaired, 1);
  assert.equal(assertSound(cache), 2000, 'rebuilt from its checksummed records');
  cache.close();
  assert.throws(() => SharedCache.open(path, { verifyOnOpen: 'yes' }), { name: 'TypeError', message: 'options.verifyOnOpen must be a boolean (got "yes")' });
});

test('a file on disk is written back before its clean mark, and trusted after it', { skip }, (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'arenacache-restart-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'disk.arena');
  filledFile(path);
  const cache = SharedCache.open(path);
  assert.equal(cache.stats().lastOpen.how, 'clean');
  assert.equal(assertSound(cache), 2000);
  cache.close();
});

test('stats().lastOpen is null for a cache in memory', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.equal(cache.stats().lastOpen, null);
  cache.close();
});

test('a clean mark in a file of an earlier layout version vouches for nothing', { skip }, (t) => {
  const path = arenaPath(t);
  filledFile(path);
  const fd = openSync(path, 'r+');
  const version = Buffer.alloc(4);
  version.writeUInt32LE(4, 0);
  writeSync(fd, version, 0, 4, 4);
  closeSync(fd);
  const cache = SharedCache.open(path);
  assert.equal(cache.stats().lastOpen.how, 'checked');
  assert.equal(readFileSync(path).readUInt32LE(4), LAYOUT_VERSION, 'marked with this version before anything else is written');
  cache.close();
});

test('an opener that waited while the last user marked the file clean clears the mark before it writes', { skip }, async (t) => {
  const path = arenaPath(t);
  filledFile(path);
  // What the last closer holds while it writes the file back and marks it
  // (mappingReleaseClean): the arena's lock, exclusively, from its own descriptor.
  const { fd } = fileOpen(path, 0, 'test');
  assert.equal(fileLock(fd, LOCK_EXCLUSIVE, false), true);
  const openers = [0, 1].map(() => new Worker(WAITING_OPENER, { eval: true, workerData: { lib: LIB, path } }));
  t.after(() => Promise.all(openers.map((worker) => worker.terminate())));
  await Promise.all(openers.map((worker) => once(worker, 'message')));
  // Both call open() now: they try for the lock alone, fail, and wait for it shared.
  await new Promise((resolve) => setTimeout(resolve, 300));
  fileClose(fd);
  const seen = await Promise.all(openers.map((worker) => once(worker, 'message').then(([message]) => message)));
  // Each opener found the mark cleared by then (by the one that became sole, or by itself).
  for (const { markWhileWriting } of seen) assert.equal(markWhileWriting, 0);
  assert.equal(markOf(path), 0, 'no mark while they have it open');
  await Promise.all(openers.map((worker) => worker.terminate()));
  // Terminated without closing: the next open is a crash's, not a clean close's.
  const cache = SharedCache.open(path);
  assert.notEqual(cache.stats().lastOpen.how, 'clean');
  cache.close();
});

test('a sole opener killed while it repaired a shard leaves its successor to check every shard', { skip }, async (t) => {
  const path = arenaPath(t);
  filledFile(path);
  flipByte(path, readFileSync(path).readDoubleLE(headerFieldIndex('dataOffset') * 8) + 40);
  // verifyOnOpen finds the damage; the process dies half-way through the repair.
  const child = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
      const { Shard } = await import(${JSON.stringify(new URL('../lib/arena/entries/shard.js', import.meta.url).href)});
      const { SharedCache } = await import(${JSON.stringify(LIB)});
      Shard.prototype.recoverFromDamage = function () { this.table.fill(0); process.exit(9); };
      SharedCache.open(${JSON.stringify(path)}, { verifyOnOpen: true });
      `,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(child.status, 9, child.stderr);
  const cache = SharedCache.open(path);
  const { lastOpen } = cache.stats();
  assert.equal(lastOpen.how, 'checked', 'the record vouched for nothing once the opener began');
  assert.ok(assertSound(cache) >= 1999);
  // The shard the dead opener left half repaired, repaired again: at open or (past the open's time budget) at its first use.
  assert.ok(cache.stats().shardRepairs >= 1);
  assert.equal(cache.stats().lastOpen.shardsPending, 0);
  cache.close();
});

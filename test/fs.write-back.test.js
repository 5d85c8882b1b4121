// CacheFS write-back: writes are deferred, flushed on every documented
// occasion, shared by every thread of the block store, and never lost (a
// failed flush keeps them dirty; a terminated worker or a killed process
// leaves them for the next flush).
import assert from 'node:assert/strict';
import { execFileSync, fork } from 'node:child_process';
import * as fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { BlockStore, SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { checkValue, makeValue, valueOrigin } from './helpers/checked-value.js';
import { STRESS } from './helpers/seeded-random.js';
import { tempDir } from './helpers/fs-tree.js';

const AGENT = new URL('./fixtures/write-back-agent.js', import.meta.url);

function setup(t, options = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'arenacache-write-back-'));
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const blocks = new BlockStore({ memoryBytes: 4 * 2 ** 20, blockBytes: 4096 });
  const cfs = new CacheFS({ root, cache, blocks, writeMode: 'write-back', flushIntervalMs: 0, ...options });
  // Closed (and so flushed) before the tree is removed.
  t.after(async () => {
    await cfs.close().catch(() => {});
    fs.rmSync(root, { recursive: true, force: true });
  });
  return { root, cache, blocks, cfs, disk: (p) => fs.readFileSync(path.join(root, p), 'utf8') };
}

async function until(condition, what, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('writes are served at once and reach the disk only when flushed', async (t) => {
  const { cfs, disk, blocks } = setup(t);
  await cfs.writeFile('new.txt', 'first');
  // The path exists from the first write (readdir lists it), its contents come later.
  assert.equal(disk('new.txt'), '');
  assert.deepEqual(await cfs.readdir(''), ['new.txt']);
  assert.equal(await cfs.readFile('new.txt', 'utf8'), 'first');
  await cfs.appendFile('new.txt', ' and more');
  assert.equal(cfs.readFileSync('new.txt', 'utf8'), 'first and more');
  assert.equal((await cfs.stat('new.txt')).size, 14);
  assert.equal(cfs.statSync('new.txt').size, 14);
  assert.equal(disk('new.txt'), '');
  assert.ok(cfs.stats().dirtyBytes > 0);
  assert.equal(await cfs.flush(), 1);
  assert.equal(disk('new.txt'), 'first and more');
  assert.equal(blocks.stats().dirtyBlocks, 0);
  assert.equal(await cfs.flush(), 0, 'nothing left to flush');
  const stats = cfs.stats();
  assert.equal(stats.writeBacks, 2);
  assert.equal(stats.flushedFiles, 1);
  assert.equal(stats.flushedBytes, 14);
  assert.equal(stats.dirtyBytes, 0);
  // After the flush the disk's own stats are served.
  assert.equal((await cfs.stat('new.txt')).size, fs.statSync(path.join(cfs.root, 'new.txt')).size);
});

test('an append to a clean file extends what is on disk; dirty files survive eviction of their cache entries', async (t) => {
  const { cfs, disk, root } = setup(t);
  fs.writeFileSync(path.join(root, 'log'), 'line 1\n');
  await cfs.appendFile('log', 'line 2\n');
  await cfs.appendFile('log', 'line 3\n');
  assert.equal(disk('log'), 'line 1\n');
  // The cache forgets everything; the block store still has the file.
  assert.ok(cfs.invalidate({ prefix: '' }) >= 1);
  assert.equal(await cfs.readFile('log', 'utf8'), 'line 1\nline 2\nline 3\n');
  assert.equal((await cfs.stat('log')).size, 21);
  await cfs.flush(['log']);
  assert.equal(disk('log'), 'line 1\nline 2\nline 3\n');
});

test('flush(paths) writes only those files', async (t) => {
  const { cfs, disk } = setup(t);
  await cfs.writeFile('a', 'A');
  await cfs.writeFile('b', 'B');
  assert.equal(await cfs.flush(['a', 'missing-is-fine']), 1);
  assert.equal(disk('a'), 'A');
  assert.equal(disk('b'), '');
  await assert.rejects(cfs.flush('a'), { name: 'TypeError', message: 'paths must be an array of path strings (got "a")' });
  await assert.rejects(cfs.flush(['../x']), { code: 'ERR_PATH_OUTSIDE_ROOT' });
});

test('the background flush runs every flushIntervalMs', async (t) => {
  const { cfs, disk } = setup(t, { flushIntervalMs: 20 });
  await cfs.writeFile('timed', 'by the timer');
  await until(() => disk('timed') === 'by the timer', 'the background flush');
  assert.equal(cfs.stats().flushedFiles, 1);
});

test('close() flushes; every later call fails with ERR_FS_CLOSED', async (t) => {
  const { cfs, disk } = setup(t);
  await cfs.writeFile('closing', 'flushed by close');
  await cfs.close();
  assert.equal(disk('closing'), 'flushed by close');
  await cfs.close(); // twice is harmless
  const closed = { name: 'ArenaCacheError', code: 'ERR_FS_CLOSED', message: 'the CacheFS is closed: close() was called on this instance' };
  await assert.rejects(cfs.readFile('closing'), closed);
  await assert.rejects(cfs.writeFile('closing', 'x'), closed);
  await assert.rejects(cfs.flush(), closed);
  assert.throws(() => cfs.readFileSync('closing'), closed);
  assert.throws(() => cfs.statSync('closing'), closed);
});

test('structure changes and handles flush the files they touch first', async (t) => {
  const { cfs, disk, root } = setup(t);
  fs.mkdirSync(path.join(root, 'dir'));
  await cfs.writeFile('dir/moved', 'moved with its directory');
  await cfs.rename('dir', 'renamed');
  assert.equal(disk('renamed/moved'), 'moved with its directory');
  assert.equal(await cfs.readFile('renamed/moved', 'utf8'), 'moved with its directory');

  await cfs.writeFile('doomed', 'never written after its removal');
  await cfs.unlink('doomed');
  await cfs.flush();
  assert.equal(fs.existsSync(path.join(root, 'doomed')), false, 'a flush does not bring back a removed file');

  await cfs.writeFile('handled', 'seen by the descriptor');
  const handle = await cfs.open('handled', 'r+');
  const buffer = Buffer.alloc(64);
  const { bytesRead } = await handle.read(buffer, 0, 64, 0);
  assert.equal(buffer.toString('utf8', 0, bytesRead), 'seen by the descriptor');
  // A write-back write while the handle is open reaches the disk before the handle's next call.
  await cfs.writeFile('handled', 'newer');
  await handle.write(Buffer.from('N'), 0, 1, 0);
  await handle.close();
  assert.equal(disk('handled'), 'Newer');
  assert.equal(await cfs.readFile('handled', 'utf8'), 'Newer');
});

test('writes in another mode on the same block store never lose to an older dirty version', async (t) => {
  const { cfs, cache, blocks, root, disk } = setup(t);
  const through = new CacheFS({ root, cache, blocks, writeMode: 'write-through' });
  await cfs.writeFile('shared', 'dirty version');
  await through.writeFile('shared', 'written through later');
  await cfs.flush();
  assert.equal(disk('shared'), 'written through later');
  await cfs.writeFile('shared', 'dirty again');
  await through.appendFile('shared', ' + appended');
  assert.equal(disk('shared'), 'dirty again + appended');
  assert.equal(await cfs.readFile('shared', 'utf8'), 'dirty again + appended');
});

test('a file too large for the block store is written to disk at once (spilled), and so is one over maxFileBytes', async (t) => {
  const root = tempDir(t, 'write-back');
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const blocks = new BlockStore({ memoryBytes: 2 ** 20, blockBytes: 64 * 1024 });
  const cfs = new CacheFS({ root, cache, blocks, writeMode: 'write-back', flushIntervalMs: 0, maxFileBytes: 4 * 2 ** 20 });
  t.after(() => cfs.close());
  const big = Buffer.alloc(3 * 2 ** 20, 7);
  await cfs.writeFile('big', big);
  assert.equal(cfs.stats().spilledWrites, 1);
  assert.ok(fs.readFileSync(path.join(root, 'big')).equals(big));
  assert.equal(blocks.stats().dirtyBlocks, 0, 'the partial blocks were dropped');
  assert.ok((await cfs.readFile('big')).equals(big));

  const huge = Buffer.alloc(5 * 2 ** 20, 9);
  await cfs.writeFile('huge', huge);
  assert.ok(fs.readFileSync(path.join(root, 'huge')).equals(huge), 'over maxFileBytes: written through');
  assert.equal(cfs.stats().writeBacks, 0);
});

test('a failed flush keeps the data dirty, reports it, and succeeds once the cause is gone', async (t) => {
  const { cfs, root, disk, cache, blocks } = setup(t);
  fs.mkdirSync(path.join(root, 'd'));
  await cfs.writeFile('d/kept', 'precious');
  // Behind the cache's back, the directory becomes a file: the flush cannot open d/kept.
  fs.rmSync(path.join(root, 'd'), { recursive: true });
  fs.writeFileSync(path.join(root, 'd'), 'in the way');
  const events = [];
  cfs.on('flushError', (event) => events.push(event));
  const error = await cfs.flush().catch((e) => e);
  assert.equal(error.name, 'ArenaCacheError');
  assert.equal(error.code, 'ERR_FLUSH_FAILED');
  assert.equal(error.message, '1 dirty file(s) could not be written to disk and stay dirty, to be retried: d/kept (ENOTDIR)');
  assert.equal(error.failures[0].path, 'd/kept');
  assert.equal(error.cause.code, 'ENOTDIR');
  assert.deepEqual(events.map((e) => [e.path, e.error.code]), [['d/kept', 'ENOTDIR']]);
  assert.equal(cfs.stats().flushErrors, 1);
  assert.ok(cfs.stats().dirtyBytes > 0, 'still dirty');
  await assert.rejects(cfs.close(), { code: 'ERR_FLUSH_FAILED' });
  // Nothing was lost: another CacheFS of the store flushes it once the directory is back.
  fs.rmSync(path.join(root, 'd'));
  fs.mkdirSync(path.join(root, 'd'));
  const next = new CacheFS({ root, cache, blocks, writeMode: 'write-back', flushIntervalMs: 0 });
  assert.equal(await next.readFile('d/kept', 'utf8'), 'precious');
  assert.equal(await next.flush(), 1);
  assert.equal(disk('d/kept'), 'precious');
  await next.close();
});

test('a full disk fails the flush with ENOSPC and loses nothing', { skip: process.getuid?.() !== 0 && 'needs root to mount a small tmpfs' }, async (t) => {
  const root = path.join(tempDir(t, 'write-back-full'), 'mnt');
  fs.mkdirSync(root);
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', root]);
  try {
    await fillTheDisk(root);
  } finally {
    execFileSync('umount', [root]);
  }
});

async function fillTheDisk(root) {
  const cache = new SharedCache({ memoryBytes: 8 * 2 ** 20 });
  const blocks = new BlockStore({ memoryBytes: 4 * 2 ** 20, blockBytes: 4096 });
  const cfs = new CacheFS({ root, cache, blocks, writeMode: 'write-back', flushIntervalMs: 0 });
  const flushErrors = [];
  cfs.on('flushError', ({ error }) => flushErrors.push(error.code));
  const data = Buffer.alloc(200 * 1024, 3);
  await cfs.writeFile('data', data);
  fs.writeFileSync(path.join(root, 'filler'), Buffer.alloc(200 * 1024));
  const error = await cfs.flush().catch((e) => e);
  assert.equal(error.code, 'ERR_FLUSH_FAILED');
  assert.equal(error.cause.code, 'ENOSPC');
  assert.deepEqual(flushErrors, ['ENOSPC']);
  assert.ok((await cfs.readFile('data')).equals(data), 'still served whole');
  fs.unlinkSync(path.join(root, 'filler'));
  assert.equal(await cfs.flush(), 1);
  assert.ok(fs.readFileSync(path.join(root, 'data')).equals(data));
  await cfs.close();
}

test('without a flushError listener a failed background flush is a process warning, once per file', async (t) => {
  const { cfs, root } = setup(t, { flushIntervalMs: 10 });
  fs.mkdirSync(path.join(root, 'd'));
  await cfs.writeFile('d/x', 'x');
  fs.rmSync(path.join(root, 'd'), { recursive: true });
  fs.writeFileSync(path.join(root, 'd'), '');
  const warnings = [];
  const onWarning = (warning) => warnings.push(warning);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  await until(() => cfs.stats().flushErrors >= 3, 'three failed background flushes');
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0].code, 'ARENACACHE_FLUSH_FAILED');
  assert.match(warnings[0].message, /^CacheFS could not write d\/x to disk \(ENOTDIR: .*\); it stays dirty and is retried$/);
  fs.unlinkSync(path.join(root, 'd'));
  fs.mkdirSync(path.join(root, 'd'));
  await until(() => fs.existsSync(path.join(root, 'd/x')) && fs.readFileSync(path.join(root, 'd/x'), 'utf8') === 'x', 'the retried flush');
});

test('a worker terminated with dirty files leaves them to the other threads of the store', async (t) => {
  const { cfs, cache, blocks, root, disk } = setup(t);
  const worker = new Worker(AGENT, {
    workerData: { mode: 'write-once', root, cacheHandle: cache.handle, blocksHandle: blocks.handle, files: { 'from-worker': 'written in a worker' } },
  });
  const [message] = await once(worker, 'message');
  assert.equal(message, 'written');
  await worker.terminate();
  assert.equal(disk('from-worker'), '');
  assert.equal(await cfs.readFile('from-worker', 'utf8'), 'written in a worker', 'another thread reads the dirty file');
  assert.equal(await cfs.flush(), 1);
  assert.equal(disk('from-worker'), 'written in a worker');
});

test('a process that exits without close() flushes at exit', async (t) => {
  const root = tempDir(t, 'write-back-exit');
  const blocksPath = path.join(tempDir(t, 'write-back-store'), 'blocks');
  BlockStore.open(blocksPath, { memoryBytes: 2 ** 20, blockBytes: 4096 }).close();
  const child = fork(AGENT, [JSON.stringify({ mode: 'write-exit', root, blocksPath, files: { 'at-exit': 'flushed by the exit hook' } })]);
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
  assert.equal(fs.readFileSync(path.join(root, 'at-exit'), 'utf8'), 'flushed by the exit hook');
});

test('a process killed with dirty files in a file-backed store: the next process flushes them', async (t) => {
  const root = tempDir(t, 'write-back-kill');
  const blocksPath = path.join(tempDir(t, 'write-back-store'), 'blocks');
  BlockStore.open(blocksPath, { memoryBytes: 2 ** 20, blockBytes: 4096 }).close();
  const files = { 'a.txt': 'survives SIGKILL', 'sub/b.txt': 'so does this' };
  fs.mkdirSync(path.join(root, 'sub'));
  const child = fork(AGENT, [JSON.stringify({ mode: 'write-once', root, blocksPath, files })]);
  const [message] = await once(child, 'message');
  assert.equal(message, 'written');
  child.kill('SIGKILL');
  await once(child, 'exit');
  assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), '');
  const blocks = BlockStore.open(blocksPath);
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 2 ** 20 }), blocks, writeMode: 'write-back', flushIntervalMs: 0 });
  assert.equal(await cfs.flush(), 2);
  for (const [p, text] of Object.entries(files)) assert.equal(fs.readFileSync(path.join(root, p), 'utf8'), text);
  await cfs.close();
  blocks.close();
});

test('threads writing and reading the same files in write-back never see a torn file; the disk ends with a whole one', async (t) => {
  const { cfs, cache, blocks, root } = setup(t);
  const paths = ['p0', 'p1', 'p2'];
  for (const p of paths) await cfs.writeFile(p, makeValue(p, 9, 0, 100));
  const workers = [0, 1].map(
    (writer) =>
      new Worker(AGENT, {
        workerData: { mode: 'hammer', root, cacheHandle: cache.handle, blocksHandle: blocks.handle, paths, writer, seed: 100 + writer, maxLength: 12_000, validateMs: writer === 0 ? 0 : 1000 },
      }),
  );
  await Promise.all(workers.map((w) => once(w, 'message')));
  // Meanwhile this thread flushes over and over.
  const until = Date.now() + (STRESS ? 10_000 : 1500);
  let flushes = 0;
  while (Date.now() < until) {
    flushes += await cfs.flush();
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const results = await Promise.all(
    workers.map((w) => {
      w.postMessage('stop');
      return once(w, 'message').then(([counts]) => counts);
    }),
  );
  await Promise.all(workers.map((w) => w.terminate()));
  await cfs.flush();
  for (const counts of results) {
    assert.ok(counts.writes > 10 && counts.reads > 10, JSON.stringify(counts));
    assert.equal(counts.torn, 0, JSON.stringify(counts));
    assert.equal(counts.foreign, 0, JSON.stringify(counts));
  }
  assert.ok(flushes > 0);
  console.log(`write-back hammer: ${JSON.stringify(results)}, ${flushes} files flushed meanwhile`);
  for (const p of paths) {
    const onDisk = fs.readFileSync(path.join(root, p));
    if (onDisk.length > 0) assert.equal(checkValue(p, onDisk), 'ok', `${p} on disk`);
    assert.ok(onDisk.equals(await cfs.readFile(p)), `${p}: the cache serves what the disk holds`);
  }
  assert.equal(cfs.stats().lostWrites, 0);
});

test('workers terminated in the middle of write-back writes leave whole files (or lose their unflushed writes), never torn ones', async (t) => {
  const { cfs, cache, blocks, root } = setup(t);
  const paths = ['q0', 'q1'];
  for (const p of paths) await cfs.writeFile(p, makeValue(p, 9, 0, 100));
  // On disk before the first worker: a writer that dies inside its write
  // loses every unflushed write of the file, which then reads as its last
  // flushed version, and a file never flushed is the empty one its first
  // write created (see the next test).
  assert.equal(await cfs.flush(), paths.length);
  const rounds = STRESS ? 60 : 12;
  for (let round = 0; round < rounds; round++) {
    const worker = new Worker(AGENT, {
      workerData: { mode: 'hammer', root, cacheHandle: cache.handle, blocksHandle: blocks.handle, paths, writer: round, seed: round, maxLength: 30_000 },
    });
    await once(worker, 'message');
    await new Promise((resolve) => setTimeout(resolve, 5 + ((round * 7) % 40)));
    await worker.terminate();
    // What the dead worker left is read whole, or not at all.
    for (const p of paths) {
      const value = await cfs.readFile(p);
      assert.equal(checkValue(p, value), 'ok', `${p} after round ${round}`);
    }
    if (round % 3 === 0) await cfs.flush();
  }
  await cfs.flush();
  for (const p of paths) {
    const onDisk = fs.readFileSync(path.join(root, p));
    assert.equal(checkValue(p, onDisk), 'ok', `${p} on disk`);
  }
  const stats = blocks.stats();
  console.log(`terminated write-back writers: ${rounds} rounds, lost writes ${cfs.stats().lostWrites}, lock recoveries ${stats.lockRecoveries}, dirty blocks left ${stats.dirtyBlocks}`);
  assert.equal(stats.dirtyBlocks, 0);
});

test('a writer terminated inside its write-back write loses the unflushed writes of the file: it reads as last flushed, or empty if never flushed', async (t) => {
  const { cfs, cache, blocks, root } = setup(t, { validateMs: 0 });
  await cfs.writeFile('flushed', makeValue('flushed', 9, 0, 100));
  await cfs.flush();
  await cfs.writeFile('flushed', makeValue('flushed', 9, 1, 200));
  await cfs.writeFile('never-flushed', makeValue('never-flushed', 9, 0, 100));
  for (const [i, p] of ['flushed', 'never-flushed'].entries()) {
    const worker = new Worker(AGENT, { workerData: { mode: 'stop-mid-write', root, cacheHandle: cache.handle, blocksHandle: blocks.handle, path: p } });
    await once(worker, 'message');
    await worker.terminate();
    const value = await cfs.readFile(p);
    assert.equal(cfs.stats().lostWrites, i + 1, `${p}: the write in flight and the unflushed one before it are lost`);
    if (p === 'flushed') assert.deepEqual(valueOrigin(value), { writer: 9, sequence: 0 }, `${p}: the flushed version, whole`);
    else assert.equal(value.length, 0, `${p}: the empty file its first write created, never a torn one`);
    if (value.length > 0) assert.equal(checkValue(p, value), 'ok');
  }
  await cfs.flush();
  assert.equal(blocks.stats().dirtyBlocks, 0);
});

test('data blocks left without their name record (a writer died rewriting it) are dropped by the next flush', async (t) => {
  const { cfs, blocks, disk } = setup(t);
  await cfs.writeFile('kept', 'still dirty');
  await cfs.writeFile('orphaned', 'x'.repeat(10_000));
  // What a writer that died inside the name block's write leaves: the store
  // drops the block in flight, here the file's only name record, and its
  // three data blocks stay dirty with nothing naming them.
  const ranges = blocks.dirty();
  const nameBlock = 2 ** 32 - 1;
  const files = [...new Set(ranges.filter((range) => range.block === nameBlock).map((range) => range.file))];
  const orphan = files.find((file) => blocks.read(file, 0, 1)?.toString() === 'x');
  blocks.drop(orphan);
  blocks.write(orphan, 0, Buffer.alloc(10_000, 'x'));
  assert.equal(blocks.stats().dirtyBlocks, 5, "the orphan's three data blocks, and the other file's data and name blocks");
  assert.equal(await cfs.flush(), 1, 'only the named file is written');
  assert.equal(disk('kept'), 'still dirty');
  assert.equal(blocks.stats().dirtyBlocks, 0, 'nothing dirty left pinned');
  assert.equal(disk('orphaned'), '');
});

test('an empty append to a dirty file keeps its contents (and their CRC-32)', async (t) => {
  const { cfs, disk } = setup(t);
  await cfs.writeFile('e', 'kept');
  await cfs.appendFile('e', '');
  // Bytes over an empty ArrayBuffer: zlib.crc32 of those is 0, whatever it continues.
  await cfs.appendFile('e', new Uint8Array(new ArrayBuffer(0)));
  cfs.invalidate({ prefix: '' });
  assert.equal(await cfs.readFile('e', 'utf8'), 'kept');
  assert.equal(cfs.stats().lostWrites, 0);
  await cfs.flush();
  assert.equal(disk('e'), 'kept');
});

test('dirty contents that no longer match their CRC-32 (pages of a store file a crash did not write back) are dropped, never served or flushed', async (t) => {
  const { cfs, blocks, disk, root } = setup(t);
  fs.writeFileSync(path.join(root, 'page'), 'on disk');
  await cfs.writeFile('page', 'n'.repeat(10_000));
  await cfs.appendFile('page', 'tail');
  const nameBlock = 2 ** 32 - 1;
  const file = blocks.dirty().find((range) => range.block === nameBlock).file;
  // The crash: the second block's page holds what it held before this version.
  blocks.write(file, 4096, Buffer.alloc(4096, 'o'));
  cfs.invalidate({ prefix: '' });
  assert.equal(await cfs.readFile('page', 'utf8'), 'on disk', 'the disk version is served, not the torn one');
  assert.equal(cfs.stats().lostWrites, 1);
  assert.equal(await cfs.flush(), 0);
  assert.equal(disk('page'), 'on disk');
  assert.equal(blocks.stats().dirtyBlocks, 0);
});

test('write-back options are checked', (t) => {
  const root = tempDir(t, 'write-back-options');
  const cache = new SharedCache({ memoryBytes: 2 ** 20 });
  const blocks = new BlockStore({ memoryBytes: 2 ** 20, blockBytes: 4096 });
  assert.throws(() => new CacheFS({ root, cache, writeMode: 'write-back' }), {
    name: 'TypeError',
    message: "options.blocks must be a BlockStore when writeMode is 'write-back': it holds the dirty files until they are flushed",
  });
  assert.throws(() => new CacheFS({ root, cache, blocks: {} }), { name: 'TypeError', message: 'options.blocks must be a BlockStore (got an instance of Object)' });
  assert.throws(() => new CacheFS({ root, cache, blocks, writeMode: 'write-back', flushIntervalMs: -1 }), {
    name: 'RangeError',
    message: 'options.flushIntervalMs must be an integer from 0 (no background flush) to 86400000 milliseconds (got -1)',
  });
  assert.throws(() => new CacheFS({ root, cache, blocks, writeMode: 'write-back', flushIntervalMs: '5' }), { name: 'TypeError' });
});

test('BlockStore#exclusive runs a function under a file lock, synchronously', () => {
  const blocks = new BlockStore({ memoryBytes: 2 ** 20, blockBytes: 4096 });
  assert.equal(blocks.exclusive(7, () => 42), 42);
  assert.throws(() => blocks.exclusive(7, 'no'), { name: 'TypeError', message: 'fn must be a function (got "no")' });
  assert.throws(() => blocks.exclusive(-1, () => {}), { name: 'RangeError', message: 'file must be an integer from 0 to 4294967295 (got -1)' });
  assert.throws(() => blocks.exclusive(7, async () => {}), {
    name: 'TypeError',
    message: 'fn must be synchronous: it returned a promise, and the lock was released before that promise settled',
  });
  // Released after a throw: taking it again does not wait.
  assert.throws(() => blocks.exclusive(7, () => { throw new Error('inside'); }), { message: 'inside' });
  assert.equal(blocks.exclusive(7, () => 'again'), 'again');
  assert.equal(blocks.dirtyBlockCount(), 0);
  blocks.write(1, 0, Buffer.alloc(10));
  assert.equal(blocks.dirtyBlockCount(), 1);
});

test('write-back counters reach Prometheus through registerMetrics', async (t) => {
  const { cfs } = setup(t);
  const { Registry } = await import('prom-client');
  const registry = new Registry();
  cfs.registerMetrics(registry, { name: 'wb' });
  await cfs.writeFile('m', 'metrics');
  assert.match(await registry.metrics(), /^arenacache_fs_dirty_bytes\{fs="wb"\} [1-9]\d*$/m);
  await cfs.flush();
  const text = await registry.metrics();
  assert.match(text, /^arenacache_fs_write_backs_total\{fs="wb"\} 1$/m);
  assert.match(text, /^arenacache_fs_flushed_files_total\{fs="wb"\} 1$/m);
  assert.match(text, /^arenacache_fs_flushed_bytes_total\{fs="wb"\} 7$/m);
  assert.match(text, /^arenacache_fs_dirty_bytes\{fs="wb"\} 0$/m);
  assert.match(text, /^arenacache_fs_flush_errors_total\{fs="wb"\} 0$/m);
  // In a cluster, the store-wide gauge is not summed over the workers that share the store; their own counters are.
  assert.equal(registry.getSingleMetric('arenacache_fs_dirty_bytes').aggregator, 'first');
  assert.equal(registry.getSingleMetric('arenacache_fs_write_backs_total').aggregator, 'sum');
});

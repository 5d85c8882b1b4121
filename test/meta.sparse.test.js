// Sparse InodeFS files: a write far past the end, or a truncate up, leaves
// a hole that stores nothing and reads as zeros, up to the 16 GiB limit;
// past it, EFBIG. Reads, truncates down, snapshots and copies (to another
// InodeFS and to disk) keep the holes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { open } from 'lmdb';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';
import { seededRandom, testSeed } from './helpers/seeded-random.js';
import { GiB } from './helpers/units.js';

const LIMIT = 2 ** 34;
/** InodeFS's default chunk size: a hole is whole chunks, so a file stores at most a chunk around each written byte. */
const CHUNK = 256 * 1024;

async function readAt(handle, position, length) {
  const buffer = Buffer.alloc(length, 0xee);
  const { bytesRead } = await handle.read(buffer, 0, length, position);
  return buffer.subarray(0, bytesRead);
}

const zeros = (n) => Buffer.alloc(n);
const withByte = (n, at, byte) => Buffer.concat([zeros(at), Buffer.from(byte), zeros(n - at - 1)]);

test('one byte written at 5 GiB and at 16 GiB - 1, and truncate to 16 GiB: sparse, the holes read as zeros, past 16 GiB is EFBIG', async (t) => {
  const ifs = await openFs(t);
  const started = performance.now();
  const handle = await ifs.open('/five', 'w+');
  await handle.write(Buffer.from('x'), 0, 1, 5 * GiB);
  let stats = await handle.stat();
  assert.equal(stats.size, 5 * GiB + 1);
  assert.equal(stats.blocks, 1); // the one byte stored; the hole costs nothing
  assert.deepEqual(await readAt(handle, 5 * GiB - 8, 16), withByte(9, 8, 'x'));
  assert.deepEqual(await readAt(handle, 2 * GiB, 4096), zeros(4096));
  assert.deepEqual(await readAt(handle, 0, 10), zeros(10));

  await handle.write(Buffer.from('y'), 0, 1, LIMIT - 1);
  stats = await handle.stat();
  assert.equal(stats.size, LIMIT);
  assert.ok(stats.blocks <= (2 * CHUNK) / 512, `${stats.blocks} blocks`);
  assert.deepEqual(await readAt(handle, LIMIT - 4, 8), withByte(4, 3, 'y'));
  assert.deepEqual(await readAt(handle, 5 * GiB - 1, 4), withByte(4, 1, 'x'));
  assert.deepEqual(await readAt(handle, 9 * GiB, 100), zeros(100));

  // A small (inline) file truncated up to the limit keeps its bytes and stores one chunk.
  await ifs.writeFile('/t', 'abc');
  await ifs.truncate('/t', LIMIT);
  stats = await ifs.stat('/t');
  assert.equal(stats.size, LIMIT);
  assert.ok(stats.blocks <= CHUNK / 512, `${stats.blocks} blocks`);
  const t16 = await ifs.open('/t', 'r+');
  assert.deepEqual(await readAt(t16, 0, 6), Buffer.from('abc\0\0\0'));
  assert.deepEqual(await readAt(t16, LIMIT - 3, 10), zeros(3));
  await t16.truncate(0);
  await t16.truncate(LIMIT);
  assert.equal((await t16.stat()).blocks, 0);

  // Past the limit: EFBIG, and the file is as it was.
  await assert.rejects(handle.write(Buffer.from('z'), 0, 1, LIMIT), { code: 'EFBIG', errno: -27, syscall: 'write', path: '/five', message: "EFBIG: file too large, write '/five'" });
  await assert.rejects(handle.truncate(LIMIT + 1), { code: 'EFBIG', syscall: 'ftruncate', message: "EFBIG: file too large, ftruncate '/five'" });
  await assert.rejects(ifs.truncate('/t', LIMIT + 1), { code: 'EFBIG', syscall: 'ftruncate', path: '/t', message: "EFBIG: file too large, ftruncate '/t'" });
  await assert.rejects(ifs.appendFile('/t', 'z'), { code: 'EFBIG', syscall: 'write', message: "EFBIG: file too large, write '/t'" });
  const append = await ifs.open('/t', 'a');
  await assert.rejects(append.write(Buffer.from('z')), { code: 'EFBIG', message: "EFBIG: file too large, write '/t'" });
  await append.close();
  assert.equal((await ifs.stat('/t')).size, LIMIT);
  assert.equal((await handle.stat()).size, LIMIT);

  // Too large for one Buffer: readFile fails as node:fs's does.
  await assert.rejects(ifs.readFile('/five'), { name: 'RangeError', code: 'ERR_FS_FILE_TOO_LARGE', message: `File size (${LIMIT}) is greater than 2 GiB` });
  await assert.rejects(handle.readFile(), { code: 'ERR_FS_FILE_TOO_LARGE' });

  // Cut down: the holes go, the bytes before the cut stay.
  await handle.truncate(5 * GiB + 1);
  assert.deepEqual(await readAt(handle, 5 * GiB - 1, 4), withByte(2, 1, 'x'));
  assert.equal((await handle.stat()).blocks, 1);
  await handle.truncate(3 * GiB);
  stats = await handle.stat();
  assert.equal(stats.size, 3 * GiB);
  assert.equal(stats.blocks, 0);
  await handle.truncate(10);
  assert.deepEqual(await ifs.readFile('/five'), zeros(10));
  await handle.close();
  await t16.close();
  t.diagnostic(`sparse writes, reads and truncates up to 16 GiB took ${(performance.now() - started).toFixed(0)} ms`);
  assert.equal(ifs.fsck().ok, true, JSON.stringify(ifs.fsck().problems));
});

test('a 1-byte write at 512 MiB stores one small chunk, not 512 MiB', async (t) => {
  const ifs = await openFs(t);
  await ifs.writeFile('/f', 'start');
  const started = performance.now();
  const handle = await ifs.open('/f', 'r+');
  await handle.write(Buffer.from('!'), 0, 1, 512 * 2 ** 20);
  const stats = await handle.stat();
  t.diagnostic(`the write at 512 MiB took ${(performance.now() - started).toFixed(1)} ms`);
  assert.equal(stats.size, 512 * 2 ** 20 + 1);
  assert.ok(stats.blocks <= 2 * (CHUNK / 512), `${stats.blocks} blocks`);
  assert.deepEqual(await readAt(handle, 0, 8), Buffer.from('start\0\0\0'));
  assert.deepEqual(await readAt(handle, 512 * 2 ** 20 - 1, 4), Buffer.from('\0!'));
  await handle.close();
});

test('sparse files copy as sparse files: to another InodeFS and to a directory on disk', async (t) => {
  const ifs = await openFs(t);
  await ifs.mkdir('/s');
  await ifs.writeFile('/s/head', 'head');
  const handle = await ifs.open('/s/head', 'r+');
  await handle.write(Buffer.from('tail'), 0, 4, 5 * GiB);
  await handle.close();
  await ifs.writeFile('/s/hole', '');
  await ifs.truncate('/s/hole', 3 * GiB);
  await ifs.writeFile('/s/dense', Buffer.alloc(300_000, 7));
  const size = 5 * GiB + 4;
  const snap = ifs.createSnapshot('copy');
  t.after(() => snap.release());

  const other = await openFs(t);
  assert.deepEqual(await snap.copyTo(other, '/'), { files: 3, directories: 1, symlinks: 0, bytes: size + 3 * GiB + 300_000 });
  const copied = await other.open('/s/head');
  assert.equal((await copied.stat()).size, size);
  assert.ok((await copied.stat()).blocks <= (2 * CHUNK) / 512);
  assert.deepEqual(await readAt(copied, 0, 6), Buffer.from('head\0\0'));
  assert.deepEqual(await readAt(copied, 5 * GiB - 2, 10), Buffer.from('\0\0tail'));
  await copied.close();
  assert.equal((await other.stat('/s/hole')).size, 3 * GiB);
  assert.equal((await other.stat('/s/hole')).blocks, 0);
  assert.deepEqual(await other.readFile('/s/dense'), Buffer.alloc(300_000, 7));
  assert.equal(other.fsck().ok, true);

  const dir = path.join(tempDir(t, 'out'), 'copy');
  await snap.copyToDir(dir);
  const onDisk = fs.statSync(path.join(dir, 's/head'));
  assert.equal(onDisk.size, size);
  assert.ok(onDisk.blocks * 512 <= 4 * CHUNK, `${onDisk.blocks} blocks on disk`);
  const fd = fs.openSync(path.join(dir, 's/head'));
  const buffer = Buffer.alloc(10);
  assert.equal(fs.readSync(fd, buffer, 0, 10, 5 * GiB - 2), 6);
  assert.deepEqual(buffer.subarray(0, 6), Buffer.from('\0\0tail'));
  fs.readSync(fd, buffer, 0, 6, 0);
  assert.deepEqual(buffer.subarray(0, 6), Buffer.from('head\0\0'));
  fs.closeSync(fd);
  assert.equal(fs.statSync(path.join(dir, 's/hole')).size, 3 * GiB);
  assert.ok(fs.statSync(path.join(dir, 's/hole')).blocks * 512 <= CHUNK);
  assert.deepEqual(fs.readFileSync(path.join(dir, 's/dense')), Buffer.alloc(300_000, 7));
});

test('random writes far past the end and truncates, with snapshots between: the same bytes as a Buffer model, fsck-clean', async (t) => {
  const ifs = await openFs(t, { inlineBytes: 64, chunkBytes: 4096 });
  const seed = testSeed();
  const random = seededRandom(seed);
  const handle = await ifs.open('/data', 'w+');
  let model = Buffer.alloc(0);
  const snapshots = [];
  for (let step = 0; step < 200; step++) {
    const roll = random.int(100);
    if (roll < 15) {
      const length = random.int(3) === 0 ? random.int(100) : random.int(400_000);
      await handle.truncate(length);
      const next = Buffer.alloc(length);
      model.copy(next, 0, 0, Math.min(length, model.length));
      model = next;
    } else if (roll < 20) {
      const snapshot = ifs.createSnapshot(`s${step}`, { persist: random.int(2) === 0 });
      snapshots.push({ snapshot, model: Buffer.from(model) });
    } else {
      const bytes = Buffer.alloc(1 + random.int(random.int(4) === 0 ? 9000 : 50), 1 + random.int(255));
      const at = random.int(3) === 0 ? random.int(model.length + 1) : random.int(400_000);
      const before = (await handle.stat()).blocks * 512;
      await handle.write(bytes, 0, bytes.length, at);
      // A write stores the chunks it touches and lengthens the old last one: a hole it leaves behind stores nothing.
      const after = (await handle.stat()).blocks * 512;
      assert.ok(after <= before + (Math.ceil(bytes.length / 4096) + 2) * 4096, `SEED=${seed}: ${before} -> ${after} bytes stored after writing ${bytes.length} at ${at}`);
      const next = Buffer.alloc(Math.max(model.length, at + bytes.length));
      model.copy(next);
      bytes.copy(next, at);
      model = next;
    }
    const at = random.int(model.length + 10);
    const length = 1 + random.int(20_000);
    assert.deepEqual(await readAt(handle, at, length), model.subarray(at, at + length), `SEED=${seed}`);
    const stats = await handle.stat();
    assert.equal(stats.size, model.length, `SEED=${seed}`);
    // Only what holds written bytes is stored: never more than the file's whole chunks.
    assert.ok(stats.blocks * 512 <= Math.ceil(model.length / 4096) * 4096, `SEED=${seed}: ${stats.blocks} blocks for ${model.length} bytes`);
  }
  assert.deepEqual(await ifs.readFile('/data'), model, `SEED=${seed}`);
  for (const { snapshot, model: then } of snapshots) {
    assert.deepEqual(await snapshot.readFile('/data'), then, `SEED=${seed}, snapshot ${snapshot.name}`);
  }
  assert.equal(ifs.fsck().ok, true, `SEED=${seed}: ${JSON.stringify(ifs.fsck().problems)}`);
  for (const { snapshot } of snapshots) {
    snapshot.release();
    if (snapshot.persistent) await ifs.deleteSnapshot(snapshot.name);
  }
  await handle.close();
  assert.equal(ifs.fsck().ok, true, `SEED=${seed}: ${JSON.stringify(ifs.fsck().problems)}`);
});

test('fsck checks a sparse file: its chunks and holes must cover its size, and only its last chunk may be short', async (t) => {
  const file = path.join(tempDir(t), 'fs.lmdb');
  const options = { inlineBytes: 64, chunkBytes: 4096 };
  const ifs = await InodeFS.open(file, options);
  for (const name of ['/a', '/b', '/c']) {
    const handle = await ifs.open(name, 'w');
    await handle.write(Buffer.from(name), 0, 2, 0);
    await handle.write(Buffer.from(name), 0, 2, 100_000);
    await handle.close();
  }
  assert.deepEqual(ifs.fsck().problems, []);
  const ino = async (name) => (await ifs.stat(name)).ino;
  const [a, b, c] = [await ino('/a'), await ino('/b'), await ino('/c')];
  ifs.close();
  const env = open({ path: file, noSubdir: true, maxDbs: 12 });
  const inodes = env.openDB('inodes');
  const record = inodes.get(a);
  // [chunk 0 (4096 bytes, "/a" then zeros), a hole of 23 chunks, chunk 24 (100,002 - 24 * 4096 = 1698 bytes)]
  assert.deepEqual(record.chunks.map((entry) => typeof entry), ['string', 'number', 'string']);
  assert.equal(record.chunks[1], 23);
  env.transactionSync(() => {
    // Too large for its chunks; a hole too long; a short chunk before the last.
    inodes.putSync(a, { ...record, size: 200_000 });
    inodes.putSync(b, { ...inodes.get(b), chunks: [record.chunks[0], 30, record.chunks[2]] });
    const damaged = inodes.get(c);
    inodes.putSync(c, { ...damaged, chunks: [damaged.chunks[2], 23, damaged.chunks[2]] });
  });
  await env.close();
  const damaged = await InodeFS.open(file, options);
  t.after(() => damaged.close());
  assert.deepEqual(
    damaged.fsck().problems.filter((p) => p.kind === 'size').map((p) => p.message),
    [
      `inode ${a} (/a) has size 200000, but its chunks hold 100002 bytes`,
      `inode ${b} (/b) has size 100002, but its chunks hold 128674 bytes`,
      `inode ${c} (/c) has size 100002, but its chunks hold 97604 bytes`,
    ],
  );
});

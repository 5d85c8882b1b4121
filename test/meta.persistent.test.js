// InodeFS persistent snapshots: they survive restarts, cost O(changes),
// pin their blobs, and give back exactly the tree they were taken of
// (a randomized run against a plain Map model).
import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';

const SMALL = { inlineBytes: 256, chunkBytes: 4096 };

/** path -> 'dir' | 'link:<target>' | file bytes (hex), everything a reader shows. */
async function treeOf(reader) {
  const tree = new Map();
  for await (const { path: p, stats } of reader.walk('/')) {
    if (stats.isDirectory()) tree.set(p, 'dir');
    else if (stats.isSymbolicLink()) tree.set(p, `link:${await reader.readlink(p)}`);
    else tree.set(p, (await reader.readFile(p)).toString('hex'));
  }
  return tree;
}

test('a persistent snapshot survives a restart; listSnapshots, openSnapshot, deleteSnapshot', async (t) => {
  const ifs = await openFs(t, SMALL);
  const file = ifs.path;
  await ifs.mkdir('/config');
  await ifs.writeFile('/config/app.json', '{"v":1}');
  const big = Buffer.alloc(10_000, 7);
  await ifs.writeFile('/big', big);
  const snap = ifs.createSnapshot('before-update', { persist: true });
  assert.equal(snap.persistent, true);
  await ifs.writeFile('/config/app.json', '{"v":2}');
  await ifs.writeFile('/big', 'small now');
  await ifs.rm('/config', { recursive: true });
  await ifs.writeFile('/later', 'x');
  assert.equal(await snap.readFile('/config/app.json', 'utf8'), '{"v":1}');
  snap.release();
  ifs.close();

  const reopened = await InodeFS.open(file, SMALL);
  t.after(() => reopened.close());
  const listed = reopened.listSnapshots();
  assert.deepEqual(listed.map((s) => s.name), ['before-update']);
  assert.equal(typeof listed[0].createdAt, 'number');
  const again = reopened.openSnapshot('before-update');
  assert.equal(await again.readFile('/config/app.json', 'utf8'), '{"v":1}');
  assert.deepEqual(await again.readFile('/big'), big);
  assert.deepEqual(await again.readdir('/'), ['big', 'config']);
  await assert.rejects(again.stat('/later'), { code: 'ENOENT' });
  assert.deepEqual(await reopened.readdir('/'), ['big', 'later']);
  assert.equal(reopened.fsck().ok, true);

  assert.ok((await reopened.deleteSnapshot('before-update')) > 0);
  await assert.rejects(again.readFile('/big'), { code: 'ERR_INODEFS_CLOSED', message: 'snapshot "before-update" was deleted' });
  assert.deepEqual(reopened.listSnapshots(), []);
  const report = reopened.fsck();
  assert.equal(report.ok, true, JSON.stringify(report.problems));
  assert.equal(report.checked.history, 0);
  assert.equal(report.checked.blobs, 0); // the big file's blobs went with the snapshot that pinned them
});

test('a persistent snapshot costs O(changes): only records changed after it are copied', async (t) => {
  const ifs = await openFs(t, SMALL);
  await ifs.mkdir('/tree');
  for (let i = 0; i < 300; i++) await ifs.writeFile(`/tree/f${i}`, `file ${i}`);
  ifs.createSnapshot('s1', { persist: true });
  assert.equal(ifs.fsck().checked.history, 0);
  for (let i = 0; i < 3; i++) await ifs.writeFile(`/tree/f${i}`, `changed ${i}`);
  await ifs.writeFile(`/tree/f0`, 'changed again'); // the same epoch: copied once
  assert.equal(ifs.fsck().checked.history, 3);
  await ifs.writeFile('/tree/new', 'n'); // a new name: the directory's record changes (mtime), the new entry needs no history
  assert.equal(ifs.fsck().checked.history, 4);
  ifs.createSnapshot('s2', { persist: true });
  await ifs.writeFile(`/tree/f0`, 'third'); // needed by s2 (and not s1: s1 has its own copy)
  assert.equal(ifs.fsck().checked.history, 5);
  await ifs.deleteSnapshot('s1');
  const report = ifs.fsck();
  assert.equal(report.ok, true, JSON.stringify(report.problems));
  assert.equal(report.checked.history, 1);
});

test('snapshot names and options are checked; a taken name and an unknown name are errors', async (t) => {
  const ifs = await openFs(t, SMALL);
  ifs.createSnapshot('one', { persist: true });
  assert.throws(() => ifs.createSnapshot('one', { persist: true }), { code: 'ERR_SNAPSHOT_EXISTS', message: 'a persistent snapshot named "one" already exists; delete it first or choose another name' });
  assert.throws(() => ifs.openSnapshot('two'), { code: 'ERR_SNAPSHOT_NOT_FOUND', message: 'no persistent snapshot is named "two"' });
  await assert.rejects(ifs.deleteSnapshot('two'), { code: 'ERR_SNAPSHOT_NOT_FOUND', message: 'no persistent snapshot is named "two"' });
  assert.throws(() => ifs.createSnapshot('x', { persist: 'yes' }), { name: 'TypeError', message: 'options.persist must be a boolean (got "yes")' });
  assert.throws(() => ifs.createSnapshot('x', 5), { name: 'TypeError', message: 'options must be an object (got 5)' });
  assert.throws(() => ifs.createSnapshot('n'.repeat(256), { persist: true }), { name: 'RangeError', message: 'name must be at most 255 bytes long for a persistent snapshot (got 256 bytes)' });
  assert.throws(() => ifs.openSnapshot(''), { name: 'TypeError', message: 'name must be a non-empty string (got "")' });
  await assert.rejects(ifs.deleteSnapshot(3), { name: 'TypeError', message: 'name must be a non-empty string (got 3)' });
  // An ephemeral snapshot's name need not be unique, and is not listed.
  ifs.createSnapshot('one').release();
  assert.deepEqual(ifs.listSnapshots().map((s) => s.name), ['one']);
  const snap = ifs.openSnapshot('one');
  await assert.rejects(snap.writeFile('/a', 'x'), { code: 'EROFS', message: "EROFS: read-only file system, open '/a'" });
  snap.release();
  await assert.rejects(snap.readdir('/'), { code: 'ERR_INODEFS_CLOSED', message: 'snapshot "one" was released' });
  assert.deepEqual(ifs.listSnapshots().map((s) => s.name), ['one']); // releasing a handle keeps the snapshot
});

/** A random file body: small (inline) or large (chunks), often repeating (so chunks deduplicate). */
function randomBody(random) {
  const size = random() < 0.6 ? random.int(200) : 4096 + random.int(12_000);
  const fill = random.int(4);
  return Buffer.alloc(size, fill === 0 ? random.int(256) : 0x41 + fill).map((byte, i) => (fill === 0 && i % 97 === 0 ? random.int(256) : byte));
}

test('randomized: every persistent snapshot reads back exactly the tree it was taken of, across reopens', async (t) => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const steps = STRESS ? 3000 : 400;
  const dir = tempDir(t);
  const file = path.join(dir, 'fs.lmdb');
  let ifs = await InodeFS.open(file, SMALL);
  t.after(() => ifs.close());
  const model = new Map([['/', { type: 'dir' }]]);
  const snapshots = new Map(); // name -> the model's tree when taken
  let taken = 0;
  const dirs = () => [...model].filter(([, v]) => v.type === 'dir').map(([p]) => p);
  const files = () => [...model].filter(([, v]) => v.type === 'file').map(([p]) => p);
  const child = (parent, name) => (parent === '/' ? `/${name}` : `${parent}/${name}`);
  const under = (p, top) => p === top || p.startsWith(`${top}/`);
  const modelTree = () => new Map([...model].filter(([p]) => p !== '/').sort(([a], [b]) => (a < b ? -1 : 1)).map(([p, v]) => [p, v.type === 'dir' ? 'dir' : v.data.toString('hex')]));
  const sorted = (tree) => new Map([...tree].sort(([a], [b]) => (a < b ? -1 : 1)));

  const check = async (label) => {
    for (const [name, expected] of snapshots) {
      const snap = ifs.openSnapshot(name);
      assert.deepEqual(sorted(await treeOf(snap)), expected, `snapshot ${name} ${label} (SEED=${seed})`);
      snap.release();
    }
    assert.deepEqual(sorted(await treeOf(ifs)), modelTree(), `live tree ${label} (SEED=${seed})`);
    const report = ifs.fsck();
    assert.equal(report.ok, true, `${label}: ${JSON.stringify(report.problems)} (SEED=${seed})`);
  };

  for (let step = 0; step < steps; step++) {
    const op = random.int(100);
    if (op < 30) {
      const target = random() < 0.5 && files().length > 0 ? random.pick(files()) : child(random.pick(dirs()), `f${random.int(6)}`);
      if (model.get(target)?.type === 'dir') continue;
      const body = randomBody(random);
      await ifs.writeFile(target, body);
      model.set(target, { type: 'file', data: body });
    } else if (op < 40 && files().length > 0) {
      const target = random.pick(files());
      const extra = randomBody(random).subarray(0, random.int(3000));
      await ifs.appendFile(target, extra);
      model.set(target, { type: 'file', data: Buffer.concat([model.get(target).data, extra]) });
    } else if (op < 52 && files().length > 0) {
      const target = random.pick(files());
      const old = model.get(target).data;
      const at = random.int(old.length + 5000);
      const bytes = randomBody(random).subarray(0, 1 + random.int(6000));
      const handle = await ifs.open(target, 'r+');
      await handle.write(bytes, 0, bytes.length, at);
      await handle.close();
      // A write of nothing changes nothing, even past the end (as pwrite(2)).
      if (bytes.length > 0) {
        const next = Buffer.alloc(Math.max(old.length, at + bytes.length));
        old.copy(next);
        bytes.copy(next, at);
        model.set(target, { type: 'file', data: next });
      }
    } else if (op < 57 && files().length > 0) {
      const target = random.pick(files());
      const length = random.int(20_000);
      await ifs.truncate(target, length);
      const next = Buffer.alloc(length);
      model.get(target).data.copy(next, 0, 0, Math.min(length, model.get(target).data.length));
      model.set(target, { type: 'file', data: next });
    } else if (op < 65) {
      const target = child(random.pick(dirs()), `d${random.int(4)}`);
      if (model.has(target)) continue;
      await ifs.mkdir(target);
      model.set(target, { type: 'dir' });
    } else if (op < 70) {
      const target = random.pick([...model.keys()].filter((p) => p !== '/'));
      if (target === undefined) continue;
      await ifs.rm(target, { recursive: true });
      for (const p of [...model.keys()]) if (under(p, target)) model.delete(p);
    } else if (op < 78 && files().length > 0) {
      const from = random.pick(files());
      const to = child(random.pick(dirs()), `f${random.int(6)}`);
      if (model.get(to)?.type === 'dir') continue;
      await ifs.rename(from, to);
      const moved = model.get(from);
      model.delete(from);
      model.set(to, moved);
    } else if (op < 88) {
      const name = `s${taken++}`;
      ifs.createSnapshot(name, { persist: true });
      snapshots.set(name, modelTree());
    } else if (op < 95 && snapshots.size > 0) {
      const name = random.pick([...snapshots.keys()]);
      await ifs.deleteSnapshot(name);
      snapshots.delete(name);
    } else if (op < 97) {
      ifs.close();
      ifs = await InodeFS.open(file, SMALL);
    }
    if (step % 100 === 99) await check(`after step ${step}`);
  }
  await check('at the end');
  for (const name of [...snapshots.keys()]) await ifs.deleteSnapshot(name);
  const report = ifs.fsck();
  assert.equal(report.ok, true, JSON.stringify(report.problems));
  assert.equal(report.checked.history, 0);
});

test('a persistent snapshot deleted through another InodeFS of the store ends this one\'s handles', async (t) => {
  const cache = new SharedCache({ memoryBytes: 2 ** 21 });
  t.after(() => cache.close());
  const file = path.join(tempDir(t), 'fs.lmdb');
  const a = await InodeFS.open(file, { ...SMALL, cache });
  const b = await InodeFS.open(file, { ...SMALL, cache });
  t.after(() => (a.close(), b.close()));
  await a.writeFile('/f', 'kept');
  a.createSnapshot('shared', { persist: true });
  await a.rm('/f');
  const handle = a.openSnapshot('shared');
  assert.equal(await handle.readFile('/f', 'utf8'), 'kept');
  await b.deleteSnapshot('shared');
  await assert.rejects(handle.readdir('/'), { code: 'ERR_INODEFS_CLOSED', message: 'snapshot "shared" was deleted' });
  assert.equal(handle.released, true);
});

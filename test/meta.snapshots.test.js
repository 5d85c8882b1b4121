// InodeFS snapshots: a point-in-time, read-only view that writers never
// wait for and that never sees their later writes.
import assert from 'node:assert/strict';
import path from 'node:path';
import test from 'node:test';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { SharedCache } from '../lib/index.js';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';

test('a snapshot keeps the state it was taken in; walk lists it depth first', async (t) => {
  const ifs = await openFs(t);
  await ifs.mkdir('/config/sub', { recursive: true });
  await ifs.writeFile('/config/app.json', '{"v":1}');
  await ifs.writeFile('/config/sub/x', 'x');
  const snap = ifs.createSnapshot('before-update');
  await ifs.writeFile('/config/app.json', '{"v":2}');
  await ifs.rm('/config/sub', { recursive: true });
  await ifs.writeFile('/new', 'n');
  assert.equal(await snap.readFile('/config/app.json', 'utf8'), '{"v":1}');
  assert.equal(await ifs.readFile('/config/app.json', 'utf8'), '{"v":2}');
  assert.deepEqual(await snap.readdir('/'), ['config']);
  await assert.rejects(snap.stat('/new'), { code: 'ENOENT' });
  const walked = [];
  for await (const { path: p, stats } of snap.walk('/')) walked.push(`${p}:${stats.isDirectory() ? 'd' : stats.size}`);
  assert.deepEqual(walked, ['/config:d', '/config/app.json:7', '/config/sub:d', '/config/sub/x:1']);
  snap.release();
  snap.release(); // twice is fine
  await assert.rejects(snap.readFile('/config/app.json'), { code: 'ERR_INODEFS_CLOSED', message: 'snapshot "before-update" was released' });
});

test('writes to a snapshot fail with EROFS', async (t) => {
  const ifs = await openFs(t);
  const snap = ifs.createSnapshot('ro');
  t.after(() => snap.release());
  await assert.rejects(snap.writeFile('/f', 'x'), { code: 'EROFS', message: "EROFS: read-only file system, open '/f'" });
  await assert.rejects(snap.mkdir('/d'), { code: 'EROFS', syscall: 'mkdir' });
  await assert.rejects(snap.unlink('/f'), { code: 'EROFS' });
});

test('more snapshots than lmdb reader slots is ERR_TOO_MANY_SNAPSHOTS; releasing frees slots', async (t) => {
  const ifs = await openFs(t, { maxReaders: 8 });
  const snaps = [];
  let error;
  try {
    for (let i = 0; i < 20; i++) {
      snaps.push(ifs.createSnapshot(`s${i}`));
      await ifs.writeFile('/f', String(i)); // each snapshot a different state
    }
  } catch (e) {
    error = e;
  }
  assert.equal(error?.code, 'ERR_TOO_MANY_SNAPSHOTS');
  assert.match(error.message, /^snapshot "s\d+" cannot be taken: every lmdb reader slot is in use \(options\.maxReaders\); release\(\) other snapshots$/);
  for (const snap of snaps) snap.release();
  const again = ifs.createSnapshot('after');
  assert.equal(await again.readFile('/f', 'utf8'), String(snaps.length - 1));
  again.release();
});

test('createSnapshot takes microseconds', async (t) => {
  const ifs = await openFs(t);
  await ifs.writeFile('/f', 'x');
  const started = process.hrtime.bigint();
  for (let i = 0; i < 100; i++) ifs.createSnapshot(`s${i}`).release();
  const perSnapshotUs = Number(process.hrtime.bigint() - started) / 1000 / 100;
  // Not a benchmark: a loose bound that only a design error (copying, a write transaction) would break.
  assert.ok(perSnapshotUs < 1000, `${perSnapshotUs} µs per snapshot`);
});

test('a snapshot garbage-collected without release() is released, with a warning', (t) => {
  const child = fileURLToPath(new URL('./fixtures/snapshot-leak-child.js', import.meta.url));
  const output = execFileSync(process.execPath, ['--expose-gc', child, path.join(tempDir(t), 'fs.lmdb')], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(output), {
    warning: { code: 'ARENACACHE_SNAPSHOT_LEAK', message: 'InodeFS snapshot "leaked" was garbage-collected without release(); release() it when done' },
    slotsFreed: true,
  });
});

test("a snapshot sees every write finished before it, another instance's too", async (t) => {
  const cache = new SharedCache({ memoryBytes: 2 ** 21 });
  t.after(() => cache.close());
  const file = path.join(tempDir(t), 'fs.lmdb');
  const a = await InodeFS.open(file, { cache });
  const b = await InodeFS.open(file, { cache });
  t.after(() => (a.close(), b.close()));
  await a.writeFile('/f', 'v1');
  assert.equal(a.readFileSync('/f', 'utf8'), 'v1');
  await b.writeFile('/f', 'v2');
  const snap = a.createSnapshot('after-v2');
  assert.equal(await snap.readFile('/f', 'utf8'), 'v2');
  snap.release();
});

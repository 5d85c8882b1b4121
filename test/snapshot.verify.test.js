// verify(): an intact store is ok; a flipped byte, a truncated or a missing
// stored file is found by path (and never restored); 'all' lists unused
// repository files; the worktree check finds changed, missing and extra
// files; a tampered manifest is corrupt.
import assert from 'node:assert/strict';
import { appendFileSync, openSync, readFileSync, readSync, closeSync, rmSync, truncateSync, unlinkSync, writeFileSync, writeSync, chmodSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { codes, Workspace } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { writeTree } from './helpers/workspace-tree.js';

function flipByte(file, offset) {
  chmodSync(file, 0o644);
  const fd = openSync(file, 'r+');
  const byte = Buffer.alloc(1);
  readSync(fd, byte, 0, 1, offset);
  byte[0] ^= 0xff;
  writeSync(fd, byte, 0, 1, offset);
  closeSync(fd);
}

async function setup(t) {
  const dir = tempDir(t, 'ws');
  writeTree(dir, {
    'small-1.txt': 'one',
    'small-2.txt': 'two two',
    'nested/small-3.txt': 'three three three',
    'large-1.bin': Buffer.alloc(100 * 1024, 1),
    'large-2.bin': Buffer.alloc(120 * 1024, 2),
  });
  const workspace = await Workspace.init(dir);
  const descriptor = await workspace.snapshot();
  const manifest = JSON.parse(readFileSync(path.join(workspace.repositoryPath, 'manifests', `${descriptor.id}.json`), 'utf8'));
  const entry = (where) => manifest.entries.find((e) => e[0] === where);
  const objectOf = (where) => path.join(workspace.repositoryPath, 'objects', entry(where)[6].slice(0, 2), entry(where)[6]);
  const packOf = () => path.join(workspace.repositoryPath, 'packs', `${descriptor.id}.pack`);
  return { dir, workspace, descriptor, entry, objectOf, packOf };
}

test('verify of an intact store is ok', async (t) => {
  const { workspace, descriptor } = await setup(t);
  const report = await workspace.verify(descriptor.id);
  assert.deepEqual(report, {
    id: descriptor.id,
    ok: true,
    files: 5,
    bytes: 3 + 7 + 17 + 100 * 1024 + 120 * 1024,
    descriptor: 'ok',
    manifest: 'ok',
    differ: [],
    missing: [],
    extra: [],
  });
  const all = await workspace.verify('all');
  assert.equal(all.ok, true);
  assert.deepEqual(all.extra, []);
});

test('verify finds a flipped byte, a truncated file and a missing file in the store, by path', async (t) => {
  const { workspace, descriptor, entry, objectOf, packOf } = await setup(t);
  flipByte(objectOf('large-1.bin'), 5000);
  truncateSync(objectOf('large-2.bin'), 1000);
  flipByte(packOf(), entry('nested/small-3.txt')[7][1] + 2);
  const report = await workspace.verify(descriptor.id);
  assert.equal(report.ok, false);
  assert.deepEqual(report.differ, [
    { path: 'large-1.bin', reason: 'content' },
    { path: 'large-2.bin', reason: 'size', expected: 120 * 1024, actual: 1000 },
    { path: 'nested/small-3.txt', reason: 'content' },
  ]);
  unlinkSync(objectOf('large-1.bin'));
  const again = await workspace.verify(descriptor.id);
  assert.deepEqual(again.missing, ['large-1.bin']);
  // Restore never writes a damaged tree.
  await assert.rejects(workspace.restore(descriptor.id, { force: true }), (error) => {
    assert.equal(error.code, codes.ERR_SNAPSHOT_CORRUPT);
    assert.match(error.message, new RegExp(`^snapshot ${descriptor.id}: the stored bytes of 3 file\\(s\\) are missing or damaged, first .+; run verify$`));
    return true;
  });
});

test("verify 'all' lists repository files no snapshot uses as extra", async (t) => {
  const { workspace } = await setup(t);
  const stray = path.join(workspace.repositoryPath, 'objects', 'ab', 'ab'.padEnd(64, '0'));
  const { mkdirSync } = await import('node:fs');
  mkdirSync(path.dirname(stray), { recursive: true });
  writeFileSync(stray, 'stray');
  const all = await workspace.verify('all');
  assert.equal(all.ok, false);
  assert.deepEqual(all.extra, [path.join('objects', 'ab', 'ab'.padEnd(64, '0'))]);
  const plan = await workspace.gc({ dryRun: true });
  assert.deepEqual(plan.files, all.extra, 'gc would remove it');
});

test('verify --worktree finds a flipped byte, a truncated file, a missing and an extra file, by path', async (t) => {
  const { dir, workspace, descriptor } = await setup(t);
  flipByte(path.join(dir, 'large-1.bin'), 10);
  truncateSync(path.join(dir, 'small-2.txt'), 3);
  rmSync(path.join(dir, 'nested/small-3.txt'));
  writeFileSync(path.join(dir, 'nested/extra.txt'), 'extra');
  appendFileSync(path.join(dir, 'small-1.txt'), '');
  const report = await workspace.verify(descriptor.id, { worktree: true });
  assert.equal(report.ok, false);
  assert.deepEqual(report.differ, [
    { path: 'large-1.bin', reason: 'content' },
    { path: 'small-2.txt', reason: 'size', expected: 7, actual: 3 },
  ]);
  assert.deepEqual(report.missing, ['nested/small-3.txt']);
  assert.deepEqual(report.extra, ['nested/extra.txt']);
  await assert.rejects(workspace.verify('all', { worktree: true }), {
    name: 'RangeError',
    message: "id must name one snapshot when options.worktree is true (got 'all')",
  });
});

test('a tampered manifest is corrupt, for verify and restore alike', async (t) => {
  const { workspace, descriptor } = await setup(t);
  const file = path.join(workspace.repositoryPath, 'manifests', `${descriptor.id}.json`);
  writeFileSync(file, readFileSync(file, 'utf8').replace('["small-1.txt","f",420', '["small-1.txt","f",438'));
  const report = await workspace.verify(descriptor.id);
  assert.equal(report.ok, false);
  assert.equal(report.manifest, `snapshot ${descriptor.id}: manifest does not match the descriptor's payload checksum`);
  await assert.rejects(workspace.restore(descriptor.id, { force: true }), { code: codes.ERR_SNAPSHOT_CORRUPT });
});

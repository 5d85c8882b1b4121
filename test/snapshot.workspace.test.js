// Workspace basics: init and open, what a snapshot records (tree, lineage,
// engine, checksums), engine choice, unchanged files not read again, special
// files skipped, history, references, a corrupt descriptor, argument errors,
// the lock, and sharing of unchanged manifests.
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { codes, Workspace } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { writeTree } from './helpers/workspace-tree.js';

const big = (n, seed = 1) => Buffer.alloc(n, seed);

async function sample(t) {
  const dir = tempDir(t, 'ws');
  writeTree(dir, {
    'README.md': '# hello\n',
    'src/a.js': 'export const a = 1;\n',
    'src/b.js': { content: 'export const b = 2;\n', mode: 0o755 },
    'assets/big.bin': big(200 * 1024),
    'empty/': {},
    'link': { symlink: 'src/a.js' },
  });
  return { dir, workspace: await Workspace.init(dir) };
}

test('init makes a repository in .arenacache and open finds it again', async (t) => {
  const { dir, workspace } = await sample(t);
  assert.equal(workspace.path, dir);
  assert.equal(workspace.repositoryPath, path.join(dir, '.arenacache'));
  assert.equal(workspace.name, 'main');
  assert.equal(workspace.head, null);
  const again = await Workspace.open(dir);
  assert.equal(again.repositoryPath, workspace.repositoryPath);
  await assert.rejects(Workspace.init(dir), { code: codes.ERR_WORKSPACE_EXISTS, message: `${dir} is already a workspace (.arenacache exists)` });
  const elsewhere = tempDir(t, 'plain');
  await assert.rejects(Workspace.open(elsewhere), {
    code: codes.ERR_WORKSPACE_NOT_FOUND,
    message: `${elsewhere} is not a workspace (no .arenacache); create one with init`,
  });
});

test('a snapshot records the tree, lineage, the engine used and checksums', async (t) => {
  const { workspace } = await sample(t);
  const first = await workspace.snapshot({ message: 'first', tags: ['v1'] });
  assert.match(first.id, /^\d{8}T\d{9}Z-[0-9a-f]{6}$/);
  assert.equal(first.parent, null);
  assert.equal(first.message, 'first');
  assert.deepEqual(first.tags, ['v1']);
  assert.equal(first.files, 4);
  assert.equal(first.directories, 3);
  assert.equal(first.symlinks, 1);
  assert.equal(first.bytes, 8 + 20 + 20 + 200 * 1024);
  assert.equal(first.engine.requested, 'auto');
  // ext4 here: no reflink; the large file is copied by copy_file_range, the small ones packed.
  assert.equal(first.engine.reflinkSupported, false);
  assert.equal(first.engine.counts.pack, 3);
  assert.equal(first.engine.counts.copy_file_range + first.engine.counts.reflink + first.engine.counts.copy, 1);
  assert.notEqual(first.engine.used, 'reflink');
  assert.equal(first.engine.degraded, false);
  assert.match(first.payloadChecksum, /^[0-9a-f]{64}$/);
  assert.match(first.descriptorChecksum, /^[0-9a-f]{64}$/);
  assert.equal(workspace.head, first.id);

  const second = await workspace.snapshot({ message: 'second' });
  assert.equal(second.parent, first.id);
  assert.equal(second.payloadChecksum, first.payloadChecksum, 'same tree, same payload checksum');
  assert.deepEqual(workspace.describe(first.id.slice(-6)), first);
  assert.equal(workspace.describe('v1').id, first.id);
  assert.equal(workspace.describe('head').id, second.id);
});

test('engine copy never uses copy_file_range or reflink', async (t) => {
  const { workspace } = await sample(t);
  const descriptor = await workspace.snapshot({ engine: 'copy', packBelow: 0 });
  assert.equal(descriptor.engine.used, 'copy');
  assert.deepEqual(descriptor.engine.counts, { reflink: 0, copy_file_range: 0, copy: 4, pack: 0, reused: 0 });
});

test("engine 'reflink' where the filesystem cannot clone is an error, and nothing is listed", async (t) => {
  const { workspace } = await sample(t);
  await assert.rejects(workspace.snapshot({ engine: 'reflink' }), (error) => {
    assert.equal(error.code, codes.ERR_REFLINK_UNSUPPORTED);
    assert.match(error.message, /^engine 'reflink' needs a filesystem that clones extents \(XFS with reflink=1, Btrfs\) holding both .+; FICLONE failed with E[A-Z]+$/);
    return true;
  });
  assert.deepEqual(workspace.history(), []);
  assert.equal(workspace.head, null);
});

test('an unchanged file is not read again; a changed one is', async (t) => {
  const { dir, workspace } = await sample(t);
  const first = await workspace.snapshot();
  // Let the filesystem clock move past the snapshot, so keys are trusted.
  await new Promise((resolve) => setTimeout(resolve, 30));
  const second = await workspace.snapshot();
  assert.equal(second.storedBytes + second.engine.counts.reused >= 0, true);
  const resnapshot = await workspace.snapshot();
  assert.equal(resnapshot.engine.counts.reused, 4, 'every file reused from the parent');
  assert.equal(resnapshot.storedBytes, 0);
  assert.equal(resnapshot.engine.used, 'none');
  // Nothing in the tree changed: the parent's manifest is taken whole (a hard link), unread.
  assert.equal(second.keysTrusted, true);
  assert.equal(resnapshot.treeDigest, second.treeDigest);
  const manifestOf = (id) => statSync(path.join(workspace.repositoryPath, 'manifests', `${id}.json`));
  assert.equal(manifestOf(resnapshot.id).ino, manifestOf(second.id).ino);
  assert.equal(resnapshot.payloadChecksum, second.payloadChecksum);
  assert.equal((await workspace.verify(resnapshot.id)).ok, true);
  appendFileSync(path.join(dir, 'src/a.js'), '// changed\n');
  const changed = await workspace.snapshot();
  assert.notEqual(changed.treeDigest, resnapshot.treeDigest);
  assert.notEqual(manifestOf(changed.id).ino, manifestOf(resnapshot.id).ino);
  assert.equal(changed.engine.counts.reused, 3);
  assert.equal(changed.engine.counts.pack, 1);
  assert.equal(changed.storedBytes, readFileSync(path.join(dir, 'src/a.js')).length);
  assert.notEqual(changed.payloadChecksum, first.payloadChecksum);
});

test('special files are skipped and reported', async (t) => {
  const { dir, workspace } = await sample(t);
  const { execFileSync } = await import('node:child_process');
  execFileSync('mkfifo', [path.join(dir, 'pipe')]);
  const descriptor = await workspace.snapshot();
  assert.deepEqual(descriptor.skipped, [{ path: 'pipe', reason: 'fifo' }]);
  // Skipped by design, so neither a change nor a reason to refuse a restore.
  assert.equal((await workspace.status()).ok, true);
  await workspace.restore(descriptor.id);
});

test('history lists newest first as objects or a table; pins show', async (t) => {
  const { workspace } = await sample(t);
  const a = await workspace.snapshot({ message: 'a', tags: ['release'] });
  const b = await workspace.snapshot({ message: 'b' });
  await workspace.pin(a.id, { until: '2099-01-01T00:00:00Z' });
  const rows = workspace.history();
  assert.deepEqual(rows.map((row) => row.id), [b.id, a.id]);
  assert.deepEqual(rows[0].heads, ['main']);
  assert.deepEqual(rows[1].pin.until, '2099-01-01T00:00:00.000Z');
  assert.deepEqual(workspace.history({ tag: 'release' }).map((row) => row.id), [a.id]);
  assert.deepEqual(workspace.history({ limit: 1 }).map((row) => row.id), [b.id]);
  const table = workspace.history({ format: 'table' });
  assert.match(table.split('\n')[0], /^\s+ID\s+TIME\s+FILES\s+SIZE\s+ENGINE\s+TAGS\s+PIN\s+MESSAGE$/);
  assert.match(table, new RegExp(`\\* +${b.id} .* b$`, 'm'));
  assert.match(table, new RegExp(`${a.id} .*release +until 2099-01-01 +a$`, 'm'));
  assert.equal(await workspace.unpin(a.id), true);
  assert.equal(await workspace.unpin(a.id), false);
});

test('references: short ids, tags, head; ambiguity and absence are errors', async (t) => {
  const { workspace } = await sample(t);
  await assert.rejects(async () => workspace.describe('head'), {
    code: codes.ERR_SNAPSHOT_NOT_FOUND,
    message: 'the worktree has no head yet (no snapshot taken or restored here)',
  });
  const a = await workspace.snapshot({ tags: ['same'] });
  const b = await workspace.snapshot({ tags: ['same'] });
  assert.equal(workspace.describe('same').id, b.id, 'a tag names its newest snapshot');
  assert.equal(workspace.describe(a.id).id, a.id);
  assert.throws(() => workspace.describe('nosuchtag'), {
    code: codes.ERR_SNAPSHOT_NOT_FOUND,
    message: 'no snapshot has the id, short id or tag "nosuchtag"',
  });
  assert.throws(() => workspace.describe('20990101T000000000Z-abcdef'), { code: codes.ERR_SNAPSHOT_NOT_FOUND, message: 'no snapshot 20990101T000000000Z-abcdef' });
});

test('a corrupt descriptor is reported, not trusted', async (t) => {
  const { workspace } = await sample(t);
  const a = await workspace.snapshot({ message: 'original' });
  const file = path.join(workspace.repositoryPath, 'snapshots', `${a.id}.json`);
  writeFileSync(file, readFileSync(file, 'utf8').replace('original', 'tampered'));
  const fresh = await Workspace.open(workspace.path);
  assert.throws(() => fresh.describe(a.id), { code: codes.ERR_SNAPSHOT_CORRUPT, message: `snapshot ${a.id}: descriptor checksum does not match its contents` });
  assert.equal(fresh.history()[0].corrupt, true);
});

test('argument errors name the argument and what was expected', async (t) => {
  const { dir, workspace } = await sample(t);
  await assert.rejects(Workspace.init(42), { name: 'TypeError', message: 'dir must be a non-empty string without NUL bytes (got 42)' });
  await assert.rejects(Workspace.init(dir, { repository: path.join(dir, 'meta') }), {
    name: 'RangeError',
    message: `options.repository must be outside the workspace, or it would be snapshotted (got ${JSON.stringify(path.join(dir, 'meta').slice(0, 40) + (path.join(dir, 'meta').length > 40 ? '…' : ''))})`,
  });
  const dotted = path.join(dir, '..repo');
  await assert.rejects(Workspace.init(dir, { repository: dotted }), (error) => error instanceof RangeError && error.message.startsWith('options.repository must be outside the workspace'));
  await assert.rejects(workspace.snapshot({ engine: 'fast' }), { name: 'RangeError', message: `options.engine must be 'auto', 'reflink' or 'copy' (got "fast")` });
  await assert.rejects(workspace.snapshot({ threads: 0 }), { name: 'RangeError', message: 'options.threads must be an integer from 1 to 64 (got 0)' });
  await assert.rejects(workspace.snapshot({ packBelow: -1 }), { name: 'RangeError', message: 'options.packBelow must be an integer from 0 to 16 MiB (got -1)' });
  await assert.rejects(workspace.snapshot({ message: 5 }), { name: 'TypeError', message: 'options.message must be a string (got 5)' });
  await assert.rejects(workspace.snapshot({ tags: 'x' }), { name: 'TypeError', message: 'options.tags must be an array of strings (got "x")' });
  await assert.rejects(workspace.snapshot({ tags: ['bad tag'] }), {
    name: 'RangeError',
    message: `options.tags[0] must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (got "bad tag")`,
  });
  await assert.rejects(workspace.snapshot({ durable: 'yes' }), { name: 'TypeError', message: 'options.durable must be a boolean (got "yes")' });
  await assert.rejects(workspace.snapshot({ onProgress: 1 }), { name: 'TypeError', message: 'options.onProgress must be a function (got 1)' });
  await assert.rejects(workspace.snapshot({ mesage: 'typo' }), { name: 'TypeError', message: 'options.mesage is not a known option; did you mean message?' });
  assert.throws(() => workspace.history({ format: 'xml' }), { name: 'RangeError', message: `options.format must be 'json' or 'table' (got "xml")` });
  await assert.rejects(workspace.pin('head', { until: 'not a date' }), { name: 'RangeError', message: 'options.until must be a valid date (got "not a date")' });
  await assert.rejects(workspace.pin('head', { until: {} }), { name: 'TypeError', message: 'options.until must be a Date, an ISO date string or ms since the epoch (got an instance of Object)' });
  await assert.rejects(workspace.gc({ keepLast: -1 }), { name: 'RangeError', message: 'options.keepLast must be a non-negative integer (got -1)' });
  await assert.rejects(workspace.restore(7), { name: 'TypeError', message: 'id must be a string (got 7)' });
});

test('the lock: a second changer is refused while one runs', async (t) => {
  const { workspace } = await sample(t);
  const running = workspace.snapshot();
  await assert.rejects(workspace.snapshot(), (error) => {
    assert.equal(error.code, codes.ERR_WORKSPACE_BUSY);
    assert.match(error.message, /^cannot snapshot: the workspace is busy with another operation \(snapshot by process \d+\); try again when it ends$/);
    return true;
  });
  await running;
  rmSync(path.join(workspace.repositoryPath, 'lock'));
  assert.equal(existsSync(path.join(workspace.repositoryPath, 'lock')), false);
  await workspace.snapshot();
});

test('a snapshot leaves the worktree root untouched, and an external repository still shares unchanged manifests', async (t) => {
  const dir = tempDir(t, 'ws');
  writeTree(dir, { 'a.txt': 'a', 'big.bin': big(100 * 1024) });
  const repository = path.join(tempDir(t, 'repo'), 'repo');
  const workspace = await Workspace.init(dir, { repository });
  const before = statSync(dir, { bigint: true }).mtimeNs;
  const first = await workspace.snapshot();
  assert.equal(statSync(dir, { bigint: true }).mtimeNs, before, 'the root directory was not modified');
  await new Promise((resolve) => setTimeout(resolve, 30));
  const second = await workspace.snapshot();
  await new Promise((resolve) => setTimeout(resolve, 30));
  const third = await workspace.snapshot();
  assert.ok(first.treeDigest);
  const manifestOf = (id) => statSync(path.join(repository, 'manifests', `${id}.json`)).ino;
  assert.equal(manifestOf(third.id), manifestOf(second.id), 'unchanged: the manifest is shared');
});

test('an unchanged snapshot checks the manifest it shares; a damaged one is not shared', async (t) => {
  const { dir, workspace } = await sample(t);
  await workspace.snapshot();
  await new Promise((resolve) => setTimeout(resolve, 30));
  const second = await workspace.snapshot();
  const file = path.join(workspace.repositoryPath, 'manifests', `${second.id}.json`);
  writeFileSync(file, readFileSync(file, 'utf8').replace('"src"', '"srx"'));
  await assert.rejects(workspace.snapshot(), { code: codes.ERR_SNAPSHOT_CORRUPT });
  assert.equal(workspace.head, second.id);
  assert.ok(dir);
});


// Workspace snapshots stay inside their tree: references that look like paths
// are refused, a link pointing outside is kept as a link and never followed,
// and a manifest naming paths outside or through a link is refused before
// anything is written.
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { codes, Workspace } from '../lib/snapshot/index.js';
import { payloadChecksum } from '../lib/snapshot/manifest.js';
import { canonicalJson, descriptorChecksum } from '../lib/snapshot/repository.js';
import { tempDir } from './helpers/fs-tree.js';
import { writeTree } from './helpers/workspace-tree.js';

test('snapshot references that look like paths are refused', async (t) => {
  const dir = tempDir(t, 'ws');
  const workspace = await Workspace.init(dir);
  await workspace.snapshot();
  for (const bad of ['../x', '/etc/passwd', 'a/b', '.hidden', '', '..']) {
    const message = `id must be a snapshot id, its last 6 hex digits, a tag or "head" (got ${JSON.stringify(bad)})`;
    await assert.rejects(workspace.restore(bad), { name: 'RangeError', message });
    await assert.rejects(workspace.verify(bad), { name: 'RangeError', message });
    await assert.rejects(workspace.pin(bad), { name: 'RangeError', message });
    await assert.rejects(workspace.fork(bad, path.join(dir, '..', 'f')), { name: 'RangeError', message });
  }
  await assert.rejects(workspace.fork('head', path.join(tempDir(t, 'x'), 'y'), { name: '../up' }), {
    name: 'RangeError',
    message: `options.name must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (got "../up")`,
  });
});

test('a symbolic link pointing outside is kept as a link and never followed', async (t) => {
  const outside = tempDir(t, 'outside');
  writeFileSync(path.join(outside, 'secret.txt'), 'outside data');
  const dir = tempDir(t, 'ws');
  writeTree(dir, { 'out': { symlink: outside }, 'file-out': { symlink: path.join(outside, 'secret.txt') }, 'in.txt': 'in' });
  const workspace = await Workspace.init(dir);
  const descriptor = await workspace.snapshot();
  assert.equal(descriptor.files, 1, 'only in.txt: nothing behind the links was read');
  assert.equal(descriptor.symlinks, 2);
  writeFileSync(path.join(outside, 'secret.txt'), 'changed outside');
  await workspace.restore(descriptor.id, { force: true });
  assert.equal(readlinkSync(path.join(dir, 'out')), outside);
  assert.equal(lstatSync(path.join(dir, 'out')).isSymbolicLink(), true);
  assert.equal(readFileSync(path.join(outside, 'secret.txt'), 'utf8'), 'changed outside', 'restore wrote nothing through the link');
});

/** Rewrites snapshot `id`'s manifest with `entries` and re-signs its descriptor, as an attacker with write access to the repository could. */
function forge(workspace, id, entries) {
  const repo = workspace.repositoryPath;
  const manifestFile = path.join(repo, 'manifests', `${id}.json`);
  const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
  manifest.entries = entries(manifest.entries);
  writeFileSync(manifestFile, JSON.stringify(manifest));
  const descriptorFile = path.join(repo, 'snapshots', `${id}.json`);
  const descriptor = JSON.parse(readFileSync(descriptorFile, 'utf8'));
  descriptor.payloadChecksum = payloadChecksum(manifest);
  descriptor.descriptorChecksum = descriptorChecksum(descriptor);
  writeFileSync(descriptorFile, canonicalJson(descriptor));
}

test('a manifest naming paths outside the tree, or through a link, is refused before anything is written', async (t) => {
  const root = tempDir(t, 'escape');
  const dir = path.join(root, 'ws');
  mkdirSync(dir);
  writeTree(dir, { 'a.txt': 'a', 'd/b.txt': 'b', 'link': { symlink: root } });
  const workspace = await Workspace.init(dir);
  const { id } = await workspace.snapshot();
  const fileEntry = (manifest, where) => {
    const entry = [...manifest.find((e) => e[0] === 'a.txt')];
    entry[0] = where;
    return entry;
  };
  const cases = [
    ['../evil.txt', (entries) => [fileEntry(entries, '../evil.txt'), ...entries], 'names a path outside the tree: "../evil.txt"'],
    ['/abs.txt', (entries) => [fileEntry(entries, '/abs.txt'), ...entries], 'names a path outside the tree: "/abs.txt"'],
    ['d/../../x', (entries) => [...entries, fileEntry(entries, 'd/../../x')], 'names a path outside the tree: "d/../../x"'],
    ['link/evil.txt', (entries) => [...entries, fileEntry(entries, 'link/evil.txt')], 'has "link/evil.txt" outside any directory entry'],
    ['.arenacache/x', (entries) => [fileEntry(entries, '.arenacache/x'), ...entries], 'names a path outside the tree: ".arenacache/x"'],
  ];
  for (const [name, edit, detail] of cases) {
    const original = readFileSync(path.join(workspace.repositoryPath, 'manifests', `${id}.json`), 'utf8');
    const originalDescriptor = readFileSync(path.join(workspace.repositoryPath, 'snapshots', `${id}.json`), 'utf8');
    forge(workspace, id, edit);
    const fresh = await Workspace.open(dir);
    await assert.rejects(fresh.restore(id, { force: true }), { code: codes.ERR_SNAPSHOT_CORRUPT, message: `snapshot ${id}: manifest ${detail}` }, name);
    await assert.rejects(fresh.fork(id, path.join(root, 'fork')), { code: codes.ERR_SNAPSHOT_CORRUPT }, name);
    assert.equal(existsSync(path.join(root, 'evil.txt')), false);
    assert.equal(existsSync(path.join(root, 'fork')), false);
    writeFileSync(path.join(workspace.repositoryPath, 'manifests', `${id}.json`), original);
    writeFileSync(path.join(workspace.repositoryPath, 'snapshots', `${id}.json`), originalDescriptor);
  }
});

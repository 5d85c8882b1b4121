// cloneTree() copies contents, modes, times, links (not followed) and empty
// directories, skips special files, and refuses bad arguments and states
// with their errors.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { cloneTree, codes } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { readTree, writeTree } from './helpers/workspace-tree.js';

test('cloneTree copies modes, times, links (not followed), empty directories; skips special files', async (t) => {
  const base = tempDir(t, 'clone');
  const source = path.join(base, 'src');
  writeTree(source, {
    'a.txt': { content: 'a', mode: 0o600, mtime: new Date('2021-01-01T00:00:00Z') },
    'x/y/z.bin': Buffer.alloc(300 * 1024, 3),
    'x/exec': { content: '#!/bin/sh', mode: 0o755 },
    'empty/': {},
    'up': { symlink: '../..' },
  });
  execFileSync('mkfifo', [path.join(source, 'fifo')]);
  const seen = [];
  const result = await cloneTree(source, path.join(base, 'dst'), { onProgress: (p) => seen.push(p) });
  assert.equal(result.files, 3);
  assert.equal(result.directories, 3);
  assert.equal(result.symlinks, 1);
  assert.equal(result.bytes, 1 + 300 * 1024 + 9);
  assert.deepEqual(result.skipped, [{ path: 'fifo', reason: 'special file' }]);
  assert.equal(result.engine.reflinkSupported, false, 'ext4 here');
  assert.deepEqual(Object.keys(result.perFile).sort(), ['a.txt', 'x/exec', 'x/y/z.bin']);
  assert.ok(Object.values(result.perFile).every((engine) => engine === 'copy_file_range' || engine === 'copy'));
  const expected = readTree(source, { withTimes: true });
  delete expected.fifo;
  assert.deepEqual(readTree(path.join(base, 'dst'), { withTimes: true }), expected);
  assert.deepEqual(seen.at(-1), { phase: 'clone', done: 3, total: 3, bytes: result.bytes });
  const copied = await cloneTree(source, path.join(base, 'dst-copy'), { engine: 'copy' });
  assert.deepEqual(new Set(Object.values(copied.perFile)), new Set(['copy']));
});

test('cloneTree argument and state errors', async (t) => {
  const base = tempDir(t, 'clone');
  writeTree(base, { 'src/a': 'a' });
  const source = path.join(base, 'src');
  await assert.rejects(cloneTree(1, 'x'), { name: 'TypeError', message: 'source must be a non-empty string without NUL bytes (got 1)' });
  await assert.rejects(cloneTree(source, ''), { name: 'TypeError', message: 'target must be a non-empty string without NUL bytes (got "")' });
  await assert.rejects(cloneTree(source, path.join(base, 'd'), { engine: 'x' }), { name: 'RangeError', message: `options.engine must be 'auto', 'reflink' or 'copy' (got "x")` });
  await assert.rejects(cloneTree(source, path.join(base, 'd'), { threads: 100 }), { name: 'RangeError', message: 'options.threads must be an integer from 1 to 64 (got 100)' });
  await assert.rejects(cloneTree(source, source), { code: codes.ERR_WORKSPACE_EXISTS, message: `cannot clone into ${source}: it exists` });
  await assert.rejects(cloneTree(source, path.join(source, 'inner')), { name: 'RangeError' });
  await assert.rejects(cloneTree(path.join(base, 'missing'), path.join(base, 'd2')), (error) => error.code === codes.ERR_SNAPSHOT_IO && error.cause.code === 'ENOENT');
});

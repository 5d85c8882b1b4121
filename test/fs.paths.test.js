// CacheFS confines every path to its root, and checks its options.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { MiB } from './helpers/units.js';

function setup(t) {
  const root = tempDir(t, 'root');
  const outside = tempDir(t, 'outside');
  writeFileSync(path.join(outside, 'secret'), 'not yours');
  mkdirSync(path.join(root, 'docs'));
  writeFileSync(path.join(root, 'docs', 'a.txt'), 'inside');
  symlinkSync(outside, path.join(root, 'escape'));
  symlinkSync(path.join(root, 'docs'), path.join(root, 'alias'));
  return { root, cfs: new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB }) }) };
}

test('paths are relative to the root; ".." above it is refused, not clamped', async (t) => {
  const { root, cfs } = setup(t);
  assert.equal(await cfs.readFile('docs/a.txt', 'utf8'), 'inside');
  assert.equal(await cfs.readFile('/docs/a.txt', 'utf8'), 'inside');
  assert.equal(await cfs.readFile('docs/../docs/./a.txt', 'utf8'), 'inside');
  for (const escape of ['..', '../x', '/../x', 'docs/../../x']) {
    await assert.rejects(cfs.readFile(escape), {
      name: 'ArenaCacheError',
      code: 'ERR_PATH_OUTSIDE_ROOT',
      message: `path ${JSON.stringify(escape)} is outside the root ${cfs.root}`,
    });
  }
  assert.equal(cfs.root, root);
});

test('a symbolic link leading out of the root is refused for every kind of call; one inside is followed', async (t) => {
  const { cfs } = setup(t);
  const refused = { name: "ArenaCacheError", code: "ERR_PATH_OUTSIDE_ROOT", message: /^path "escape(\/(secret|new|a\.txt))?" is outside the root / };
  await assert.rejects(cfs.readFile('escape/secret'), refused);
  assert.throws(() => cfs.readFileSync('escape/secret'), refused);
  await assert.rejects(cfs.stat('escape'), refused);
  await assert.rejects(cfs.readdir('escape'), refused);
  await assert.rejects(cfs.writeFile('escape/new', 'x'), refused);
  await assert.rejects(cfs.rm('escape/secret'), refused);
  await assert.rejects(cfs.rename('docs/a.txt', 'escape/a.txt'), refused);
  assert.equal(await cfs.readFile('alias/a.txt', 'utf8'), 'inside');
});

test('missing files and directories fail as node:fs does', async (t) => {
  const { root, cfs } = setup(t);
  await assert.rejects(cfs.readFile('nope.txt'), { code: 'ENOENT', message: `ENOENT: no such file or directory, open '${path.join(root, 'nope.txt')}'` });
  assert.throws(() => cfs.statSync('nope'), { code: 'ENOENT' });
  await assert.rejects(cfs.readFile('docs'), { code: 'EISDIR' });
  await assert.rejects(cfs.readdir('docs/a.txt'), { code: 'ENOTDIR', syscall: 'scandir' });
  await assert.rejects(cfs.readdir('nope'), { code: 'ENOENT', syscall: 'scandir', message: `ENOENT: no such file or directory, scandir '${path.join(root, 'nope')}'` });
  assert.throws(() => cfs.readdirSync('nope'), { code: 'ENOENT', syscall: 'scandir' });
  await assert.rejects(cfs.writeFile('docs', 'x'), { code: 'EISDIR' });
  await assert.rejects(cfs.writeFile('missing-dir/x', 'x'), { code: 'ENOENT' });
  await assert.rejects(cfs.unlink(''), { code: 'ERR_PATH_OUTSIDE_ROOT', message: 'path "" is the root itself, which CacheFS does not remove' });
});

test('bad arguments and options are specific errors', async (t) => {
  const { root, cfs } = setup(t);
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  assert.throws(() => new CacheFS(), { name: 'TypeError', message: 'options.root and options.cache are required: new CacheFS({ root, cache })' });
  assert.throws(() => new CacheFS({ root: 7, cache }), { name: 'TypeError', message: 'options.root must be the path of a directory or an InodeFS (got 7)' });
  assert.throws(() => new CacheFS({ root, cache: new Map() }), { name: 'TypeError', message: 'options.cache must be a SharedCache (got an instance of Map)' });
  assert.throws(() => new CacheFS({ root, cache, writeMode: 'write-sideways' }), {
    name: 'RangeError',
    message: 'options.writeMode must be one of \'write-through\', \'write-back\', \'write-around\' (got "write-sideways")',
  });
  assert.throws(() => new CacheFS({ root, cache, writemode: 'write-around' }), { name: 'TypeError', message: 'options.writemode is not a known option; did you mean writeMode?' });
  assert.throws(() => new CacheFS({ root, cache, validateMs: -1 }), {
    name: 'RangeError',
    message: 'options.validateMs must be an integer from 0 (check every call) to 86400000 milliseconds (got -1)',
  });
  assert.throws(() => new CacheFS({ root, cache, blockBytes: 8 * MiB }), { name: 'RangeError', message: /^options\.blockBytes \(8388608\) must fit in one entry of the cache/ });
  assert.throws(() => new CacheFS({ root: path.join(root, 'nope'), cache }), { name: 'ArenaCacheError', code: 'ERR_FS_ROOT', message: /^options\.root .*nope cannot be served: ENOENT/ });
  assert.throws(() => new CacheFS({ root: path.join(root, 'docs', 'a.txt'), cache }), { code: 'ERR_FS_ROOT', message: /cannot be served: ENOTDIR/ });
  await assert.rejects(cfs.readFile(42), { name: 'TypeError', message: 'path must be a string (got 42)' });
  await assert.rejects(cfs.readFile('a\0b'), { name: 'RangeError', message: 'path must not contain NUL characters (got "a\\u0000b")' });
  await assert.rejects(cfs.readFile('docs/a.txt', 'klingon'), { name: 'TypeError', message: 'options must be a Buffer encoding such as \'utf8\' (got "klingon")' });
  await assert.rejects(cfs.readFile('docs/a.txt', { flag: 'r' }), { name: 'TypeError', message: 'options.flag is not a known option of readFile(); the only one is encoding' });
  await assert.rejects(cfs.writeFile('x', 12), { name: 'TypeError', message: 'data must be a string, Buffer, TypedArray or DataView (got 12)' });
  await assert.rejects(cfs.writeFile('x', 'y', { mode: -1 }), { name: 'RangeError', message: 'options.mode must be a file mode from 0 to 0o7777 (got -1)' });
  await assert.rejects(cfs.rename(1, 'b'), { name: 'TypeError', message: 'from must be a string (got 1)' });
  await assert.rejects(cfs.mkdir('m', { recursive: 1 }), { name: 'TypeError', message: 'options.recursive must be a boolean (got 1)' });
  await assert.rejects(cfs.mkdir('m', { mode: 0o10000 }), { name: 'RangeError', message: 'options.mode must be a file mode from 0 to 0o7777 (got 4096)' });
  await assert.rejects(cfs.mkdir('m', -1), { name: 'RangeError', message: 'options must be a file mode from 0 to 0o7777 (got -1)' });
  await assert.rejects(cfs.mkdir('m', { parents: true }), { name: 'TypeError', message: 'options.parents is not a known option of mkdir(); they are recursive and mode' });
  await assert.rejects(cfs.rm('docs', { recursive: 'yes' }), { name: 'TypeError', message: 'options.recursive must be a boolean (got "yes")' });
  await assert.rejects(cfs.rm('docs', { force: 1 }), { name: 'TypeError', message: 'options.force must be a boolean (got 1)' });
  await assert.rejects(cfs.rm('docs', { maxRetries: 3 }), { name: 'TypeError', message: 'options.maxRetries is not a known option of rm(); they are recursive and force' });
  await assert.rejects(cfs.open('docs/a.txt', 'rw'), { name: 'RangeError', message: 'flags must be one of r, r+, rs+, w, wx, w+, wx+, a, ax, a+, ax+ (got "rw")' });
  assert.equal(await cfs.mkdir('m', 0o700), undefined);
  assert.equal(await cfs.mkdir('m/n/o', { recursive: true, mode: 0o700 }), 'm/n');
  assert.ok((await cfs.stat('docs')).isDirectory(), 'nothing was removed by the refused calls');
});

test('close() waits for the calls in flight before letting go of the root; later calls fail', async (t) => {
  const { cfs } = setup(t);
  const reads = Array.from({ length: 20 }, () => cfs.readFile('docs/a.txt', 'utf8').catch((error) => error.code));
  const closing = cfs.close();
  assert.deepEqual(await Promise.all(reads), Array(20).fill('inside'));
  await closing;
  await assert.rejects(cfs.readFile('docs/a.txt'), { code: 'ERR_FS_CLOSED' });
  assert.throws(() => cfs.statSync('docs'), { code: 'ERR_FS_CLOSED' });
});

test('a path with a lone surrogate is refused before anything is touched (node:fs would write U+FFFD instead)', async (t) => {
  const { root, cfs } = setup(t);
  const message = 'path must be well-formed UTF-16: it has a lone surrogate (got "x\\ud800")';
  await assert.rejects(cfs.writeFile('x\uD800', 'data'), { name: 'RangeError', message });
  await assert.rejects(cfs.mkdir('x\uD800'), { name: 'RangeError', message });
  await assert.rejects(cfs.readFile('x\uD800'), { name: 'RangeError', message });
  assert.throws(() => cfs.statSync('x\uD800'), { name: 'RangeError', message });
  assert.deepEqual(readdirSync(root).sort(), ['alias', 'docs', 'escape']);
});

for (const writeMode of ['write-through', 'write-back', 'write-around']) {
  test(`a path too long for the cache's keys is served from the disk, uncached (${writeMode})`, async (t) => {
    const root = tempDir(t, 'long');
    const cache = new SharedCache({ memoryBytes: 4 * MiB, maxKeyBytes: 100 });
    const blocks = writeMode === 'write-back' ? new (await import('../lib/index.js')).BlockStore({ memoryBytes: 2 * MiB }) : undefined;
    const cfs = new CacheFS({ root, cache, writeMode, blocks, flushIntervalMs: 0 });
    t.after(() => cfs.close());
    const long = `${'d'.repeat(60)}/${'f'.repeat(80)}.txt`;
    assert.equal(await cfs.mkdir(long.split('/')[0], { recursive: true }), long.split('/')[0]);
    await cfs.writeFile(long, 'long path');
    await cfs.appendFile(long, '!');
    assert.equal(await cfs.readFile(long, 'utf8'), 'long path!');
    assert.equal(cfs.readFileSync(long, 'utf8'), 'long path!');
    assert.equal((await cfs.stat(long)).size, 10);
    assert.deepEqual(await cfs.readdir(long.split('/')[0]), [long.split('/')[1]]);
    await cfs.flush();
    assert.equal(readFileSync(path.join(root, long), 'utf8'), 'long path!');
    const { readHits } = cfs.stats();
    assert.equal(await cfs.readFile(long, 'utf8'), 'long path!');
    assert.equal(cfs.stats().readHits, readHits, 'never a hit: it is not cached');
    await cfs.rename(long, `${long.split('/')[0]}/short`);
    assert.equal(await cfs.readFile(`${long.split('/')[0]}/short`, 'utf8'), 'long path!');
    await cfs.rm(long.split('/')[0], { recursive: true });
    assert.deepEqual(readdirSync(root), []);
  });
}

// lib/native/root-files.js rootFiles() and rootFilesSync(): CacheFS's file operations on
// paths beneath a root's descriptor. Each answers as node:fs answers the
// same call by path (values, stats, errors), follows links that stay inside
// the root and refuses the ones that leave it. The race against swapped
// directories is in fs.symlink-race.test.js.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import test from 'node:test';
import { nativeAvailable, nativeBinary } from '../lib/native/addon.js';
import * as native from '../lib/native/root-files.js';
import { tempDir } from './helpers/fs-tree.js';

const skip = nativeAvailable ? false : 'the native addon is not loaded (ARENACACHE_NATIVE=off or not built)';
const FIELDS = ['dev', 'ino', 'mode', 'nlink', 'uid', 'gid', 'rdev', 'size', 'blksize', 'blocks', 'atimeMs', 'mtimeMs', 'ctimeMs', 'birthtimeMs'];
const { O_RDONLY, O_DIRECTORY, O_WRONLY, O_CREAT, O_TRUNC, O_APPEND } = fs.constants;

/** A root directory opened as CacheFS opens it; `call(op, path, ...)` runs an operation beneath it, synchronously. */
function rootOf(t, name = 'root') {
  const root = fs.realpathSync(tempDir(t, name));
  const fd = fs.openSync(root, O_RDONLY | O_DIRECTORY);
  t.after(() => fs.closeSync(fd));
  const call = (op, p, dest = '', flags = 0, mode = 0, data = undefined) => native.rootFilesSync(op, fd, root, p, dest, flags, mode, data);
  const later = (op, p, dest = '', flags = 0, mode = 0, data = undefined) => native.rootFiles(op, fd, root, p, dest, flags, mode, data);
  // Joined by hand: path.join would normalize "a.txt/." to "a.txt".
  return { root, fd, call, later, at: (p) => `${root}/${p}` };
}

/** What a call threw or rejected with, as a plain object. */
async function failure(run) {
  try {
    await run();
  } catch (error) {
    return { message: error.message, code: error.code, errno: error.errno, syscall: error.syscall, path: error.path, dest: error.dest };
  }
  throw new Error('expected a failure');
}

test('load gives the bytes and the stats node:fs gives, in both forms', { skip }, async (t) => {
  const { call, later, at } = rootOf(t);
  const sizes = { empty: 0, small: 100, large: 300 * 1024 };
  for (const [name, size] of Object.entries(sizes)) {
    fs.writeFileSync(at(name), Buffer.alloc(size, name.charCodeAt(0)));
    for (const { before, data, after } of [call(native.ROOT_LOAD, name), await later(native.ROOT_LOAD, name)]) {
      assert.ok(Buffer.isBuffer(data));
      assert.deepEqual(data, fs.readFileSync(at(name)), name);
      const stats = fs.statSync(at(name));
      for (const field of FIELDS) assert.equal(after[field], stats[field], `${name} after.${field}`);
      for (const field of FIELDS.filter((f) => f !== 'atimeMs')) assert.equal(before[field], stats[field], `${name} before.${field}`);
    }
  }
});

test('load reads files whose size stat does not know (procfs)', { skip }, async () => {
  const root = fs.realpathSync('/proc/self');
  const fd = fs.openSync(root, O_RDONLY | O_DIRECTORY);
  try {
    const { data } = await native.rootFiles(native.ROOT_LOAD, fd, root, 'status', '', 0, 0);
    assert.match(data.toString(), /^Name:/);
  } finally {
    fs.closeSync(fd);
  }
});

test('stat, readdir, mkdir, unlink, rename and rm answer as node:fs does', { skip }, async (t) => {
  const { call, later, at } = rootOf(t);
  fs.mkdirSync(at('d'));
  fs.writeFileSync(at('d/f'), 'x');
  const stats = call(native.ROOT_STAT, 'd/f');
  for (const field of FIELDS) assert.equal(stats[field], fs.statSync(at('d/f'))[field], field);
  assert.deepEqual((await later(native.ROOT_READDIR, 'd')).sort(), fs.readdirSync(at('d')).sort());
  assert.equal(call(native.ROOT_MKDIR, 'e', '', 0, 0o755), undefined);
  assert.equal(fs.statSync(at('e')).mode & 0o777, 0o755 & ~process.umask());
  assert.equal(call(native.ROOT_MKDIR, 'e/x/y/z', '', native.ROOT_RECURSIVE, 0o777), 'e/x');
  assert.equal(call(native.ROOT_MKDIR, 'e/x/y/z', '', native.ROOT_RECURSIVE, 0o777), undefined, 'nothing made');
  assert.equal(call(native.ROOT_MKDIR, 'new/.', '', native.ROOT_RECURSIVE, 0o777), 'new', 'as node:fs names it');
  call(native.ROOT_RENAME, 'd/f', 'e/g');
  assert.equal(fs.readFileSync(at('e/g'), 'utf8'), 'x');
  await later(native.ROOT_UNLINK, 'e/g');
  assert.equal(fs.existsSync(at('e/g')), false);
  assert.deepEqual(await failure(() => call(native.ROOT_RM, 'e')), await failure(() => fs.rmSync(at('e'))));
  call(native.ROOT_RM, 'e', '', native.ROOT_RECURSIVE);
  assert.equal(fs.existsSync(at('e')), false);
  call(native.ROOT_RM, 'e', '', native.ROOT_RECURSIVE | native.ROOT_FORCE);
  assert.deepEqual(await failure(() => call(native.ROOT_RM, 'e', '', native.ROOT_RECURSIVE)), await failure(() => fs.rmSync(at('e'), { recursive: true })));
});

test('store writes, appends and creates; rewrite replaces in place; open gives a descriptor', { skip }, async (t) => {
  const { call, later, at } = rootOf(t);
  const written = call(native.ROOT_STORE, 'f', '', O_WRONLY | O_CREAT | O_TRUNC, 0o640, Buffer.from('hello'));
  assert.equal(written.size, 5);
  assert.equal(written.ino, fs.statSync(at('f')).ino);
  assert.equal(fs.statSync(at('f')).mode & 0o777, 0o640 & ~process.umask());
  await later(native.ROOT_STORE, 'f', '', O_WRONLY | O_CREAT | O_APPEND, 0o666, Buffer.from(' world'));
  assert.equal(fs.readFileSync(at('f'), 'utf8'), 'hello world');
  const inode = fs.statSync(at('f')).ino;
  assert.equal(call(native.ROOT_REWRITE, 'f', '', 0, 0o666, Buffer.from('bye')).size, 3);
  assert.equal(fs.readFileSync(at('f'), 'utf8'), 'bye');
  assert.equal(fs.statSync(at('f')).ino, inode, 'the same file, rewritten in place');
  const fd = await later(native.ROOT_OPEN, 'f', '', O_RDONLY, 0);
  assert.equal(fs.readFileSync(fd, 'utf8'), 'bye');
  native.closeRootDescriptor(fd);
  // Only what ROOT_OPEN handed out, once: never the root's descriptor, nor node's own.
  assert.throws(() => native.closeRootDescriptor(fd), { code: 'EBADF', syscall: 'close' });
  const own = fs.openSync(at('f'), 'r');
  assert.throws(() => native.closeRootDescriptor(own), { code: 'EBADF' });
  fs.closeSync(own);
});

test('errors are shaped and worded as node:fs shapes and words them', { skip }, async (t) => {
  const { call, later, at } = rootOf(t);
  fs.writeFileSync(at('file'), 'x');
  fs.mkdirSync(at('dir'));
  const cases = [
    [() => later(native.ROOT_LOAD, 'missing'), () => fsp.readFile(at('missing'))],
    [() => later(native.ROOT_LOAD, 'dir'), () => fsp.readFile(at('dir'))],
    [() => later(native.ROOT_LOAD, 'missing/x'), () => fsp.readFile(at('missing/x'))],
    [() => later(native.ROOT_LOAD, 'file/below'), () => fsp.readFile(at('file/below'))],
    [() => call(native.ROOT_STAT, 'missing'), () => fs.statSync(at('missing'))],
    [() => call(native.ROOT_READDIR, 'file'), () => fs.readdirSync(at('file'))],
    [() => call(native.ROOT_MKDIR, 'dir', '', 0, 0o777), () => fs.mkdirSync(at('dir'))],
    [() => call(native.ROOT_MKDIR, 'missing/x', '', 0, 0o777), () => fs.mkdirSync(at('missing/x'))],
    [() => call(native.ROOT_UNLINK, 'dir'), () => fs.unlinkSync(at('dir'))],
    [() => call(native.ROOT_RENAME, 'missing', 'other'), () => fs.renameSync(at('missing'), at('other'))],
    [() => call(native.ROOT_RM, 'missing'), () => fs.rmSync(at('missing'))],
    [() => call(native.ROOT_STORE, 'dir', '', O_WRONLY | O_CREAT | O_TRUNC, 0o666, Buffer.from('x')), () => fs.writeFileSync(at('dir'), 'x')],
  ];
  for (const [ours, node] of cases) assert.deepEqual(await failure(ours), await failure(node), ours.toString());
  assert.equal((await failure(() => call(native.ROOT_STAT, 'missing'))).message, `ENOENT: no such file or directory, stat '${at('missing')}'`);
});

test('a path ending in "/" or "/." asks for a directory, as it does of node:fs', { skip }, async (t) => {
  const { call, at } = rootOf(t);
  const reset = () => {
    fs.rmSync(at('zz'), { recursive: true, force: true });
    fs.rmSync(at('new'), { recursive: true, force: true });
    fs.rmSync(at('d'), { recursive: true, force: true });
    fs.writeFileSync(at('a.txt'), 'hi');
    fs.writeFileSync(at('b.txt'), 'b');
    fs.mkdirSync(at('d'));
    fs.writeFileSync(at('d/inside'), 'x');
  };
  const pairs = {
    load: [(p) => call(native.ROOT_LOAD, p), (p) => fs.readFileSync(at(p))],
    stat: [(p) => call(native.ROOT_STAT, p), (p) => fs.statSync(at(p))],
    readdir: [(p) => call(native.ROOT_READDIR, p), (p) => fs.readdirSync(at(p))],
    store: [(p) => call(native.ROOT_STORE, p, '', O_WRONLY | O_CREAT | O_TRUNC, 0o666, Buffer.from('x')), (p) => fs.writeFileSync(at(p), 'x')],
    unlink: [(p) => call(native.ROOT_UNLINK, p), (p) => fs.unlinkSync(at(p))],
    rm: [(p) => call(native.ROOT_RM, p), (p) => fs.rmSync(at(p))],
    // The promise form: CacheFS's rm is one (and node:fs's two forms differ for some link paths, see fs.trailing-slash.test.js).
    rmRecursive: [(p) => call(native.ROOT_RM, p, '', native.ROOT_RECURSIVE), (p) => fsp.rm(at(p), { recursive: true })],
    mkdir: [(p) => call(native.ROOT_MKDIR, p, '', 0, 0o777), (p) => fs.mkdirSync(at(p))],
    mkdirRecursive: [(p) => call(native.ROOT_MKDIR, p, '', native.ROOT_RECURSIVE, 0o777), (p) => fs.mkdirSync(at(p), { recursive: true })],
    renameFrom: [(p) => call(native.ROOT_RENAME, p, 'zz'), (p) => fs.renameSync(at(p), at('zz'))],
    renameTo: [(p) => call(native.ROOT_RENAME, 'b.txt', p), (p) => fs.renameSync(at('b.txt'), at(p))],
  };
  const codeOf = async (run, p) => {
    try {
      await run(p);
      return 'ok';
    } catch (error) {
      return error.code;
    }
  };
  for (const p of ['a.txt/', 'a.txt/.', 'd/', 'd/.', 'd/./', 'new/', 'new/.']) {
    for (const [name, [ours, node]] of Object.entries(pairs)) {
      reset();
      const expected = await codeOf(node, p);
      const treeAfterNode = fs.readdirSync(at('')).sort().join();
      reset();
      assert.equal(await codeOf(ours, p), expected, `${name}(${JSON.stringify(p)})`);
      assert.equal(fs.readdirSync(at('')).sort().join(), treeAfterNode, `${name}(${JSON.stringify(p)}) leaves the tree node:fs leaves`);
    }
  }
});

for (const walk of [false, true]) {
  const how = walk ? 'one component at a time (ARENACACHE_OPENAT2=off)' : 'with openat2';
  test(`links are followed while they stay beneath the root, ${how}`, { skip }, async (t) => {
    if (walk && process.env.ARENACACHE_OPENAT2 !== 'off') {
      // The switch is read once per process: run this test again in a child that has it.
      const { execFileSync } = await import('node:child_process');
      // Without the runner's NODE_TEST_CONTEXT the child reports to us, in
      // TAP (asked for: Node 23 and later default to the spec reporter).
      const { NODE_TEST_CONTEXT, ...env } = process.env;
      const output = execFileSync(process.execPath, ['--test', '--test-reporter=tap', '--test-name-pattern=one component at a time', new URL(import.meta.url).pathname], {
        env: { ...env, ARENACACHE_OPENAT2: 'off' },
        encoding: 'utf8',
      });
      assert.match(output, /# pass 1\n/);
      return;
    }
    const { root, call } = rootOf(t);
    const outside = fs.realpathSync(tempDir(t, 'outside'));
    fs.writeFileSync(path.join(outside, 'secret'), 'outside');
    fs.mkdirSync(path.join(root, 'docs'));
    fs.mkdirSync(path.join(root, 'sub'));
    fs.writeFileSync(path.join(root, 'docs', 'a.txt'), 'inside');
    const links = {
      relative: 'docs',
      absolute: path.join(root, 'docs'),
      'absolute-with-dots': path.join(root, 'sub', '..', 'docs'),
      'sub/up': '../docs',
      'to-root': root,
      'to-file': 'docs/a.txt',
      'escape-absolute': outside,
      'escape-relative': path.relative(root, outside),
      'sub/escape-up': '../..',
      'to-parent-prefix': `${root}-other`,
      loop: 'loop',
      dangling: 'nowhere',
    };
    for (const [name, target] of Object.entries(links)) fs.symlinkSync(target, path.join(root, name));
    const read = (p) => call(native.ROOT_LOAD, p).data.toString();
    assert.equal(read('relative/a.txt'), 'inside');
    assert.equal(read('absolute/a.txt'), 'inside');
    assert.equal(read('absolute-with-dots/a.txt'), 'inside');
    assert.equal(read('sub/up/a.txt'), 'inside');
    assert.equal(read('to-root/docs/a.txt'), 'inside');
    assert.equal(read('to-file'), 'inside');
    assert.equal(call(native.ROOT_STAT, 'absolute').ino, fs.statSync(path.join(root, 'docs')).ino);
    for (const p of ['escape-absolute/secret', 'escape-relative/secret', 'sub/escape-up', 'to-parent-prefix']) {
      assert.throws(() => call(native.ROOT_LOAD, p), { code: 'ERR_PATH_OUTSIDE_ROOT', relative: p }, p);
      assert.throws(() => call(native.ROOT_STAT, p), { code: 'ERR_PATH_OUTSIDE_ROOT' }, p);
    }
    assert.throws(() => call(native.ROOT_MKDIR, 'escape-absolute/new', '', 0, 0o777), { code: 'ERR_PATH_OUTSIDE_ROOT', relative: 'escape-absolute/new' });
    assert.throws(() => call(native.ROOT_RENAME, 'docs/a.txt', 'escape-absolute/a.txt'), { code: 'ERR_PATH_OUTSIDE_ROOT', relative: 'escape-absolute/a.txt' });
    assert.throws(() => call(native.ROOT_STORE, 'escape-relative/new', '', O_WRONLY | O_CREAT, 0o666, Buffer.from('x')), { code: 'ERR_PATH_OUTSIDE_ROOT' });
    assert.equal(fs.readdirSync(outside).join(), 'secret', 'nothing was made outside');
    assert.throws(() => call(native.ROOT_LOAD, 'loop'), { code: 'ELOOP' });
    assert.throws(() => call(native.ROOT_LOAD, 'dangling'), { code: 'ENOENT' });
    // A link is an entry of its own directory: unlink and rm remove the link, never what it names.
    call(native.ROOT_UNLINK, 'escape-absolute');
    call(native.ROOT_RM, 'escape-relative', '', native.ROOT_RECURSIVE);
    assert.equal(fs.readFileSync(path.join(outside, 'secret'), 'utf8'), 'outside');
    // "x/" asks for what link x names: still resolved beneath the root, and
    // the answer never depends on what is outside (a directory, a file, nothing).
    assert.throws(() => call(native.ROOT_RM, 'sub/escape-up/', '', native.ROOT_RECURSIVE), { code: 'ERR_PATH_OUTSIDE_ROOT' });
    fs.symlinkSync(path.join(outside, 'secret'), path.join(root, 'to-outside-file'));
    fs.symlinkSync(path.join(outside, 'missing'), path.join(root, 'to-outside-nothing'));
    for (const link of ['sub/escape-up', 'to-outside-file', 'to-outside-nothing']) {
      for (const suffix of ['/', '/.']) {
        const p = `${link}${suffix}`;
        assert.throws(() => call(native.ROOT_MKDIR, p, '', 0, 0o777), { code: 'ERR_PATH_OUTSIDE_ROOT', relative: p }, `mkdir ${p}`);
        assert.throws(() => call(native.ROOT_UNLINK, p), { code: 'ERR_PATH_OUTSIDE_ROOT' }, `unlink ${p}`);
        assert.throws(() => call(native.ROOT_RENAME, p, 'moved'), { code: 'ERR_PATH_OUTSIDE_ROOT' }, `rename ${p}`);
        assert.throws(() => call(native.ROOT_RENAME, 'docs', p), { code: 'ERR_PATH_OUTSIDE_ROOT' }, `rename to ${p}`);
      }
    }
    assert.ok(fs.existsSync(path.join(root, 'docs', 'a.txt')));
  });
}

test('rm with recursive removes a tree without following the links in it', { skip }, async (t) => {
  const { call, at } = rootOf(t);
  const outside = tempDir(t, 'outside');
  fs.writeFileSync(path.join(outside, 'keep'), 'keep');
  fs.mkdirSync(at('tree/a/b'), { recursive: true });
  fs.writeFileSync(at('tree/a/b/f'), 'x');
  fs.symlinkSync(outside, at('tree/a/out'));
  fs.symlinkSync(path.join(outside, 'keep'), at('tree/keep'));
  call(native.ROOT_RM, 'tree', '', native.ROOT_RECURSIVE);
  assert.equal(fs.existsSync(at('tree')), false);
  assert.equal(fs.readFileSync(path.join(outside, 'keep'), 'utf8'), 'keep');
});

test('rootFiles and rootFilesSync check their arguments; the raw addon throws instead of crashing', { skip }, (t) => {
  const { root, fd } = rootOf(t);
  const cases = [
    [() => native.rootFilesSync(0, fd, root, 'a', '', 0, 0), RangeError, 'op must be one of the ROOT_* operations (got 0)'],
    [() => native.rootFilesSync(native.ROOT_STAT, -1, root, 'a', '', 0, 0), RangeError, 'fd must be a file descriptor (got -1)'],
    [() => native.rootFilesSync(native.ROOT_STAT, fd, 'relative', 'a', '', 0, 0), TypeError, 'rootPath must be an absolute path without NUL bytes (got "relative")'],
    [() => native.rootFilesSync(native.ROOT_STAT, fd, root, 7, '', 0, 0), TypeError, 'path must be a string (got 7)'],
    [() => native.rootFilesSync(native.ROOT_STAT, fd, root, '/etc', '', 0, 0), RangeError, 'path must be a path relative to the root, without ".." or NUL (got "/etc")'],
    [() => native.rootFilesSync(native.ROOT_STAT, fd, root, 'a/../..', '', 0, 0), RangeError, 'path must be a path relative to the root, without ".." or NUL (got "a/../..")'],
    [() => native.rootFiles(native.ROOT_RENAME, fd, root, 'a', 'b\0c', 0, 0), RangeError, 'dest must be a path relative to the root, without ".." or NUL (got "b\\u0000c")'],
    [() => native.rootFilesSync(native.ROOT_OPEN, fd, root, 'a', '', -1, 0), RangeError, 'flags must be a non-negative 32-bit integer (got -1)'],
    [() => native.rootFilesSync(native.ROOT_MKDIR, fd, root, 'a', '', 0, 0o10000), RangeError, 'mode must be a file mode from 0 to 0o7777 (got 4096)'],
    [() => native.rootFiles(native.ROOT_STORE, fd, root, 'a', '', 0, 0, 'text'), TypeError, 'data must be a Buffer or Uint8Array (got "text")'],
  ];
  for (const [run, name, message] of cases) assert.throws(run, { name: name.name, message });
  const addon = createRequire(import.meta.url)(nativeBinary);
  assert.throws(() => addon.rootFilesSync(), { name: 'TypeError' });
  assert.throws(() => addon.rootFiles('x', fd, root, 'a', '', 0, 0), { name: 'TypeError' });
  assert.throws(() => addon.rootFilesSync(native.ROOT_STORE, fd, root, 'a', '', 0, 0, 'x'), { name: 'TypeError' });
  assert.throws(() => addon.rootFilesSync(native.ROOT_STAT, fd, root, 'a\0b', '', 0, 0), { name: 'RangeError' });
  assert.throws(() => addon.rootFilesSync(99, fd, root, 'a', '', 0, 0), { name: 'RangeError' });
  assert.throws(() => addon.rootFilesSync(native.ROOT_STAT, fd, root, '../x', '', 0, 0), { code: 'ERR_PATH_OUTSIDE_ROOT' });
});

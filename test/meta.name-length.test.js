// Names and paths too long for Linux are ENAMETOOLONG in an InodeFS, as in
// node:fs: a name over 255 UTF-8 bytes (NAME_MAX), a path of 4096 bytes or
// more (PATH_MAX), a symbolic link target of 4096 bytes or more, in every
// call that takes a name. Names up to the limit work, and copy to disk.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';

const LONG = 'x'.repeat(256);

/** node:fs's ENAMETOOLONG for `syscall` on `p` (and `dest`). */
function tooLong(syscall, p, dest) {
  const target = dest === undefined ? `'${p}'` : `'${p}' -> '${dest}'`;
  return { name: 'Error', code: 'ENAMETOOLONG', errno: -36, syscall, path: p, ...(dest === undefined ? {} : { dest }), message: `ENAMETOOLONG: name too long, ${syscall} ${target}` };
}

/** A path of exactly `bytes` UTF-8 bytes: "/d/d/.../d" padded with a name. */
function pathOf(bytes) {
  let p = '';
  while (p.length + 6 <= bytes) p += '/ddd';
  return `${p}/${'e'.repeat(bytes - p.length - 1)}`;
}

test('a name over 255 bytes is ENAMETOOLONG in every call that takes one, with the shape node:fs gives it', async (t) => {
  const ifs = await openFs(t);
  await ifs.mkdir('/d');
  await ifs.writeFile('/f', 'x');
  const long = `/${LONG}`;
  const inDir = `/d/${LONG}`;
  for (const p of [long, inDir]) {
    await assert.rejects(ifs.writeFile(p, 'x'), tooLong('open', p));
    assert.throws(() => ifs.writeFileSync(p, 'x'), tooLong('open', p));
    await assert.rejects(ifs.appendFile(p, 'x'), tooLong('open', p));
    await assert.rejects(ifs.open(p, 'w'), tooLong('open', p));
    await assert.rejects(ifs.open(p, 'wx'), tooLong('open', p));
    await assert.rejects(ifs.open(p), tooLong('open', p));
    await assert.rejects(ifs.readFile(p), tooLong('open', p));
    await assert.rejects(ifs.stat(p), tooLong('stat', p));
    await assert.rejects(ifs.lstat(p), tooLong('lstat', p));
    await assert.rejects(ifs.readdir(p), tooLong('scandir', p));
    await assert.rejects(ifs.readlink(p), tooLong('readlink', p));
    await assert.rejects(ifs.mkdir(p), tooLong('mkdir', p));
    await assert.rejects(ifs.unlink(p), tooLong('unlink', p));
    await assert.rejects(ifs.rm(p), tooLong('rm', p));
    await assert.rejects(ifs.rm(p, { force: true }), tooLong('rm', p));
    await assert.rejects(ifs.truncate(p), tooLong('open', p));
    await assert.rejects(ifs.chmod(p, 0o600), tooLong('chmod', p));
    await assert.rejects(ifs.utimes(p, 1, 1), tooLong('utime', p));
    await assert.rejects(ifs.rename('/f', p), tooLong('rename', '/f', p));
    await assert.rejects(ifs.rename(p, '/g'), tooLong('rename', p, '/g'));
    await assert.rejects(ifs.symlink('f', p), tooLong('symlink', 'f', p));
  }
  // A name in the middle of a path, and in a recursive mkdir (which creates nothing).
  await assert.rejects(ifs.stat(`${inDir}/a`), tooLong('stat', `${inDir}/a`));
  await assert.rejects(ifs.mkdir(`/new/${LONG}/b`, { recursive: true }), tooLong('mkdir', `/new/${LONG}/b`));
  await assert.rejects(ifs.stat('/new'), { code: 'ENOENT' });
  // lmdb's key limit (about 1,978 bytes) is never reached: a 2,000-byte name is ENAMETOOLONG too.
  const huge = `/${'y'.repeat(2000)}`;
  await assert.rejects(ifs.writeFile(huge, 'x'), tooLong('open', huge));
  await assert.rejects(ifs.mkdir(huge), tooLong('mkdir', huge));
  // A snapshot resolves paths as the InodeFS does.
  const snap = ifs.createSnapshot('names');
  await assert.rejects(snap.stat(long), tooLong('stat', long));
  snap.release();
  assert.deepEqual(await ifs.readdir('/'), ['d', 'f']);
  assert.deepEqual(await ifs.readdir('/d'), []);
  assert.equal(ifs.fsck().ok, true);
});

test('names are counted in UTF-8 bytes: 255 bytes work and copy to disk, 256 do not', async (t) => {
  const ifs = await openFs(t);
  const names = ['a'.repeat(255), '€'.repeat(85), `${'é'.repeat(127)}a`, '😀'.repeat(63) + 'abc'];
  for (const name of names) {
    assert.equal(Buffer.byteLength(name), 255);
    await ifs.mkdir(`/${name}`);
    await ifs.writeFile(`/${name}/${name}`, name);
    await ifs.symlink(name, `/${name}/link`);
  }
  for (const name of ['a'.repeat(256), '€'.repeat(86), 'é'.repeat(128), '😀'.repeat(64)]) {
    assert.equal(Buffer.byteLength(name) > 255, true);
    await assert.rejects(ifs.writeFile(`/${name}`, 'x'), tooLong('open', `/${name}`));
  }
  const dir = path.join(tempDir(t, 'out'), 'copy');
  assert.deepEqual(await ifs.copyToDir(dir), { files: 4, directories: 4, symlinks: 4, bytes: 4 * 255 });
  for (const name of names) assert.equal(fs.readFileSync(path.join(dir, name, 'link'), 'utf8'), name);
});

test('a path of 4096 bytes or more is ENAMETOOLONG; 4095 bytes resolve as usual', async (t) => {
  const ifs = await openFs(t);
  assert.equal(Buffer.byteLength(pathOf(4095)), 4095);
  assert.equal(Buffer.byteLength(pathOf(4096)), 4096);
  await assert.rejects(ifs.stat(pathOf(4095)), { code: 'ENOENT' });
  for (const bytes of [4096, 4097, 10_000]) {
    const p = pathOf(bytes);
    await assert.rejects(ifs.stat(p), tooLong('stat', p));
    await assert.rejects(ifs.writeFile(p, 'x'), tooLong('open', p));
    await assert.rejects(ifs.mkdir(p, { recursive: true }), tooLong('mkdir', p));
    await assert.rejects(ifs.rename('/missing', p), tooLong('rename', '/missing', p));
  }
  // Multi-byte characters count as their UTF-8 bytes.
  const wide = `/${'€/'.repeat(1023)}abc`;
  assert.equal(Buffer.byteLength(wide), 4096);
  await assert.rejects(ifs.stat(wide), tooLong('stat', wide));
  // A path made long by ".." and "." is still too long, as for the kernel, which checks the string.
  const padded = `/${'./'.repeat(2048)}`;
  await assert.rejects(ifs.stat(padded), tooLong('stat', padded));
  assert.equal((await ifs.stat(`/${'./'.repeat(2046)}`)).isDirectory(), true);
});

test('a symbolic link target of 4096 bytes or more is ENAMETOOLONG; a target with a long name is stored, and fails when followed', async (t) => {
  const ifs = await openFs(t);
  const target = 'a/'.repeat(2048);
  await assert.rejects(ifs.symlink(target, '/link'), tooLong('symlink', target, '/link'));
  await ifs.symlink(`${'a/'.repeat(2047)}a`, '/ok');
  await ifs.symlink(LONG, '/far');
  assert.equal(await ifs.readlink('/far'), LONG);
  await assert.rejects(ifs.stat('/far'), tooLong('stat', '/far'));
  await assert.rejects(ifs.writeFile('/far', 'x'), tooLong('open', '/far'));
  await ifs.mkdir('/d');
  await ifs.symlink(`/d/${LONG}`, '/d/far');
  await assert.rejects(ifs.readFile('/d/far'), tooLong('open', '/d/far'));
});

test('CacheFS over an InodeFS gives the ENAMETOOLONG a directory on disk gives', async (t) => {
  const ifs = await openFs(t);
  const cache = new SharedCache({ memoryBytes: 2 ** 21 });
  t.after(() => cache.close());
  const outcomes = [];
  for (const root of [ifs, tempDir(t, 'disk')]) {
    const cached = new CacheFS({ root, cache, validateMs: 0 });
    const errors = [];
    for (const call of [() => cached.writeFile(LONG, 'x'), () => cached.stat(LONG), () => cached.mkdir(LONG), () => cached.readFile(`${LONG}/f`)]) {
      const error = await call().then(() => null, (e) => e);
      // (The syscall differs: CacheFS on a directory finds the long name in its realpath check.)
      errors.push(error?.code);
    }
    await cached.close();
    outcomes.push(errors);
  }
  assert.deepEqual(outcomes[0], outcomes[1]);
  assert.deepEqual(outcomes[0], ['ENAMETOOLONG', 'ENAMETOOLONG', 'ENAMETOOLONG', 'ENAMETOOLONG']);
});

test('a name with a lone surrogate is refused before anything is stored, so every name can be read back and copied', async (t) => {
  const ifs = await openFs(t);
  const message = 'path must be well-formed UTF-16: it has a lone surrogate (got "/x\\ud800")';
  await assert.rejects(ifs.writeFile('/x\uD800', 'data'), { name: 'RangeError', message });
  await assert.rejects(ifs.mkdir('/x\uD800'), { name: 'RangeError', message });
  assert.throws(() => ifs.writeFileSync('/x\uD800', 'data'), { name: 'RangeError', message });
  assert.deepEqual(await ifs.readdir('/'), []);
  await ifs.writeFile('/ok', 'fine');
  const out = path.join(tempDir(t, 'copy'), 'tree');
  await ifs.copyToDir(out);
  assert.deepEqual(fs.readdirSync(out), ['ok']);
});

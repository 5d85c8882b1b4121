// A path ending in "/" or "/." asks for a directory: "a.txt/" is not
// "a.txt". CacheFS once normalized both to "a.txt" (so rm('a.txt/.')
// removed the file where node:fs says ENOTDIR); now every call answers as
// node:fs does, whether or not the cache already holds "a.txt", over a
// directory and over an InodeFS. A trailing slash follows a link to a
// directory for a lookup, but a link is not a directory to remove or move.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import test from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { BlockStore, SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { MiB } from './helpers/units.js';

const PATHS = ['a.txt/', 'a.txt/.', 'd/', 'd/.', 'd/./', 'new/', 'new/.'];
const LINK_PATHS = ['link-to-dir/', 'link-to-dir/.', 'link-to-file/', 'dangling-link/', 'dangling-link/.'];

/** The same call on CacheFS and on node:fs, promise and sync forms (paths joined by hand: path.join would drop "/."). */
const CALLS = {
  readFile: [(cfs, p) => cfs.readFile(p, 'utf8'), (at) => fs.promises.readFile(at, 'utf8'), (at) => fs.readFileSync(at, 'utf8')],
  readFileSync: [(cfs, p) => cfs.readFileSync(p, 'utf8'), (at) => fs.promises.readFile(at, 'utf8'), (at) => fs.readFileSync(at, 'utf8')],
  stat: [async (cfs, p) => (await cfs.stat(p)).isDirectory(), async (at) => (await fs.promises.stat(at)).isDirectory(), (at) => fs.statSync(at).isDirectory()],
  readdir: [async (cfs, p) => (await cfs.readdir(p)).sort(), async (at) => (await fs.promises.readdir(at)).sort(), (at) => fs.readdirSync(at).sort()],
  writeFile: [(cfs, p) => cfs.writeFile(p, 'x'), (at) => fs.promises.writeFile(at, 'x'), (at) => fs.writeFileSync(at, 'x')],
  appendFile: [(cfs, p) => cfs.appendFile(p, 'x'), (at) => fs.promises.appendFile(at, 'x'), (at) => fs.appendFileSync(at, 'x')],
  unlink: [(cfs, p) => cfs.unlink(p), (at) => fs.promises.unlink(at), (at) => fs.unlinkSync(at)],
  rm: [(cfs, p) => cfs.rm(p), (at) => fs.promises.rm(at), (at) => fs.rmSync(at)],
  rmRecursive: [(cfs, p) => cfs.rm(p, { recursive: true }), (at) => fs.promises.rm(at, { recursive: true }), (at) => fs.rmSync(at, { recursive: true })],
  mkdir: [(cfs, p) => cfs.mkdir(p), (at) => fs.promises.mkdir(at), (at) => fs.mkdirSync(at)],
  renameFrom: [(cfs, p) => cfs.rename(p, 'zz'), (at, root) => fs.promises.rename(at, `${root}/zz`), (at, root) => fs.renameSync(at, `${root}/zz`)],
  renameTo: [(cfs, p) => cfs.rename('b.txt', p), (at, root) => fs.promises.rename(`${root}/b.txt`, at), (at, root) => fs.renameSync(`${root}/b.txt`, at)],
  open: [async (cfs, p) => (await cfs.open(p)).close(), async (at) => (await fs.promises.open(at)).close(), (at) => fs.closeSync(fs.openSync(at))],
};

/** Rebuilds the tree under `top` in `f` (node:fs on a directory, or an InodeFS with top ""). */
function reset(f, top) {
  for (const name of f.readdirSync(top || '/')) f.rmSync(`${top}/${name}`, { recursive: true, force: true });
  f.writeFileSync(`${top}/a.txt`, 'hi');
  f.writeFileSync(`${top}/b.txt`, 'b');
  f.mkdirSync(`${top}/d`);
  f.writeFileSync(`${top}/d/inside`, 'in');
  f.symlinkSync('d', `${top}/link-to-dir`);
  f.symlinkSync('a.txt', `${top}/link-to-file`);
  f.symlinkSync('nowhere', `${top}/dangling-link`);
}

async function outcome(run) {
  try {
    return { value: await run() };
  } catch (error) {
    return { code: error.code };
  }
}

/** The tree as names and contents (directories as "dir", links as their targets), to compare what each call left behind. */
function tree(f, top) {
  const out = {};
  const walk = (dir, prefix) => {
    for (const name of f.readdirSync(dir || '/').sort()) {
      const full = `${dir}/${name}`;
      const stats = f.lstatSync(full);
      if (stats.isSymbolicLink()) out[`${prefix}${name}`] = `-> ${f.readlinkSync(full)}`;
      else if (stats.isDirectory()) {
        out[`${prefix}${name}/`] = 'dir';
        walk(full, `${prefix}${name}/`);
      }
      else out[`${prefix}${name}`] = f.readFileSync(full, 'utf8');
    }
  };
  walk(top, '');
  return out;
}

/** The two kinds of backing, each as { cfsRoot, f, top } to give CacheFS, build and inspect it. */
const BACKINGS = {
  directory: async (t) => {
    const root = tempDir(t, 'slash');
    return { cfsRoot: root, f: fs, top: root };
  },
  InodeFS: async (t) => {
    const ifs = await InodeFS.open(`${tempDir(t, 'slash-ifs')}/fs.lmdb`, { durable: false });
    t.after(() => ifs.close());
    return { cfsRoot: ifs, f: ifs, top: '' };
  },
};

/**
 * node:fs's answer for `p`: its promise form's, except where its sync form
 * says otherwise. There its promise form resolves without doing anything
 * (rm('link-to-dir/', { recursive: true }): rimraf takes rmdir's ENOTDIR for
 * "not a directory after all"), or some versions' sync form removes what the
 * promise form leaves: the code is the sync form's, the tree the promise form's
 * (unless the sync form succeeds where the promise form fails: see below).
 */
async function nodeAnswer(call, plain, p) {
  const [, promise, sync] = call;
  const run = async (form) => {
    if (plain.changed) reset(fs, plain.dir);
    const result = await outcome(() => form(`${plain.dir}/${p}`, plain.dir));
    const after = tree(fs, plain.dir);
    plain.changed = !isDeepStrictEqual(after, plain.pristine);
    return { result, after };
  };
  const { result, after } = await run(promise);
  const { result: syncResult } = await run(sync);
  // Node 23 and later's rmSync(p, { recursive: true }) (std::filesystem)
  // fails on "d/." with an error whose code is empty ("Unknown error") where
  // rmdir fails with EINVAL: a sync form that succeeds, or fails without a
  // code, where the promise form failed with one is not the kernel's answer.
  const syncHidesError = !syncResult.code && result.code !== undefined;
  return { result: isDeepStrictEqual(result, syncResult) || syncHidesError ? result : syncResult, tree: after };
}

/** nodeAnswer() of each call and path, asked once for every backing and mode. */
const nodeAnswers = new Map();
function expectedAnswer(plain, name, p) {
  const key = `${name} ${p}`;
  if (!nodeAnswers.has(key)) nodeAnswers.set(key, nodeAnswer(CALLS[name], plain, p));
  return nodeAnswers.get(key);
}

async function compare(t, backing, paths, writeMode) {
  const { cfsRoot, f, top } = await BACKINGS[backing](t);
  const plain = { dir: tempDir(t, 'slash-plain') };
  reset(fs, plain.dir);
  plain.pristine = tree(fs, plain.dir);
  reset(f, top);
  const pristine = tree(f, top);
  let changed = false;
  const cache = new SharedCache({ memoryBytes: 8 * MiB });
  const blocks = writeMode === 'write-back' ? new BlockStore({ memoryBytes: 2 * MiB }) : undefined;
  for (const warm of [false, true]) {
    for (const p of paths) {
      for (const [name, call] of Object.entries(CALLS)) {
        const expected = await expectedAnswer(plain, name, p);
        if (changed) reset(f, top);
        const cfs = new CacheFS({ root: cfsRoot, cache, writeMode, blocks, flushIntervalMs: 0 });
        if (warm) {
          // The cache holds a.txt, d and d's listing: a hit must not answer for "a.txt/".
          assert.equal(await cfs.readFile('a.txt', 'utf8'), 'hi');
          await cfs.stat('d');
          await cfs.readdir('d');
        }
        const actual = await outcome(() => call[0](cfs, p));
        await cfs.close();
        const label = `${name}(${JSON.stringify(p)})${warm ? ' with a.txt cached' : ''}`;
        assert.deepEqual(actual, expected.result, label);
        const after = tree(f, top);
        assert.deepEqual(after, expected.tree, `${label} leaves the tree node:fs leaves`);
        // Most calls fail and change nothing: the tree is built again only when one did.
        changed = !isDeepStrictEqual(after, pristine);
      }
    }
  }
}

for (const backing of Object.keys(BACKINGS)) {
  for (const writeMode of ['write-through', 'write-back']) {
    test(`every call answers "x/" and "x/." as node:fs does, cached or not (over ${backing === 'InodeFS' ? 'an InodeFS' : 'a directory'}, ${writeMode})`, async (t) => {
      await compare(t, backing, PATHS, writeMode);
    });
  }
  // rm('link-to-dir/', { recursive: true }) must not empty d before its ENOTDIR: node:fs removes nothing.
  test(`a trailing slash on a link answers as node:fs does (over ${backing === 'InodeFS' ? 'an InodeFS' : 'a directory'})`, async (t) => {
    await compare(t, backing, LINK_PATHS, 'write-through');
  });
}

test('rm("a.txt/.") is ENOTDIR and leaves the file, as node:fs does', async (t) => {
  for (const backing of Object.keys(BACKINGS)) {
    const { cfsRoot, f, top } = await BACKINGS[backing](t);
    f.writeFileSync(`${top}/a.txt`, 'keep');
    const cfs = new CacheFS({ root: cfsRoot, cache: new SharedCache({ memoryBytes: 4 * MiB }) });
    assert.equal(await cfs.readFile('a.txt', 'utf8'), 'keep');
    // The error is the backing's: node:fs's lstat over a directory, the call itself over an InodeFS.
    const at = backing === 'directory' ? `${fs.realpathSync(top)}/` : '/';
    await assert.rejects(cfs.rm('a.txt/.'), { code: 'ENOTDIR', syscall: backing === 'directory' ? 'lstat' : 'rm' });
    await assert.rejects(cfs.rm('a.txt/', { recursive: true }), { code: 'ENOTDIR' });
    await assert.rejects(cfs.readFile('a.txt/'), { code: 'ENOTDIR', message: `ENOTDIR: not a directory, open '${at}a.txt/'` });
    assert.equal(await cfs.readFile('a.txt', 'utf8'), 'keep');
    assert.equal(f.readFileSync(`${top}/a.txt`, 'utf8'), 'keep');
    await cfs.close();
  }
});

// A path ending in "/" or "/." asks for a directory: "a.txt/" is not
// "a.txt". CacheFS once normalized both to "a.txt" (so rm('a.txt/.')
// removed the file where node:fs says ENOTDIR); now every call answers as
// node:fs does, whether or not the cache already holds "a.txt".
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import test from 'node:test';
import { BlockStore, SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';

const MiB = 2 ** 20;
const PATHS = ['a.txt/', 'a.txt/.', 'd/', 'd/.', 'd/./', 'new/', 'new/.'];

/** The same call on CacheFS and on node:fs (paths joined by hand: path.join would drop "/."). */
const CALLS = {
  readFile: [(cfs, p) => cfs.readFile(p, 'utf8'), (root, p) => fs.promises.readFile(`${root}/${p}`, 'utf8')],
  readFileSync: [(cfs, p) => cfs.readFileSync(p, 'utf8'), (root, p) => fs.readFileSync(`${root}/${p}`, 'utf8')],
  stat: [async (cfs, p) => (await cfs.stat(p)).isDirectory(), async (root, p) => (await fs.promises.stat(`${root}/${p}`)).isDirectory()],
  readdir: [async (cfs, p) => (await cfs.readdir(p)).sort(), async (root, p) => (await fs.promises.readdir(`${root}/${p}`)).sort()],
  writeFile: [(cfs, p) => cfs.writeFile(p, 'x'), (root, p) => fs.promises.writeFile(`${root}/${p}`, 'x')],
  appendFile: [(cfs, p) => cfs.appendFile(p, 'x'), (root, p) => fs.promises.appendFile(`${root}/${p}`, 'x')],
  unlink: [(cfs, p) => cfs.unlink(p), (root, p) => fs.promises.unlink(`${root}/${p}`)],
  rm: [(cfs, p) => cfs.rm(p), (root, p) => fs.promises.rm(`${root}/${p}`)],
  rmRecursive: [(cfs, p) => cfs.rm(p, { recursive: true }), (root, p) => fs.promises.rm(`${root}/${p}`, { recursive: true })],
  mkdir: [(cfs, p) => cfs.mkdir(p), (root, p) => fs.promises.mkdir(`${root}/${p}`)],
  renameFrom: [(cfs, p) => cfs.rename(p, 'zz'), (root, p) => fs.promises.rename(`${root}/${p}`, `${root}/zz`)],
  renameTo: [(cfs, p) => cfs.rename('b.txt', p), (root, p) => fs.promises.rename(`${root}/b.txt`, `${root}/${p}`)],
  open: [async (cfs, p) => (await cfs.open(p)).close(), async (root, p) => (await fs.promises.open(`${root}/${p}`)).close()],
};

function reset(root) {
  for (const name of ['zz', 'new', 'd', 'a.txt', 'b.txt']) fs.rmSync(`${root}/${name}`, { recursive: true, force: true });
  fs.writeFileSync(`${root}/a.txt`, 'hi');
  fs.writeFileSync(`${root}/b.txt`, 'b');
  fs.mkdirSync(`${root}/d`);
  fs.writeFileSync(`${root}/d/inside`, 'in');
}

async function outcome(run) {
  try {
    return { value: await run() };
  } catch (error) {
    return { code: error.code };
  }
}

/** The tree as names and contents, to compare what each call left behind. */
function tree(root) {
  const out = {};
  const walk = (dir, prefix) => {
    for (const name of fs.readdirSync(dir).sort()) {
      const full = `${dir}/${name}`;
      if (fs.statSync(full).isDirectory()) walk(full, `${prefix}${name}/`);
      else out[`${prefix}${name}`] = fs.readFileSync(full, 'utf8');
    }
  };
  walk(root, '');
  return out;
}

for (const writeMode of ['write-through', 'write-back']) {
  test(`every call answers "x/" and "x/." as node:fs does, cached or not (${writeMode})`, async (t) => {
    const root = tempDir(t, 'slash');
    const plain = tempDir(t, 'slash-plain');
    const cache = new SharedCache({ memoryBytes: 8 * MiB });
    const blocks = writeMode === 'write-back' ? new BlockStore({ memoryBytes: 2 * MiB }) : undefined;
    for (const warm of [false, true]) {
      for (const p of PATHS) {
        for (const [name, [ours, node]] of Object.entries(CALLS)) {
          reset(root);
          reset(plain);
          const cfs = new CacheFS({ root, cache, writeMode, blocks, flushIntervalMs: 0 });
          if (warm) {
            // The cache holds a.txt, d and d's listing: a hit must not answer for "a.txt/".
            assert.equal(await cfs.readFile('a.txt', 'utf8'), 'hi');
            await cfs.stat('d');
            await cfs.readdir('d');
          }
          const expected = await outcome(() => node(plain, p));
          const actual = await outcome(() => ours(cfs, p));
          await cfs.close();
          const label = `${name}(${JSON.stringify(p)})${warm ? ' with a.txt cached' : ''}`;
          assert.deepEqual(actual, expected, label);
          assert.deepEqual(tree(root), tree(plain), `${label} leaves the tree node:fs leaves`);
        }
      }
    }
  });
}

test('rm("a.txt/.") is ENOTDIR and leaves the file, as node:fs does', async (t) => {
  const root = tempDir(t, 'slash');
  fs.writeFileSync(`${root}/a.txt`, 'keep');
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB }) });
  t.after(() => cfs.close());
  assert.equal(await cfs.readFile('a.txt', 'utf8'), 'keep');
  await assert.rejects(cfs.rm('a.txt/.'), { code: 'ENOTDIR', syscall: 'lstat' });
  await assert.rejects(cfs.rm('a.txt/', { recursive: true }), { code: 'ENOTDIR' });
  await assert.rejects(cfs.readFile('a.txt/'), { code: 'ENOTDIR', message: `ENOTDIR: not a directory, open '${fs.realpathSync(root)}/a.txt/'` });
  assert.equal(await cfs.readFile('a.txt', 'utf8'), 'keep');
  assert.equal(fs.readFileSync(`${root}/a.txt`, 'utf8'), 'keep');
});

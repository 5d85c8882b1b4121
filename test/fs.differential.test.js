// Randomized differential test: the same random sequence of operations runs
// against CacheFS (two instances sharing one cache, as two threads would) on
// one tree (a directory, or an InodeFS) and against plain node:fs on another. Every result (or error
// code) and the final trees must be identical, in every write mode (for
// write-back, the two instances share one block store, flushes come at
// random points, and the trees are compared after close()).
// SEED=<n> replays a run; STRESS=1 runs longer.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { BlockStore, SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { InodeFS } from '../lib/inode-fs/index.js';
import { snapshotTree, tempDir } from './helpers/fs-tree.js';
import { untilCacheable } from './helpers/racy.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';

const OPERATIONS = STRESS ? 20_000 : 1500;
const DIRS = ['', 'd1', 'd1/d2', 'd3'];
const NAMES = ['a', 'b', 'c.txt'];

/** Plain node:fs with the same relative-path API as CacheFS. */
function plainFs(root) {
  const at = (p) => path.join(root, p);
  return {
    readFile: (p, o) => fsp.readFile(at(p), o),
    readFileSync: (p, o) => fs.readFileSync(at(p), o),
    writeFile: (p, d) => fsp.writeFile(at(p), d),
    appendFile: (p, d) => fsp.appendFile(at(p), d),
    stat: (p) => fsp.stat(at(p)),
    statSync: (p) => fs.statSync(at(p)),
    readdir: (p) => fsp.readdir(at(p)),
    readdirSync: (p) => fs.readdirSync(at(p)),
    mkdir: async (p, o) => {
      const first = await fsp.mkdir(at(p), o);
      return first === undefined ? undefined : path.relative(root, first);
    },
    unlink: (p) => fsp.unlink(at(p)),
    rm: (p, o) => fsp.rm(at(p), o),
    rename: (a, b) => fsp.rename(at(a), at(b)),
    open: (p, flags) => fsp.open(at(p), flags),
  };
}

const FLAGS = ['r', 'r+', 'w', 'w+', 'a', 'a+'];

/** Operations on open handles: the same call on CacheFS's handle and on node's. */
async function handleOperation(random, handles, side) {
  const roll = random.int(100);
  const slot = random.int(handles.length);
  const handle = handles[slot][side];
  if (process.env.TRACE && side === 'plain') console.error('  slot', slot, 'roll', roll);
  // Transfers of nothing are drawn often: node:fs answers some of them
  // without a system call (a 0-byte write on a read-only handle resolves, where
  // write(2) is EBADF), which a uniform size drew once in a few hundred runs.
  if (roll < 30) {
    const buffer = Buffer.alloc(random.int(8) === 0 ? 0 : random.int(6000));
    const length = random.int(8) === 0 ? 0 : buffer.length;
    const position = random.int(3) === 0 ? null : random.int(9000);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    return buffer.subarray(0, bytesRead);
  }
  if (roll < 60) {
    const data = Buffer.alloc(random.int(8) === 0 ? 0 : random.int(5000), random.int(256));
    const length = random.int(8) === 0 ? 0 : data.length;
    const position = random.int(3) === 0 ? null : random.int(9000);
    return (await handle.write(data, 0, length, position)).bytesWritten;
  }
  if (roll < 70) return handle.truncate(random.int(7000));
  if (roll < 85) {
    // A directory's size is the filesystem's own business (ext4: 4096, an InodeFS: 0).
    const stats = await handle.stat();
    return stats.isFile() ? stats.size : 'dir';
  }
  await handle.close();
  return 'closed';
}

async function outcome(run) {
  try {
    const value = await run();
    if (Buffer.isBuffer(value)) return { value: value.toString('hex') };
    if (Array.isArray(value)) return { value: [...value].sort() };
    if (value && typeof value.isFile === 'function') return { value: { size: value.isFile() ? value.size : 'dir', file: value.isFile(), dir: value.isDirectory() } };
    return { value };
  } catch (error) {
    if (!error.code || error.code.startsWith('ERR_')) throw error;
    return { error: error.code };
  }
}

function randomOperation(random) {
  const dir = random.pick(DIRS);
  const file = `${dir ? `${dir}/` : ''}${random.pick(NAMES)}`;
  const data = Buffer.alloc(random.int(3) === 0 ? random.int(9000) : random.int(40), random.int(256));
  const roll = random.int(100);
  if (roll < 20) return ['writeFile', file, data];
  if (roll < 30) return ['appendFile', file, data];
  if (roll < 50) return ['readFile', file];
  if (roll < 55) return ['readFileSync', file, 'latin1'];
  if (roll < 63) return ['stat', random.int(4) === 0 ? dir : file];
  if (roll < 66) return ['statSync', file];
  if (roll < 74) return ['readdir', dir];
  if (roll < 76) return ['readdirSync', dir];
  if (roll < 82) return ['mkdir', random.pick(DIRS.slice(1)), { recursive: random.int(2) === 0 }];
  if (roll < 88) return ['unlink', file];
  if (roll < 92) return ['rm', random.int(2) === 0 ? file : random.pick(DIRS.slice(1)), { recursive: true, force: random.int(2) === 0 }];
  const to = `${random.pick(DIRS) ? `${random.pick(DIRS.slice(1))}/` : ''}${random.pick(NAMES)}`;
  return ['rename', random.int(4) === 0 ? random.pick(DIRS.slice(1)) : file, to];
}

/** The root CacheFS serves, with d1 made: a directory, or an InodeFS; and how to see its final tree. */
async function cachedTree(t, backing) {
  const dir = tempDir(t, 'cachefs');
  if (backing === 'directory') {
    fs.mkdirSync(path.join(dir, 'd1'));
    return { root: dir, tree: () => snapshotTree(dir) };
  }
  const ifs = await InodeFS.open(path.join(dir, 'fs.lmdb'));
  t.after(() => ifs.close());
  await ifs.mkdir('/d1');
  return {
    root: ifs,
    tree: async () => {
      const out = tempDir(t, 'copied');
      await ifs.copyToDir(out);
      assert.equal(ifs.fsck().ok, true, JSON.stringify(ifs.fsck().problems));
      return snapshotTree(out);
    },
  };
}

const RUNS = [
  ...['write-through', 'write-back', 'write-around'].flatMap((writeMode) => [0, 60_000].map((validateMs) => ({ backing: 'directory', writeMode, validateMs }))),
  // The same operations over an InodeFS: its semantics must be node:fs's too.
  { backing: 'InodeFS', writeMode: 'write-through', validateMs: 0 },
  { backing: 'InodeFS', writeMode: 'write-back', validateMs: 60_000 },
];

for (const { backing, writeMode, validateMs } of RUNS) {
  {
    test(`${OPERATIONS} random operations: CacheFS on a ${backing} (${writeMode}, validateMs ${validateMs}) matches node:fs exactly`, async (t) => {
      const seed = testSeed();
      const random = seededRandom(seed);
      const { root: cachedRoot, tree } = await cachedTree(t, backing);
      const plainRoot = tempDir(t, 'plainfs');
      fs.mkdirSync(path.join(plainRoot, 'd1'));
      // A small cache, so that entries are also evicted along the way.
      const cache = new SharedCache({ memoryBytes: 2 * 2 ** 20, max: 200 });
      const blocks = writeMode === 'write-back' ? new BlockStore({ memoryBytes: 2 ** 20, blockBytes: 4096 }) : undefined;
      const options = { root: cachedRoot, cache, writeMode, validateMs, blockBytes: 4096, blocks, flushIntervalMs: 0 };
      const cached = [new CacheFS(options), new CacheFS(options)];
      const plain = plainFs(plainRoot);
      const handles = [];
      for (let op = 0; op < OPERATIONS; op++) {
        if (handles.length > 0 && random.int(4) === 0) {
          // Both sides draw the same random numbers: replay the generator for the second.
          const state = random.int(2 ** 31);
          const expected = await outcome(() => handleOperation(seededRandom(state), handles, 'plain'));
          const actual = await outcome(() => handleOperation(seededRandom(state), handles, 'cached'));
          if (process.env.TRACE) console.error(op, 'handle', state, JSON.stringify(expected).slice(0, 60));
          assert.deepEqual(actual, expected, `operation ${op}: handle operation ${state} (SEED=${seed})`);
          if (expected.value === 'closed') {
            const replay = seededRandom(state);
            replay.int(100);
            handles.splice(replay.int(handles.length), 1);
          }
          continue;
        }
        if (handles.length < 3 && random.int(8) === 0) {
          const file = `${random.pick(DIRS) ? `${random.pick(DIRS.slice(1))}/` : ''}${random.pick(NAMES)}`;
          const flags = random.pick(FLAGS);
          const instance = random.pick(cached);
          let plainHandle = null;
          let cachedHandle = null;
          const expected = await outcome(async () => {
            plainHandle = await plain.open(file, flags);
            return 'opened';
          });
          const actual = await outcome(async () => {
            cachedHandle = await instance.open(file, flags);
            return 'opened';
          });
          if (process.env.TRACE) console.error(op, 'open', file, flags, JSON.stringify(expected));
          assert.deepEqual(actual, expected, `operation ${op}: open(${file}, ${flags}) (SEED=${seed})`);
          if (plainHandle !== null && cachedHandle !== null) handles.push({ cached: cachedHandle, plain: plainHandle });
          continue;
        }
        if (writeMode === 'write-back' && random.int(40) === 0) {
          await random.pick(cached).flush();
          continue;
        }
        const [name, ...args] = randomOperation(random);
        const instance = random.pick(cached);
        const expected = await outcome(() => plain[name](...args));
        const actual = await outcome(() => instance[name](...args));
        // TRACE=1 prints the sequence (with SEED=..., to follow a failure).
        if (process.env.TRACE) console.error(op, cached.indexOf(instance), name, args.map((a) => (Buffer.isBuffer(a) ? `<${a.length}>` : a)), JSON.stringify(expected).slice(0, 60));
        assert.deepEqual(actual, expected, `operation ${op}: ${name}(${JSON.stringify(args.map((a) => (Buffer.isBuffer(a) ? `<${a.length} bytes>` : a)))}) (SEED=${seed})`);
      }
      // The cache serves repeated reads. Checked on a file of its own: a
      // random sequence may have no hit at all (write-around drops what
      // every write touches; SEED=2196115186 had none).
      await plain.writeFile('probe.txt', 'probe');
      await cached[0].writeFile('probe.txt', 'probe');
      // Just written, it is read from the disk until its stamps are old enough to trust (the racily clean rule).
      if (backing === 'directory') await untilCacheable(path.join(cachedRoot, 'probe.txt'));
      const hitsBefore = cached[0].stats().readHits;
      for (let i = 0; i < 3; i++) assert.equal(await cached[0].readFile('probe.txt', 'utf8'), 'probe');
      assert.ok(cached[0].stats().readHits >= hitsBefore + 2, `repeated reads were served from the cache (SEED=${seed})`);
      for (const pair of handles) {
        await pair.cached.close();
        await pair.plain.close();
      }
      for (const instance of cached) await instance.close();
      assert.deepEqual(await tree(), snapshotTree(plainRoot), `final trees (SEED=${seed})`);
      if (writeMode === 'write-back') {
        const both = cached.map((instance) => instance.stats());
        assert.ok(both.some((s) => s.writeBacks > 0) && both.some((s) => s.flushedFiles > 0), 'writes were kept dirty and flushed later');
        assert.equal(blocks.stats().dirtyBlocks, 0, 'nothing is left dirty after close()');
      }
    });
  }
}

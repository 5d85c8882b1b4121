// Reads and writes of nothing on a handle answer as node:fs FileHandle's do,
// whatever the access mode: node:fs resolves a write of an empty buffer
// (and a read of length 0) without a system call, so a read-only handle
// writes 0 bytes where write(2) would fail with EBADF. A write of length 0
// from a non-empty buffer does reach write(2) (EBADF on a read-only handle).
// Found by fs.differential.test.js (SEED=3468261831, operation 608, before
// it drew transfers of nothing often: a 0-byte write was 1 size in 5000).
import assert from 'node:assert/strict';
import * as fsp from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { BlockStore, SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';

const FLAGS = ['r', 'r+', 'w', 'w+', 'a', 'a+'];
const CALLS = {
  'write of an empty buffer at 0': [0, (h, buffer) => h.write(buffer, 0, 0, 0)],
  'write of an empty buffer at the position': [0, (h, buffer) => h.write(buffer, 0, 0, null)],
  'write of 0 bytes of a 3-byte buffer': [3, (h, buffer) => h.write(buffer, 0, 0, 0)],
  'read into an empty buffer': [0, (h, buffer) => h.read(buffer, 0, 0, 0)],
  'read of 0 bytes into a 3-byte buffer': [3, (h, buffer) => h.read(buffer, 0, 0, null)],
};

/** What a call answers: the byte count (and whether the caller's buffer comes back), or the error code. */
async function answer([size, call], handle) {
  const buffer = Buffer.alloc(size);
  try {
    const result = await call(handle, buffer);
    return { bytes: result.bytesWritten ?? result.bytesRead, sameBuffer: result.buffer === buffer };
  } catch (error) {
    return { error: error.code };
  }
}

/** Each call on a fresh handle of `file` per flag, then the file's size and contents. */
async function answers(open, flags, contents) {
  const out = {};
  for (const flag of flags) {
    for (const [name, call] of Object.entries(CALLS)) {
      await contents.reset();
      const handle = await open(flag);
      out[`${flag} ${name}`] = await answer(call, handle);
      out[`${flag} ${name}: file after`] = { size: (await handle.stat()).size, data: (await contents.read()).toString() };
      await handle.close();
    }
  }
  return out;
}

/** Call by call, so that a failure names the flag and the call. */
function assertSame(actual, plain) {
  assert.deepEqual(Object.keys(actual), Object.keys(plain));
  for (const [name, answered] of Object.entries(plain)) assert.deepEqual(actual[name], answered, name);
}

async function expected(t, flags = FLAGS) {
  const dir = tempDir(t, 'plain');
  const file = path.join(dir, 'f');
  const contents = { reset: () => fsp.writeFile(file, 'abc'), read: () => fsp.readFile(file) };
  return answers((flag) => fsp.open(file, flag), flags, contents);
}

test('node:fs itself writes an empty buffer through a read-only handle (the case this file is about)', async (t) => {
  const plain = await expected(t, ['r']);
  assert.deepEqual(plain['r write of an empty buffer at 0'], { bytes: 0, sameBuffer: true });
  assert.deepEqual(plain['r write of 0 bytes of a 3-byte buffer'], { error: 'EBADF' });
});

for (const writeMode of ['write-through', 'write-back', 'write-around']) {
  test(`CacheFS handles over a directory (${writeMode}): reads and writes of nothing as node:fs, for every flag`, async (t) => {
    const root = tempDir(t, 'cachefs');
    const file = path.join(root, 'f');
    const blocks = writeMode === 'write-back' ? new BlockStore({ memoryBytes: 2 ** 20, blockBytes: 4096 }) : undefined;
    const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * 2 ** 20 }), writeMode, blocks, validateMs: 60_000 });
    t.after(() => cfs.close());
    const contents = { reset: () => writeFileSync(file, 'abc'), read: () => readFileSync(file) };
    assertSame(await answers((flag) => cfs.open('f', flag), FLAGS, contents), await expected(t));
  });
}

test('CacheFS handles over an InodeFS: reads and writes of nothing as node:fs, for every flag', async (t) => {
  const ifs = await openFs(t);
  const cfs = new CacheFS({ root: ifs, cache: new SharedCache({ memoryBytes: 4 * 2 ** 20 }) });
  t.after(() => cfs.close());
  const contents = { reset: () => ifs.writeFile('/f', 'abc'), read: () => cfs.readFile('f') };
  assertSame(await answers((flag) => cfs.open('f', flag), FLAGS, contents), await expected(t));
});

test('InodeFS handles, and a snapshot\'s (read-only), read and write nothing as node:fs', async (t) => {
  const ifs = await openFs(t);
  const contents = { reset: () => ifs.writeFile('/f', 'abc'), read: () => ifs.readFile('/f') };
  assertSame(await answers((flag) => ifs.open('/f', flag), FLAGS, contents), await expected(t));
  await ifs.writeFile('/f', 'abc');
  const snapshot = ifs.createSnapshot('s');
  t.after(() => snapshot.release());
  const unchanged = { reset: async () => {}, read: () => snapshot.readFile('/f') };
  assertSame(await answers((flag) => snapshot.open('/f', flag), ['r'], unchanged), await expected(t, ['r']));
});

// Run under a low descriptor limit (ulimit -n): reads a file 1000
// directories deep through CacheFS, by a path whose absolute link makes
// the resolution take the component walk. Prints the text read, or the error code.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SharedCache } from '../../lib/index.js';
import { CacheFS } from '../../lib/fs/index.js';

const depth = Number(process.argv[2]);
const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'arenacache-deep-')));
try {
  const deep = Array.from({ length: depth }, () => 'd').join('/');
  mkdirSync(path.join(root, deep), { recursive: true });
  writeFileSync(path.join(root, deep, 'f.txt'), 'at the bottom');
  // An absolute link naming a place inside the root: openat2 refuses it, the walk follows it.
  symlinkSync(root, path.join(root, 'top'));
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 2 ** 22 }) });
  let result;
  try {
    result = await cfs.readFile(`top/${deep}/f.txt`, 'utf8');
  } catch (error) {
    result = error.code;
  }
  await cfs.close();
  console.log(JSON.stringify(result));
} finally {
  // rm(1) walks with a bounded number of descriptors; Node 23 and later's
  // fs.rmSync holds one per level and fails with EMFILE under this limit.
  spawnSync('rm', ['-rf', root]);
}

// Reads through links in a sticky, world-writable directory of a CacheFS
// root: one owned by another user (fs.protected_symlinks forbids following
// it), one owned by us. Prints { foreign, own } as read text or error code.
import { chmodSync, lchownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SharedCache } from '../../lib/index.js';
import { CacheFS } from '../../lib/fs/index.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'arenacache-protected-'));
try {
  writeFileSync(path.join(root, 'target.txt'), 'target');
  mkdirSync(path.join(root, 'shared'));
  chmodSync(path.join(root, 'shared'), 0o1777);
  symlinkSync('../target.txt', path.join(root, 'shared', 'foreign'));
  lchownSync(path.join(root, 'shared', 'foreign'), 65534, 65534);
  symlinkSync('../target.txt', path.join(root, 'shared', 'own'));
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 2 ** 22 }) });
  const read = (p) => cfs.readFile(p, 'utf8').catch((error) => error.code);
  console.log(JSON.stringify({ foreign: await read('shared/foreign'), own: await read('shared/own') }));
  await cfs.close();
} finally {
  rmSync(root, { recursive: true, force: true });
}

// An InodeFS on a store of its own, for one test.
import path from 'node:path';
import { InodeFS } from '../../lib/inode-fs/index.js';
import { tempDir } from './fs-tree.js';

/**
 * Opens an InodeFS with `options` on a new store (fs.lmdb in a temporary
 * directory removed after the test `t`) and closes it after `t`. The store's
 * file, to open it again, is `ifs.path`.
 */
export async function openFs(t, options) {
  const ifs = await InodeFS.open(path.join(tempDir(t, 'inodefs'), 'fs.lmdb'), options);
  t.after(() => ifs.close());
  return ifs;
}

// fsck(): checks an InodeFS store's invariants in one read transaction (a
// consistent state, while writers go on) and reports each problem with the
// inode, the path where one is known, and what was expected.

import { S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from '../fs-compat/stats.js';
import { chunkHashes } from './chunk-list.js';
import { pinned } from './history.js';
import { ROOT_INO } from './inode.js';

const TYPE_BITS = Object.freeze({ file: S_IFREG, dir: S_IFDIR, symlink: S_IFLNK });

/**
 * @returns {{ ok: boolean, problems: { kind: string, ino?: number, path?: string, message: string }[],
 *   checked: { inodes: number, dirents: number, blobs: number, snapshots: number, history: number } }}
 */
export function fsck(store) {
  store.env.resetReadTxn();
  const transaction = store.env.useReadTransaction();
  try {
    return check(store, { transaction });
  } finally {
    transaction.done();
  }
}

function check(store, read) {
  const problems = [];
  const report = (kind, message, details) => problems.push({ kind, ...details, message });
  const all = (db) => db.getRange(read).asArray;

  const refs = new Map(all(store.refs).map(({ key, value }) => [key, value]));
  // Streamed: only each blob's length is kept.
  const blobs = new Map();
  for (const { key, value } of store.blobs.getRange(read)) blobs.set(key, value.length);
  const handles = new Map(all(store.handles).map(({ key, value }) => [key, value]));
  const inodes = new Map(all(store.inodes).map(({ key, value }) => [key, value]));
  const dirents = all(store.dirents);
  // Where each inode is named (its first name), for paths in reports.
  const names = new Map();
  for (const { key, value } of dirents) if (!names.has(value.ino)) names.set(value.ino, key);
  const pathOf = (ino) => {
    const parts = [];
    for (let at = ino, hops = 0; at !== ROOT_INO && hops < 4096; hops++) {
      const name = names.get(at);
      if (name === undefined) return parts.length === 0 ? undefined : `?/${parts.reverse().join('/')}`;
      parts.push(name[1]);
      at = name[0];
    }
    return `/${parts.reverse().join('/')}`;
  };
  const direntPath = ([parent, name]) => `${pathOf(parent) ?? `?(inode ${parent})`}/${name}`.replace(/^\/\//, '/');

  const links = new Map();
  const subdirs = new Map();
  for (const { key, value } of dirents) {
    const [parent] = key;
    const path = direntPath(key);
    const dir = inodes.get(parent);
    if (dir === undefined || dir.type !== 'dir') report('dirent-parent', `directory entry ${path} is in inode ${parent}, which is ${dir === undefined ? 'missing' : `a ${dir.type}`}, not a directory`, { ino: parent, path });
    const target = inodes.get(value.ino);
    if (target === undefined) {
      report('dangling-dirent', `directory entry ${path} points to inode ${value.ino}, which does not exist`, { ino: value.ino, path });
      continue;
    }
    if (target.type !== value.type) report('dirent-type', `directory entry ${path} says ${value.type}, but inode ${value.ino} is a ${target.type}`, { ino: value.ino, path });
    links.set(value.ino, (links.get(value.ino) ?? 0) + 1);
    if (target.type === 'dir') {
      subdirs.set(parent, (subdirs.get(parent) ?? 0) + 1);
      if (target.parent !== parent) report('dir-parent', `directory ${path} (inode ${value.ino}) records parent ${target.parent}, but is named in ${parent}`, { ino: value.ino, path });
    }
  }

  const expectedRefs = new Map();
  const holdChunks = (record) => {
    for (const hash of chunkHashes(record)) expectedRefs.set(hash, (expectedRefs.get(hash) ?? 0) + 1);
  };
  let maxIno = ROOT_INO;
  for (const [ino, inode] of inodes) {
    maxIno = Math.max(maxIno, ino);
    const path = pathOf(ino);
    const where = path === undefined ? `inode ${ino}` : `inode ${ino} (${path})`;
    if (TYPE_BITS[inode.type] === undefined || (inode.mode & S_IFMT) !== TYPE_BITS[inode.type]) {
      report('inode-type', `${where} has type ${inode.type} and mode ${inode.mode.toString(8)}, which disagree`, { ino, path });
    }
    const named = links.get(ino) ?? 0;
    if (ino === ROOT_INO) {
      if (inode.type !== 'dir') report('root', `the root (inode ${ROOT_INO}) is a ${inode.type}, not a directory`, { ino, path: '/' });
      if (named !== 0) report('root', `the root (inode ${ROOT_INO}) is named by ${named} directory entries`, { ino, path: '/' });
    } else if (named === 0 && !(inode.nlink === 0 && (handles.get(ino) ?? 0) > 0)) {
      // (A file removed while open lives on, nameless, until its handles close.)
      report('orphan', `${where} is named by no directory entry${inode.nlink === 0 ? ' and held by no open handle' : ''}`, { ino, path });
    }
    const expectedLinks = inode.type === 'dir' ? 2 + (subdirs.get(ino) ?? 0) : named;
    if (inode.type === 'dir' && ino !== ROOT_INO && named > 1) report('dir-links', `directory ${where} is named by ${named} directory entries`, { ino, path });
    if (inode.nlink !== expectedLinks && (named > 0 || ino === ROOT_INO)) {
      report('nlink', `${where} has nlink ${inode.nlink}; its directory entries make it ${expectedLinks}`, { ino, path });
    }
    checkContent(inode, where, { ino, path });
    holdChunks(inode);
  }

  const epoch = store.meta.get('epoch', read) ?? 0;
  const snapshots = all(store.snapshots).map(({ value }) => value);
  const pins = snapshots.map((s) => s.epoch);
  for (const snapshot of snapshots) {
    if (snapshot.epoch >= epoch) report('snapshot-epoch', `snapshot "${snapshot.name}" has epoch ${snapshot.epoch}, not before the current epoch ${epoch}`, {});
  }
  const needed = (first, last) => pinned(pins, first, last);
  const inodeHistory = all(store.inodeHistory);
  for (const { key, value } of inodeHistory) {
    if (!needed(value.e ?? 0, key[1])) report('unreclaimed-history', `the history version of inode ${key[0]} for epochs ${value.e ?? 0}–${key[1]} is needed by no snapshot`, { ino: key[0] });
    checkContent(value, `the history version of inode ${key[0]} (epochs ${value.e ?? 0}–${key[1]})`, { ino: key[0] });
    holdChunks(value);
  }
  const direntHistory = all(store.direntHistory);
  for (const { key, value } of direntHistory) {
    if (!needed(value.e ?? 0, key[2])) report('unreclaimed-history', `the history version of directory entry ${key[1]} in inode ${key[0]} for epochs ${value.e ?? 0}–${key[2]} is needed by no snapshot`, { ino: key[0] });
  }

  const nextIno = store.meta.get('nextIno', read);
  if (!(nextIno > maxIno)) report('next-ino', `the next inode number is ${nextIno}, but inode ${maxIno} exists`, { ino: maxIno });

  for (const [hash, count] of expectedRefs) {
    if (refs.get(hash) !== count) report('blob-refs', `blob ${hash} is referenced ${count === 1 ? 'once' : `${count} times`}, but its reference count is ${refs.get(hash) ?? 0}`, {});
    if (!blobs.has(hash)) report('missing-blob', `blob ${hash} is referenced but not stored`, {});
  }
  for (const hash of refs.keys()) {
    if (!expectedRefs.has(hash)) report('blob-refs', `blob ${hash} has reference count ${refs.get(hash)}, but no record holds it`, {});
  }
  for (const hash of blobs.keys()) {
    if (!expectedRefs.has(hash)) report('unreferenced-blob', `blob ${hash} is stored, but no record holds it`, {});
  }
  return {
    ok: problems.length === 0,
    problems,
    checked: { inodes: inodes.size, dirents: dirents.length, blobs: blobs.size, snapshots: snapshots.length, history: inodeHistory.length + direntHistory.length },
  };

  function checkContent(record, where, details) {
    if (record.type !== 'file') return;
    if (record.chunks !== undefined) {
      // Every chunk but the last is whole; a hole (a count of chunks) holds zeros without storing them.
      const { chunks, chunkBytes, size } = record;
      let total = 0;
      let missing = false;
      let short = false;
      chunks.forEach((entry, i) => {
        const length = typeof entry === 'number' ? entry * chunkBytes : blobs.get(entry);
        if (length === undefined) missing = true; // reported as missing-blob
        if (typeof entry === 'string' && i < chunks.length - 1 && length !== chunkBytes) short = true;
        total += length ?? 0;
      });
      // A hole at the end may reach past the size, to a whole chunk.
      const holeAtEnd = typeof chunks.at(-1) === 'number' ? chunkBytes - 1 : 0;
      if (!missing && (short || total < size || total - size > holeAtEnd)) report('size', `${where} has size ${size}, but its chunks hold ${total} bytes`, details);
    } else if ((record.data?.length ?? 0) !== record.size) {
      report('size', `${where} has size ${record.size}, but holds ${record.data?.length ?? 0} bytes inline`, details);
    }
  }
}

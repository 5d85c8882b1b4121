// Path resolution over any read view of an InodeFS (the cached latest
// state, a write transaction, a snapshot): names to inodes, following
// symbolic links as POSIX does, with Linux's limits on names and paths.

import { fsError } from '../fs-compat/fs-errors.js';
import { ROOT_INO } from './inode.js';
import { splitPath } from './paths.js';

/** Links followed in one resolution before ELOOP (Linux's limit). */
const MAX_LINKS = 40;
/** The longest name, in UTF-8 bytes (Linux's NAME_MAX): longer is ENAMETOOLONG, as node:fs says. */
export const MAX_NAME_BYTES = 255;
/** The longest path or symbolic link target, in UTF-8 bytes (Linux's PATH_MAX, less its NUL). */
export const MAX_PATH_BYTES = 4095;

/** Whether `text` is longer than `max` UTF-8 bytes (a UTF-16 unit is at most 3 of them, so short strings are not encoded). */
export function tooLong(text, max) {
  return typeof text === 'string' && text.length * 3 > max && Buffer.byteLength(text) > max;
}

const SLASH = 0x2f;
const DOT = 0x2e;

/**
 * How `path` ends, which a name list cannot say: 'dot' when its last name
 * is "." ("/a/." or "/a/./"), 'slash' when its last name is followed by
 * "/" ("/a/"), '' otherwise (and for the root). Both ask for a directory,
 * as on Linux: "/a.txt/" is not "/a.txt". ".." stays lexical: "/a/b/.." is
 * "/a", and "/a.txt/.." is "/" without a look at a.txt.
 */
export function pathEnding(path) {
  // Not a path: splitPath() refuses it, with the message.
  if (typeof path !== 'string') return '';
  const end = path.charCodeAt(path.length - 1);
  if (end !== SLASH && end !== DOT) return '';
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '' || trimmed.endsWith('/..')) return '';
  if (trimmed.endsWith('/.')) return 'dot';
  return trimmed.length < path.length ? 'slash' : '';
}

/**
 * Resolves `path` in `view` ({ inode(ino), dirent(parent, name) }):
 * { parent, name, ino, inode, ending } where `parent` is the directory
 * inode that holds (or would hold) the last name, `ino`/`inode` are
 * 0/undefined if it does not exist, and `ending` is pathEnding(path). The
 * last name's link is followed when `followLast`. Throws ENOENT/ENOTDIR/ELOOP
 * (for `syscall`) when an earlier name fails, ENAMETOOLONG for a name or
 * path too long. A path ending in "/." ("/a/.") names the directory a
 * itself, looked up as an earlier name is: a is followed, and is ENOENT if
 * missing, ENOTDIR if not a directory. A trailing "/" is left to the
 * caller: what it means depends on the call.
 */
export function resolve(view, path, syscall, followLast = true) {
  const names = splitPath(path);
  // The kernel measures the path as given, before "." and ".." are resolved.
  if (tooLong(path, MAX_PATH_BYTES)) throw fsError('ENAMETOOLONG', syscall, path);
  const ending = pathEnding(path);
  const dot = ending === 'dot';
  let links = 0;
  let parent = view.inode(ROOT_INO);
  if (names.length === 0) return { parent, name: '', ino: ROOT_INO, inode: parent, ending };
  for (let i = 0; i < names.length; i++) {
    if (parent.type !== 'dir') throw fsError('ENOTDIR', syscall, path);
    const name = names[i];
    // Checked as each name is reached (as a file system's lookup does), link targets' names too.
    if (tooLong(name, MAX_NAME_BYTES)) throw fsError('ENAMETOOLONG', syscall, path);
    const ino = view.dirent(parent.ino, name);
    const last = i === names.length - 1;
    if (ino === 0) {
      if (last && !dot) return { parent, name, ino: 0, inode: undefined, ending };
      throw fsError('ENOENT', syscall, path);
    }
    const inode = view.inode(ino);
    // Removed between reading its name and its record (by another thread): gone, as if not found.
    if (inode === undefined) throw fsError('ENOENT', syscall, path);
    if (inode.type === 'symlink' && (!last || followLast || dot)) {
      if (++links > MAX_LINKS) throw fsError('ELOOP', syscall, path);
      // The target replaces the names so far (absolute) or the link's name (relative).
      const absolute = inode.target.startsWith('/') ? inode.target : `/${[...names.slice(0, i), inode.target].join('/')}`;
      const target = splitPath(absolute, 'target');
      names.splice(0, i + 1, ...target);
      parent = view.inode(ROOT_INO);
      i = -1;
      if (names.length === 0) return { parent, name: '', ino: ROOT_INO, inode: parent, ending };
      continue;
    }
    if (last) {
      if (dot && inode.type !== 'dir') throw fsError('ENOTDIR', syscall, path);
      return { parent, name, ino, inode, ending };
    }
    parent = inode;
  }
  throw new Error('unreachable');
}

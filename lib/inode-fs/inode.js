// InodeFS's records: an inode (a file, directory or symbolic link, as lmdb
// stores it: see inode-store.js) and the keys that name inodes and
// directory entries in an inode cache and in a write's changes.

import { fsError } from '../fs-compat/fs-errors.js';
import { S_IFDIR, S_IFLNK, S_IFREG } from '../fs-compat/stats.js';

export const ROOT_INO = 1;

/**
 * A time (ms) after `previous`: now, or just after `previous` if the clock
 * has not moved past it, so every change gives a file new times (CacheFS
 * over an InodeFS tells versions apart by them, as it does on disk).
 */
export function after(previous) {
  return Math.max(performance.timeOrigin + performance.now(), previous + 0.001);
}

/** The content (or a directory's entries) changed: new modification and change times. */
export function touch(inode) {
  inode.mtimeMs = inode.ctimeMs = after(Math.max(inode.mtimeMs, inode.ctimeMs));
}

/** The largest file an InodeFS holds (16 GiB): a chunk list beyond it would make one inode record megabytes long. */
export const MAX_FILE_BYTES = 2 ** 34;

/** EFBIG (for `syscall` on `path`) if a file would grow to `size` bytes, past MAX_FILE_BYTES. */
export function checkFileSize(size, syscall, path) {
  if (size > MAX_FILE_BYTES) throw fsError('EFBIG', syscall, path);
}

/** A new inode record of `type` ('file', 'dir', 'symlink'). */
export function newInode(ino, type, mode, now) {
  const typeBits = type === 'dir' ? S_IFDIR : type === 'symlink' ? S_IFLNK : S_IFREG;
  return {
    ino,
    type,
    dev: 0,
    rdev: 0,
    blksize: 4096,
    blocks: 0,
    mode: typeBits | (mode & 0o7777),
    nlink: type === 'dir' ? 2 : 1,
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    size: 0,
    atimeMs: now,
    mtimeMs: now,
    ctimeMs: now,
    birthtimeMs: now,
  };
}

/** The cache key of inode `ino`'s record. */
export function inodeKey(ino) {
  return `i${ino}`;
}

/** The cache key of entry `name` of directory `parent`. */
export function direntKey(parent, name) {
  return `d${parent}/${name}`;
}

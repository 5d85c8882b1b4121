// Copying a tree out of an InodeFS view (a snapshot, or the live
// filesystem) into any filesystem with node:fs/promises' shape: another
// InodeFS, or a directory on disk through diskTarget().

import * as fsp from 'node:fs/promises';
import nodePath from 'node:path';
import { describe } from '../errors.js';
import { fsError } from '../fs-compat/fs-errors.js';
import { dataRanges } from './chunk-list.js';

const TARGET_METHODS = ['mkdir', 'writeFile', 'symlink', 'readdir'];
/** Files larger than this are copied through handles, a piece at a time, instead of in one Buffer. */
const WHOLE_FILE_BYTES = 64 * 2 ** 20;
/** The largest piece copied at once (one write, one transaction in an InodeFS target). */
const PIECE_BYTES = 16 * 2 ** 20;

/** node:fs/promises with every path taken relative to `dir` ("/" is `dir`). */
export function diskTarget(dir) {
  const at = (p) => nodePath.join(dir, p);
  return {
    mkdir: (p, options) => fsp.mkdir(at(p), options),
    writeFile: (p, data, options) => fsp.writeFile(at(p), data, options),
    symlink: (target, p) => fsp.symlink(target, at(p)),
    readdir: (p) => fsp.readdir(at(p)),
    open: (p, flags, mode) => fsp.open(at(p), flags, mode),
    chmod: (p, mode) => fsp.chmod(at(p), mode),
    utimes: (p, atime, mtime) => fsp.utimes(at(p), atime, mtime),
    lutimes: (p, atime, mtime) => fsp.lutimes(at(p), atime, mtime),
  };
}

export function checkTarget(target) {
  if (target === null || typeof target !== 'object' || TARGET_METHODS.some((m) => typeof target[m] !== 'function')) {
    throw new TypeError(`target must be a filesystem with ${TARGET_METHODS.join(', ')} methods, such as an InodeFS (got ${describe(target)})`);
  }
}

const join = (dir, name) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

/**
 * Copies directory `from` of `source` (an FsReader) to `to` in `target`:
 * files with their bytes, directories, symbolic links as links; modes and
 * modification times kept where the target can set them. `to` is created
 * (with its parents) if missing and must be empty if it exists, so a copy
 * never merges into other data. Resolves to { files, directories, symlinks, bytes }.
 */
export async function copyTree(source, from, target, to) {
  const top = await source.stat(from);
  // Copying a live tree into itself would copy its own copy, without end (as fs.cp, refused).
  const inside = (child, parent) => parent === '/' || child === parent || child.startsWith(`${parent.replace(/\/+$/, '')}/`);
  if (source === target && inside(to, from)) throw fsError('EINVAL', 'copy', from, to);
  if (!top.isDirectory()) throw fsError('ENOTDIR', 'copy', from);
  await target.mkdir(to, { recursive: true });
  if ((await target.readdir(to)).length > 0) throw fsError('ENOTEMPTY', 'copy', to);
  const counts = { files: 0, directories: 0, symlinks: 0, bytes: 0 };
  const base = from.replace(/\/+$/, '');
  const destination = (p) => join(to.replace(/\/+$/, '') || '/', p.slice(base.length + 1));
  // Directory times are set last: adding their entries moves them.
  const directories = [[to, top]];
  for await (const { path, stats } of source.walk(from)) {
    const out = destination(path);
    if (stats.isDirectory()) {
      await target.mkdir(out);
      directories.push([out, stats]);
      counts.directories++;
    } else if (stats.isSymbolicLink()) {
      await target.symlink(await source.readlink(path), out);
      await target.lutimes?.(out, stats.atime, stats.mtime);
      counts.symlinks++;
    } else {
      counts.bytes += await copyFile(source, path, target, out, stats.mode & 0o7777);
      await setAttributes(target, out, stats);
      counts.files++;
    }
  }
  for (const [out, stats] of directories.reverse()) await setAttributes(target, out, stats);
  return counts;
}

/**
 * Copies file `path` of `source` to `out` in `target` (created with `mode`)
 * and resolves to its size. A file with holes, or too large for one
 * Buffer, goes through handles when the target has open() (an InodeFS and a
 * directory on disk do): only its stored ranges are read and written, and a
 * truncate to its size makes the holes, so a sparse file stays sparse.
 */
async function copyFile(source, path, target, out, mode) {
  const inode = source.existing(source.view(), path, 'open', true);
  const ranges = dataRanges(inode);
  const stored = ranges.reduce((sum, [start, end]) => sum + end - start, 0);
  if (typeof target.open !== 'function' || (stored === inode.size && inode.size <= WHOLE_FILE_BYTES)) {
    const data = await source.readFile(path);
    await target.writeFile(out, data, { mode });
    return data.length;
  }
  const input = await source.open(path);
  try {
    const output = await target.open(out, 'w', mode);
    try {
      const buffer = Buffer.alloc(Math.min(PIECE_BYTES, Math.max(1, stored)));
      for (const [start, end] of ranges) {
        for (let at = start; at < end; at += buffer.length) {
          const { bytesRead } = await input.read(buffer, 0, Math.min(buffer.length, end - at), at);
          if (bytesRead > 0) await output.write(buffer, 0, bytesRead, at);
        }
      }
      await output.truncate(inode.size);
    } finally {
      await output.close();
    }
  } finally {
    await input.close();
  }
  return inode.size;
}

async function setAttributes(target, path, stats) {
  // writeFile's and mkdir's modes pass through the umask on disk.
  await target.chmod?.(path, stats.mode & 0o7777);
  await target.utimes?.(path, stats.atime, stats.mtime);
}

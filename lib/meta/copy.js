// Copying a tree out of an InodeFS view (a snapshot, or the live
// filesystem) into any filesystem with node:fs/promises' shape: another
// InodeFS, or a directory on disk through diskTarget().

import * as fsp from 'node:fs/promises';
import nodePath from 'node:path';
import { describe } from '../errors.js';
import { fsError } from './errors.js';

const TARGET_METHODS = ['mkdir', 'writeFile', 'symlink', 'readdir'];

/** node:fs/promises with every path taken relative to `dir` ("/" is `dir`). */
export function diskTarget(dir) {
  const at = (p) => nodePath.join(dir, p);
  return {
    mkdir: (p, options) => fsp.mkdir(at(p), options),
    writeFile: (p, data, options) => fsp.writeFile(at(p), data, options),
    symlink: (target, p) => fsp.symlink(target, at(p)),
    readdir: (p) => fsp.readdir(at(p)),
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
      const data = await source.readFile(path);
      await target.writeFile(out, data, { mode: stats.mode & 0o7777 });
      await setAttributes(target, out, stats);
      counts.files++;
      counts.bytes += data.length;
    }
  }
  for (const [out, stats] of directories.reverse()) await setAttributes(target, out, stats);
  return counts;
}

async function setAttributes(target, path, stats) {
  // writeFile's and mkdir's modes pass through the umask on disk.
  await target.chmod?.(path, stats.mode & 0o7777);
  await target.utimes?.(path, stats.atime, stats.mtime);
}

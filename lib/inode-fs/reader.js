// The reads every view of an InodeFS state shares (the live filesystem and
// its snapshots): stat, lstat, readFile, readdir, readlink, walk. A subclass
// supplies view(): { inode(ino), dirent(parent, name), entries(parent), content(inode) }.

import { describe } from '../errors.js';
import { decode, readEncoding } from '../fs-compat/fs-arguments.js';
import { fsError } from '../fs-compat/fs-errors.js';
import { parseFlags } from '../fs-compat/open-flags.js';
import { CachedStats } from '../fs-compat/stats.js';
import { checkTarget, copyTree, diskTarget } from './copy.js';
import { InodeFileHandle } from './inode-file-handle.js';
import { missingContent } from './store-errors.js';
import { pathEnding, resolve } from './resolve.js';

/** The reads every view of a filesystem state shares: stat, readFile, readdir, readlink, walk. */
export class FsReader {
  /** @returns {{ inode(ino), dirent(parent, name), entries(parent), content(inode) }} */
  view() {
    throw new Error('FsReader subclasses define view()');
  }

  statSync(path) {
    return new CachedStats(this.existing(this.view(), path, 'stat', true));
  }

  lstatSync(path) {
    return new CachedStats(this.existing(this.view(), path, 'lstat', false));
  }

  /** The view to read again through when a cached record proved stale (content() gave null): the live state, uncached. */
  uncachedView() {
    return this.view();
  }

  readFileSync(path, options) {
    const encoding = readEncoding(options, 'readFile');
    return decode(this.loadSync(path).data, encoding);
  }

  readdirSync(path) {
    const view = this.view();
    const inode = this.existing(view, path, 'scandir', true);
    if (inode.type !== 'dir') throw fsError('ENOTDIR', 'scandir', path);
    return view.entries(inode.ino).map((entry) => entry.name);
  }

  readlinkSync(path) {
    const inode = this.existing(this.view(), path, 'readlink', false);
    if (inode.type !== 'symlink') throw fsError('EINVAL', 'readlink', path);
    return inode.target;
  }

  /**
   * Every entry under directory `path`, depth first in name order:
   * { path, stats } (links are reported, not followed).
   */
  async *walk(path = '/') {
    const view = this.view();
    const start = this.existing(view, path, 'scandir', true);
    if (start.type !== 'dir') throw fsError('ENOTDIR', 'scandir', path);
    const base = path.replace(/\/+$/, '');
    const pending = [[base, start.ino]];
    while (pending.length > 0) {
      const [dir, ino] = pending.pop();
      const children = [];
      for (const entry of view.entries(ino)) {
        const childPath = `${dir}/${entry.name}`;
        const inode = view.inode(entry.ino);
        if (inode === undefined) continue; // removed meanwhile (live tree)
        yield { path: childPath, stats: new CachedStats(inode) };
        if (inode.type === 'dir') children.push([childPath, inode.ino]);
      }
      pending.push(...children.reverse());
    }
  }

  /**
   * The whole file at `path` and its stats, read from one state: what
   * CacheFS's `load` operation gives (see lib/fs/backing.js).
   */
  loadSync(path) {
    for (const view of [this.view(), this.uncachedView()]) {
      const inode = this.existing(view, path, 'open', true);
      if (inode.type === 'dir') throw fsError('EISDIR', 'read', path);
      const content = view.content(inode);
      if (content !== null) {
        const stats = new CachedStats(inode);
        return { before: stats, data: Buffer.from(content), after: stats };
      }
    }
    throw missingContent(path);
  }

  /**
   * Opens `path` for reading ('r'; a snapshot refuses other flags with
   * EROFS) and resolves to an InodeFileHandle.
   */
  async open(path, flags = 'r') {
    const access = parseFlags(flags);
    if (access.write) throw fsError('EROFS', 'open', path);
    const inode = this.existing(this.view(), path, 'open', true);
    return new InodeFileHandle(inode.ino, path, access, { view: () => this.view(), uncachedView: () => this.uncachedView() });
  }

  /**
   * Copies directory `options.from` (default "/") to `path` in `target` (an
   * InodeFS, or anything with node:fs/promises' mkdir, writeFile, symlink
   * and readdir). `path` is created if missing and must be empty.
   * @returns {Promise<{ files: number, directories: number, symlinks: number, bytes: number }>}
   */
  async copyTo(target, path, options) {
    checkTarget(target);
    if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError(`path must be an absolute path in the target (got ${describe(path)})`);
    return copyTree(this, copyFrom(options), target, path);
  }

  /** Copies directory `options.from` (default "/") to directory `dir` on disk (created if missing; must be empty). */
  async copyToDir(dir, options) {
    if (typeof dir !== 'string' || dir.length === 0) throw new TypeError(`dir must be a directory path (got ${describe(dir)})`);
    return copyTree(this, copyFrom(options), diskTarget(dir), '/');
  }

  /**
   * The inode `path` names in `view` (its last link followed when `follow`);
   * ENOENT if none. "/a/" and "/a/." name a directory: a is followed even
   * by lstat and readlink (as on Linux), and is ENOTDIR if not one.
   */
  existing(view, path, syscall, follow) {
    const { inode, ending } = resolve(view, path, syscall, follow || pathEnding(path) !== '');
    if (inode === undefined) throw fsError('ENOENT', syscall, path);
    if (ending !== '' && inode.type !== 'dir') throw fsError('ENOTDIR', syscall, path);
    return inode;
  }
}


function copyFrom(options) {
  const from = options?.from ?? '/';
  if (typeof from !== 'string') throw new TypeError(`options.from must be a path string (got ${describe(from)})`);
  return from;
}

/**
 * Gives `Class` the promise form of each `${name}Sync` method (`name`
 * resolves to what `nameSync` returns and rejects with what it throws), as
 * node:fs/promises mirrors node:fs.
 */
export function promiseForms(Class, names) {
  for (const name of names) {
    const sync = Class.prototype[`${name}Sync`];
    Object.defineProperty(Class.prototype, name, {
      value: async function (...args) {
        return sync.apply(this, args);
      },
      writable: true,
      configurable: true,
    });
  }
}

promiseForms(FsReader, ['stat', 'lstat', 'readFile', 'readdir', 'readlink']);

// The reads every view of an InodeFS state shares (the live filesystem and
// its snapshots): stat, lstat, readFile, readdir, readlink, walk. A subclass
// supplies view(): { inode(ino), dirent(parent, name), entries(parent), content(inode) }.

import { decode, readEncoding } from '../fs/arguments.js';
import { CachedStats } from '../fs/stats.js';
import { fsError } from './errors.js';
import { resolve } from './resolve.js';

/** The reads every view of a filesystem state shares: stat, readFile, readdir, readlink, walk. */
export class FsReader {
  /** @returns {{ inode(ino), dirent(parent, name), entries(parent), content(inode) }} */
  view() {
    throw new Error('FsReader subclasses define view()');
  }

  async stat(path) {
    return new CachedStats(this.#existing(this.view(), path, 'stat', true));
  }

  async lstat(path) {
    return new CachedStats(this.#existing(this.view(), path, 'lstat', false));
  }

  async readFile(path, options) {
    const encoding = readEncoding(options, 'readFile');
    const view = this.view();
    const inode = this.#existing(view, path, 'open', true);
    if (inode.type === 'dir') throw fsError('EISDIR', 'read', path);
    return decode(Buffer.from(view.content(inode)), encoding);
  }

  async readdir(path) {
    const view = this.view();
    const inode = this.#existing(view, path, 'scandir', true);
    if (inode.type !== 'dir') throw fsError('ENOTDIR', 'scandir', path);
    return view.entries(inode.ino).map((entry) => entry.name);
  }

  async readlink(path) {
    const inode = this.#existing(this.view(), path, 'readlink', false);
    if (inode.type !== 'symlink') throw fsError('EINVAL', 'readlink', path);
    return inode.target;
  }

  /**
   * Every entry under directory `path`, depth first in name order:
   * { path, stats } (links are reported, not followed).
   */
  async *walk(path = '/') {
    const view = this.view();
    const start = this.#existing(view, path, 'scandir', true);
    if (start.type !== 'dir') throw fsError('ENOTDIR', 'scandir', path);
    const base = path.replace(/\/+$/, '');
    const pending = [[base, start.ino]];
    while (pending.length > 0) {
      const [dir, ino] = pending.pop();
      const children = [];
      for (const entry of view.entries(ino)) {
        const childPath = `${dir}/${entry.name}`;
        const inode = view.inode(entry.ino);
        yield { path: childPath, stats: new CachedStats(inode) };
        if (inode.type === 'dir') children.push([childPath, inode.ino]);
      }
      pending.push(...children.reverse());
    }
  }

  #existing(view, path, syscall, follow) {
    const { inode } = resolve(view, path, syscall, follow);
    if (inode === undefined) throw fsError('ENOENT', syscall, path);
    return inode;
  }
}


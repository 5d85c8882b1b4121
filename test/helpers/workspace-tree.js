// Trees for the workspace tests: write one from a spec, and read one back
// (without following links) for exact comparison.
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync, chmodSync, utimesSync } from 'node:fs';
import path from 'node:path';

/**
 * Writes `spec` under `root`: { 'a/b.txt': 'text' | Buffer, 'dir/': {}, 'link': { symlink: 'target' },
 * 'x': { content, mode, mtime } }. Parent directories are made as needed.
 */
export function writeTree(root, spec) {
  for (const [where, value] of Object.entries(spec)) {
    const full = path.join(root, where);
    if (where.endsWith('/')) {
      mkdirSync(full, { recursive: true });
      continue;
    }
    mkdirSync(path.dirname(full), { recursive: true });
    if (value?.symlink !== undefined) {
      symlinkSync(value.symlink, full);
      continue;
    }
    const content = typeof value === 'string' || Buffer.isBuffer(value) ? value : value.content;
    writeFileSync(full, content);
    if (value.mode !== undefined) chmodSync(full, value.mode);
    if (value.mtime !== undefined) utimesSync(full, value.mtime, value.mtime);
  }
}

/**
 * Everything below `root` except the top-level names in `exclude`:
 * { path: 'd <mode>' | 'l -> target' | 'f <mode> <hex>' }, plus `mtimes` with
 * every file's and directory's mtimeMs when `withTimes`.
 */
export function readTree(root, { exclude = ['.arenacache'], withTimes = false } = {}) {
  const tree = {};
  const walk = (dir, prefix) => {
    for (const name of readdirSync(dir).sort()) {
      if (prefix === '' && exclude.includes(name)) continue;
      const full = path.join(dir, name);
      const key = prefix + name;
      const stats = lstatSync(full);
      const mode = (stats.mode & 0o7777).toString(8);
      const time = withTimes ? ` @${Math.floor(stats.mtimeMs)}` : '';
      if (stats.isSymbolicLink()) tree[key] = `l -> ${readlinkSync(full)}`;
      else if (stats.isDirectory()) {
        tree[key] = `d ${mode}${time}`;
        walk(full, `${key}/`);
      } else if (stats.isFile()) tree[key] = `f ${mode} ${readFileSync(full).toString('hex')}${time}`;
      else tree[key] = 'special'; // never opened: a fifo would block
    }
  };
  walk(root, '');
  return tree;
}

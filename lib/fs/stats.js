// What CacheFS keeps of a stat: the fields of node:fs Stats as a plain
// record (it is stored in the shared cache, so every thread sees it), and the
// Stats-shaped object that stat() returns.

const FIELDS = Object.freeze(['dev', 'ino', 'mode', 'nlink', 'uid', 'gid', 'rdev', 'size', 'blksize', 'blocks', 'atimeMs', 'mtimeMs', 'ctimeMs', 'birthtimeMs']);
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

/** A plain record of a node:fs Stats, with when it was read. */
export function statRecord(stats, checkedAt) {
  const record = { checkedAt };
  for (const field of FIELDS) record[field] = stats[field];
  return record;
}

/** Whether two records describe the same version of a file: same inode, size and modification time. */
export function sameVersion(a, b) {
  return a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs;
}

export function isFileRecord(record) {
  return (record.mode & S_IFMT) === S_IFREG;
}

export function isDirectoryRecord(record) {
  return (record.mode & S_IFMT) === S_IFDIR;
}

/** Shaped like node:fs Stats: the same fields, Date fields and is*() methods. */
export class CachedStats {
  constructor(record) {
    for (const field of FIELDS) this[field] = record[field];
    this.atime = new Date(record.atimeMs);
    this.mtime = new Date(record.mtimeMs);
    this.ctime = new Date(record.ctimeMs);
    this.birthtime = new Date(record.birthtimeMs);
  }

  isFile() {
    return (this.mode & S_IFMT) === S_IFREG;
  }

  isDirectory() {
    return (this.mode & S_IFMT) === S_IFDIR;
  }

  isSymbolicLink() {
    return false; // stat() follows links, as node:fs stat does
  }

  isBlockDevice() {
    return (this.mode & S_IFMT) === 0o060000;
  }

  isCharacterDevice() {
    return (this.mode & S_IFMT) === 0o020000;
  }

  isFIFO() {
    return (this.mode & S_IFMT) === 0o010000;
  }

  isSocket() {
    return (this.mode & S_IFMT) === 0o140000;
  }
}

// node:fs Stats as both filesystems of the package give them, from a plain
// record of the fields (a CacheFS stat record, an InodeFS inode), and the
// file type bits of a mode.

export const S_IFMT = 0o170000;
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;

/**
 * Shaped like node:fs Stats: the same fields, Date fields and is*() methods.
 * The fields are assigned one by one (one hidden class for every instance),
 * and each Date is made when first read: a stat that nobody asks the time
 * of costs no Dates (a cached stat is otherwise mostly Date construction).
 */
export class CachedStats {
  constructor(record) {
    this.dev = record.dev;
    this.ino = record.ino;
    this.mode = record.mode;
    this.nlink = record.nlink;
    this.uid = record.uid;
    this.gid = record.gid;
    this.rdev = record.rdev;
    this.size = record.size;
    this.blksize = record.blksize;
    this.blocks = record.blocks;
    this.atimeMs = record.atimeMs;
    this.mtimeMs = record.mtimeMs;
    this.ctimeMs = record.ctimeMs;
    this.birthtimeMs = record.birthtimeMs;
  }

  isFile() {
    return (this.mode & S_IFMT) === S_IFREG;
  }

  isDirectory() {
    return (this.mode & S_IFMT) === S_IFDIR;
  }

  isSymbolicLink() {
    return (this.mode & S_IFMT) === S_IFLNK;
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

// atime, mtime, ctime, birthtime: made from the *Ms field when first read,
// then an ordinary (writable, enumerable) property of the instance.
for (const name of ['atime', 'mtime', 'ctime', 'birthtime']) {
  const own = (stats, value) => Object.defineProperty(stats, name, { value, writable: true, enumerable: true, configurable: true });
  Object.defineProperty(CachedStats.prototype, name, {
    get() {
      const date = new Date(this[`${name}Ms`]);
      own(this, date);
      return date;
    },
    set(value) {
      own(this, value);
    },
    configurable: true,
  });
}

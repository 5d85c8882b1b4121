// arenacache/meta: InodeFS, a filesystem whose inodes live in lmdb.
export { InodeFS } from './inode-fs.js';
export { Snapshot } from './snapshot.js';

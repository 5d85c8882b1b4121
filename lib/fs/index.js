// arenacache/fs: CacheFS, a directory served through a SharedCache.
export { CacheFS } from './cache-fs.js';

// FoundEntry for the layers above the cache (CacheFS, InodeFS), which may
// not import the arena: the record a lookup fills for the caller that owns
// it and hands it to SharedCache[kGetFound] (see
// lib/arena/entries/record-stamp.js).

export { FoundEntry } from '../arena/entries/record-stamp.js';

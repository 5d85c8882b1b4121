// syncfs(2) off the event loop (src/native/fs_sync.h): one flush of a
// whole filesystem makes a snapshot's files durable together.

import { requireNative } from './addon.js';
import { checkPath } from '../validate.js';

/** syncfs(2) on the filesystem holding the directory `path`, off the event loop: Promise<void>. */
export function syncFilesystem(path) {
  checkPath(path, 'path');
  return requireNative('syncFilesystem()').syncFilesystem(path);
}

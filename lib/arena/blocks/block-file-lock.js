// File locks of a block arena, for users that change several blocks of a
// file as one step (CacheFS write-back: a file's name block and its data).
// There are FILE_LOCKS of them; files share one when their ids are equal
// modulo that count. A file lock is taken before any stripe lock and never
// together with another file lock, so the two kinds cannot deadlock. Its
// holder may do disk I/O, so it is taken over only from a holder that is
// gone (or after a long lease).

import { FILE_LOCK_BYTES } from './block-layout.js';

/** A file lock's holder writes files to disk: wait this long before presuming a live holder stuck. */
export const FILE_LOCK_LEASE_MS = 60_000;

/**
 * One file lock word set. A dead holder leaves nothing to repair here: what
 * it was changing is in blocks, and its user (CacheFS write-back) marks a
 * file's state before changing it, so the next holder sees the torn change.
 */
export class FileLock {
  constructor(buffer, header, index) {
    this.meta = new Int32Array(buffer, header.fileLocksOffset + index * FILE_LOCK_BYTES, FILE_LOCK_BYTES / 4);
  }

  recoverFromDeadHolder() {}

  reset() {}
}

// The one way an in-memory arena (a cache's or a block store's) gets its
// SharedArrayBuffer, with the error a failed allocation becomes.

import { ArenaCacheError, codes } from '../../errors.js';

/** A new SharedArrayBuffer of `bytes` for an arena (a cache's or a block store's), or ERR_ARENA_ALLOC. */
export function allocateSharedMemory(bytes) {
  try {
    return new SharedArrayBuffer(bytes);
  } catch (cause) {
    throw new ArenaCacheError(codes.ERR_ARENA_ALLOC, `could not allocate ${bytes} bytes of shared memory (${cause.message}); lower options.memoryBytes`, {
      cause,
    });
  }
}

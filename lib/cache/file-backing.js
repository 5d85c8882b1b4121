// What file-backed SharedCaches and BlockStores share beyond the arena file
// itself: flushing a mapping with the error users branch on.

import { ArenaCacheError, codes } from '../errors.js';
import { mappingFlush } from '../native.js';

/**
 * Writes the mapped `buffer` back to its file and waits until it is durable.
 * @param {string} what names the file in the error, e.g. "arena file /dev/shm/x"
 */
export async function flushMapping(buffer, what) {
  try {
    await mappingFlush(buffer);
  } catch (cause) {
    throw new ArenaCacheError(codes.ERR_ARENA_FILE, `could not flush ${what}: ${cause.message}`, { cause });
  }
}

// What file-backed SharedCaches and BlockStores share beyond the arena file
// itself: the path check, attaching to a mapped buffer (counted as one more
// user of the mapping), the error for options that disagree with the file,
// and flushing a mapping with the error users branch on.

import { ArenaCacheError, codes, describe } from '../../errors.js';
import { mappedArenaOptions } from './mapped-options.js';
import { mappingFlush, mappingRelease, mappingReleaseClean, mappingRetain } from '../../native/mapped-file.js';

/** Checks the `path` argument of open(). */
export function checkArenaPath(path) {
  if (typeof path !== 'string') throw new TypeError(`path must be a string (got ${describe(path)})`);
  if (path.length === 0 || path.includes('\0')) {
    throw new RangeError(`path must be a non-empty file path without NUL characters (got ${describe(path)})`);
  }
}

/**
 * Runs `attach(options, mapped)` on `buffer`: a mapped file's buffer counts
 * one more user of its mapping (given back if attaching fails) and waits on
 * the shared futex; an in-memory buffer attaches as it is.
 */
export function attachBuffer(buffer, attach) {
  const mapped = mappingRetain(buffer);
  try {
    return attach(mapped ? mappedArenaOptions(buffer) : undefined, mapped);
  } catch (error) {
    if (mapped) mappingRelease(buffer);
    throw error;
  }
}

/**
 * Gives back what a mapped arena's instance holds: its thread's liveness
 * hold, and one use of the mapping. With `cleanMark` ({ offset, word }), the
 * file's last user in every process marks it closed cleanly (see
 * mappingReleaseClean and entries/restart.js).
 */
export function releaseMappedArena(arena, cleanMark = null) {
  arena.liveness?.release();
  if (cleanMark === null) mappingRelease(arena.buffer);
  else mappingReleaseClean(arena.buffer, cleanMark.offset, cleanMark.word);
}

/** ERR_ARENA_MISMATCH: option `name` was given as `given`, the file `what` was created with `stored`. */
export function mismatchError(what, name, stored, given) {
  return new ArenaCacheError(
    codes.ERR_ARENA_MISMATCH,
    `${what} was created with options.${name} ${describe(stored)}, not ${describe(given)}; ` +
      'leave the option out to use the file as it is, or pass { reset: true } to replace it',
  );
}

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

// The arena constructor options for a mapped file's buffer (a SharedCache's
// or a BlockStore's, opened or attached in any thread).

import { ThreadLiveness } from './liveness.js';
import { TruncationWatch } from './truncation.js';
import { fileWaiting } from './waiting.js';

/**
 * Futex waiting across processes, a truncation watch (truncation.js) and
 * the threads' liveness locks (liveness.js).
 */
export function mappedArenaOptions(buffer) {
  return { waiting: fileWaiting, truncation: new TruncationWatch(buffer), liveness: new ThreadLiveness(buffer) };
}

// Truncation of a mapped arena file from outside.
//
// Any process that may write the file can shorten it while it is mapped.
// Touching a mapped page past the new end faults with SIGBUS, which would
// kill the process; the addon's guard (src/native/truncation_guard.h)
// instead replaces those pages with zeroed private memory and counts the
// fault. Zeros read as empty slots and free records, so gets find misses,
// never another value; but a write into private pages would be seen by this
// process alone, so once its mapping has faulted an arena refuses every
// write: each lock taken first compares the process's fault count with the
// one it last saw (one load), and asks the addon about its own mapping only
// when the count moved.

import { ArenaCacheError, codes } from '../../errors.js';
import { mappingFaults, mappingTruncated } from '../../native/truncation-guard.js';

export class TruncationWatch {
  /** @param {SharedArrayBuffer} buffer a mapped arena file's buffer */
  constructor(buffer) {
    this.buffer = buffer;
    /** Faults of any guarded mapping of this process (shared by its threads). */
    this.faults = mappingFaults();
    this.seen = this.faults[0];
  }

  /** Throws ERR_ARENA_TRUNCATED if this mapping faulted; otherwise notes the count (another mapping's fault). */
  check() {
    const faults = this.faults[0];
    if (mappingTruncated(this.buffer)) {
      throw new ArenaCacheError(
        codes.ERR_ARENA_TRUNCATED,
        'the arena file was truncated while mapped (by another process, or outside arenacache): ' +
          'this process reads the lost part as empty and refuses writes; close the cache and open the file again',
      );
    }
    this.seen = faults;
  }
}

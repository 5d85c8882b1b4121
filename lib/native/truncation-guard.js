// Mapped arena files truncated from outside (src/native/truncation_guard.h):
// the addon turns the fault into zeroed pages and counts it; JavaScript
// (lib/arena/common/truncation.js) reads the count and refuses to write.

import { requireNative } from './addon.js';

/**
 * An Int32Array over this process's count of mapped arena files that were
 * truncated from outside and faulted (see lib/arena/common/truncation.js).
 */
export function mappingFaults() {
  return new Int32Array(requireNative('mappingFaults()').mappingFaults());
}

/** Whether the mapped `buffer` faulted past the end of its truncated file. */
export function mappingTruncated(buffer) {
  return requireNative('mappingTruncated()').mappingTruncated(new Uint8Array(buffer));
}

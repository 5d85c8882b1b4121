// Atomics.wait and Atomics.notify across processes (src/native/futex.h): a
// file-backed arena's lock sleepers wait on the kernel's shared futex,
// keyed by the file page rather than the address. The arena's lock words go
// straight to the addon, which checks the array and index (see arguments.js).

import { loadedAddon } from './addon.js';

/** Atomics.wait for a word of a mapped file, across processes. */
export function futexWait(array, index, value, timeoutMs) {
  return loadedAddon.futexWait(array, index, value | 0, timeoutMs);
}

/** Atomics.notify for a word of a mapped file, across processes. */
export function futexWake(array, index, count = Infinity) {
  return loadedAddon.futexWake(array, index, count);
}

// Atomics.wait and Atomics.notify across processes (src/native/futex.h): a
// file-backed arena's lock sleepers wait on the kernel's shared futex,
// keyed by the file page rather than the address.

import { describe } from '../errors.js';
import { loadedAddon } from './addon.js';

function checkWord(array, index) {
  if (!(array instanceof Int32Array) || !(array.buffer instanceof SharedArrayBuffer)) {
    throw new TypeError(`array must be an Int32Array over a SharedArrayBuffer (got ${describe(array)})`);
  }
  if (!Number.isInteger(index) || index < 0 || index >= array.length) {
    throw new RangeError(`index must be an integer from 0 to ${array.length - 1} (got ${describe(index)})`);
  }
}

/** Atomics.wait for a word of a mapped file, across processes. */
export function futexWait(array, index, value, timeoutMs) {
  checkWord(array, index);
  return loadedAddon.futexWait(array, index, value | 0, timeoutMs);
}

/** Atomics.notify for a word of a mapped file, across processes. */
export function futexWake(array, index, count = Infinity) {
  checkWord(array, index);
  return loadedAddon.futexWake(array, index, count);
}

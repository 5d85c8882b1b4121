// How threads sleep on, and wake each other through, a word of the arena.
//
// An in-memory arena lives in one process: Atomics.wait/notify reach every
// thread that waits on it. A file-backed arena is mapped by several
// processes (and possibly several times by one, at different addresses),
// which Atomics.notify does not reach, so its waiters sleep on the kernel's
// shared futex, keyed by the file page rather than by the address.

import { futexWait, futexWake } from '../../native/futex.js';

export const memoryWaiting = Object.freeze({
  wait: (array, index, value, timeoutMs) => Atomics.wait(array, index, value, timeoutMs),
  notify: (array, index) => Atomics.notify(array, index),
});

export const fileWaiting = Object.freeze({
  wait: futexWait,
  notify: futexWake,
});

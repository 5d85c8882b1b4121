// Argument checks shared by the wrappers in this directory. Every wrapper
// checks its arguments, so the C++ side sees only validated values. The
// addon checks them again (src/native/arguments.h) for callers of the raw
// binary; these checks give the messages users see.

import { describe } from '../errors.js';

export function checkFd(fd) {
  if (!Number.isInteger(fd) || fd < 0 || fd > 0x7fffffff) throw new RangeError(`fd must be a file descriptor (got ${describe(fd)})`);
}

/** A Uint8Array over the whole of a SharedArrayBuffer: how a mapped buffer crosses to C++. */
export function checkWholeView(name, view) {
  if (!(view instanceof Uint8Array) || !(view.buffer instanceof SharedArrayBuffer)) {
    throw new TypeError(`${name} must be a Uint8Array over a SharedArrayBuffer (got ${describe(view)})`);
  }
  if (view.byteOffset !== 0 || view.byteLength !== view.buffer.byteLength) {
    throw new RangeError(`${name} must cover its whole SharedArrayBuffer`);
  }
}

export const isPath = (value) => typeof value === 'string' && value.length > 0 && !value.includes('\0');

export function checkPath(name, value) {
  if (!isPath(value)) {
    throw new TypeError(`${name} must be a non-empty string without NUL bytes (got ${describe(value)})`);
  }
}

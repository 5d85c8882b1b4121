// node:fs open flags ('r', 'w+', 'ax', ...) as both filesystems of the
// package take them, and the numeric flags of a create-only open.

import * as fs from 'node:fs';
import { describe } from '../errors.js';

/** Open flags that create a missing file and leave an existing one as it is. */
export const CREATE = fs.constants.O_WRONLY | fs.constants.O_CREAT;

/** node:fs open flags: what each allows and does. */
const FLAGS = Object.freeze({
  r: { read: true },
  rs: { read: true, sync: true },
  'r+': { read: true, write: true },
  'rs+': { read: true, write: true, sync: true },
  w: { write: true, create: true, truncate: true },
  'w+': { read: true, write: true, create: true, truncate: true },
  a: { write: true, create: true, append: true },
  'a+': { read: true, write: true, create: true, append: true },
  as: { write: true, create: true, append: true, sync: true },
  'as+': { read: true, write: true, create: true, append: true, sync: true },
});

/** What open flags `flags` allow and do: { read, write, create, exclusive, truncate, append, sync }. */
export function parseFlags(flags) {
  if (typeof flags !== 'string') throw new TypeError(`flags must be a string such as 'r' or 'w+' (got ${describe(flags)})`);
  // 'wx', 'xw', 'ax+', ... : the exclusive form of the same flags.
  const exclusive = flags.includes('x');
  const base = FLAGS[flags.replace('x', '')];
  if (base === undefined || (exclusive && !base.create) || flags.indexOf('x') !== flags.lastIndexOf('x')) {
    throw new RangeError(`flags must be one of r, r+, rs+, w, wx, w+, wx+, a, ax, a+, ax+ (got ${describe(flags)})`);
  }
  return { read: false, write: false, create: false, truncate: false, append: false, sync: false, ...base, exclusive };
}

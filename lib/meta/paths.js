// InodeFS paths: absolute POSIX paths ("/a/b"), split into names.

import { describe } from '../errors.js';

/**
 * The names of `path` ([] for "/"); "." and ".." are resolved lexically.
 * A last "." or a trailing "/" asks for a directory: resolve.js's
 * pathEnding() says which the path has.
 */
export function splitPath(path, name = 'path') {
  if (typeof path !== 'string') throw new TypeError(`${name} must be a string (got ${describe(path)})`);
  if (!path.startsWith('/')) throw new RangeError(`${name} must be an absolute path starting with "/" (got ${describe(path)})`);
  if (path.includes('\0')) throw new RangeError(`${name} must not contain NUL characters (got ${describe(path)})`);
  // Such a name could be stored but never encoded for the inode cache or copied to disk.
  if (!path.isWellFormed()) throw new RangeError(`${name} must be well-formed UTF-16: it has a lone surrogate (got ${describe(path)})`);
  const names = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') names.pop();
    else names.push(part);
  }
  return names;
}

/** The canonical form of a name list ("/a/b"). */
export function joinPath(names) {
  return `/${names.join('/')}`;
}

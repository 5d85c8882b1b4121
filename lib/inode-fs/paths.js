// InodeFS paths: absolute POSIX paths ("/a/b"), split into names.

import { describe } from '../errors.js';
import { checkPathString } from '../fs-compat/fs-arguments.js';

/**
 * The names of `path` ([] for "/"); "." and ".." are resolved lexically.
 * A last "." or a trailing "/" asks for a directory: resolve.js's
 * pathEnding() says which the path has.
 */
export function splitPath(path, name = 'path') {
  // "Absolute" is said before the checks every filesystem's paths share.
  if (typeof path === 'string' && !path.startsWith('/')) {
    throw new RangeError(`${name} must be an absolute path starting with "/" (got ${describe(path)})`);
  }
  checkPathString(path, name);
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

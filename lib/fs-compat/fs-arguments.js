// The arguments of node:fs-style calls, checked once for every filesystem of
// the package (CacheFS and InodeFS): path strings, encodings, options
// objects, data to write, modes, and the buffer ranges of file handle reads
// and writes.

import { describe } from '../errors.js';
import { checkBoolean, checkInteger, checkObject } from '../validate.js';

/**
 * Throws unless `path` is a string that can name a file: no NUL character,
 * and well-formed UTF-16 (node:fs would write U+FFFD for a lone surrogate: a
 * name that could never be asked for again, nor stored and copied to disk).
 * What the path must be beyond that (absolute, beneath a root) is the
 * filesystem's to say.
 */
export function checkPathString(path, name) {
  if (typeof path !== 'string') throw new TypeError(`${name} must be a string (got ${describe(path)})`);
  if (path.includes('\0')) throw new RangeError(`${name} must not contain NUL characters (got ${describe(path)})`);
  if (!path.isWellFormed()) throw new RangeError(`${name} must be well-formed UTF-16: it has a lone surrogate (got ${describe(path)})`);
}

/** Throws for any name of `options` but `known`, naming `method` and the names it takes. */
function rejectOtherOptions(options, known, method) {
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) {
      const list = known.length === 1 ? `the only one is ${known[0]}` : `they are ${known.join(' and ')}`;
      throw new TypeError(`options.${name} is not a known option of ${method}(); ${list}`);
    }
  }
}

const ENCODINGS = new Set(['utf8', 'utf-8', 'ascii', 'latin1', 'binary', 'base64', 'base64url', 'hex', 'ucs2', 'ucs-2', 'utf16le', 'utf-16le']);

/** The encoding readFile-style `options` ask for, or null for a Buffer. */
export function readEncoding(options, method) {
  if (options === undefined || options === null) return null;
  if (typeof options === 'string') return checkEncoding(options, 'options');
  checkObject(options, 'options');
  rejectOtherOptions(options, ['encoding'], method);
  return options.encoding === undefined || options.encoding === null ? null : checkEncoding(options.encoding, 'options.encoding');
}

function checkEncoding(encoding, name) {
  if (typeof encoding !== 'string' || !ENCODINGS.has(encoding.toLowerCase())) {
    throw new TypeError(`${name} must be a Buffer encoding such as 'utf8' (got ${describe(encoding)})`);
  }
  return encoding;
}

/** { encoding, mode } of writeFile-style `options` (mode undefined when not given). */
export function writeOptions(options, method) {
  if (options === undefined || options === null) return { encoding: 'utf8', mode: undefined };
  if (typeof options === 'string') return { encoding: checkEncoding(options, 'options'), mode: undefined };
  checkObject(options, 'options');
  rejectOtherOptions(options, ['encoding', 'mode'], method);
  const encoding = options.encoding === undefined ? 'utf8' : checkEncoding(options.encoding, 'options.encoding');
  if (options.mode !== undefined) checkMode(options.mode, 'options.mode');
  return { encoding, mode: options.mode };
}

/** { recursive, mode } of mkdir's `options`: a mode, or { recursive, mode }, as node:fs takes them. */
export function mkdirOptions(options) {
  if (options === undefined || options === null) return { recursive: false, mode: 0o777 };
  if (typeof options === 'number') {
    checkMode(options, 'options');
    return { recursive: false, mode: options };
  }
  checkObject(options, 'options');
  rejectOtherOptions(options, ['recursive', 'mode'], 'mkdir');
  const { recursive = false, mode = 0o777 } = options;
  checkBoolean(recursive, 'options.recursive');
  checkMode(mode, 'options.mode');
  return { recursive, mode };
}

/** { recursive, force } of rm's `options`. node:fs's maxRetries and retryDelay are not offered: nothing is retried. */
export function rmOptions(options) {
  if (options === undefined || options === null) return { recursive: false, force: false };
  checkObject(options, 'options');
  rejectOtherOptions(options, ['recursive', 'force'], 'rm');
  const { recursive = false, force = false } = options;
  checkBoolean(recursive, 'options.recursive');
  checkBoolean(force, 'options.force');
  return { recursive, force };
}

/** Checks a file mode argument (permission bits, 0 to 0o7777) named `name`. */
export function checkMode(mode, name) {
  checkInteger(mode, name, 0, 0o7777, 'a file mode from 0 to 0o7777');
}

export function toBytes(data, encoding) {
  if (typeof data === 'string') return Buffer.from(data, encoding);
  if (data instanceof Uint8Array) return data;
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  throw new TypeError(`data must be a string, Buffer, TypedArray or DataView (got ${describe(data)})`);
}

export function decode(bytes, encoding) {
  return encoding === null ? bytes : bytes.toString(encoding);
}

/** Checks (buffer, offset, length, position) as node:fs FileHandle#read/#write take them; fills the defaults. */
export function checkRange(method, buffer, offset, length, position) {
  if (!(buffer instanceof Uint8Array)) throw new TypeError(`buffer must be a Buffer or Uint8Array (got ${describe(buffer)})`);
  const start = offset ?? 0;
  checkInteger(start, 'offset', 0, buffer.byteLength);
  const count = length ?? buffer.byteLength - start;
  checkInteger(count, 'length', 0, buffer.byteLength - start);
  if (position !== null && position !== undefined) checkInteger(position, 'position', 0, Number.MAX_SAFE_INTEGER);
  return { start, count, at: position ?? null, method };
}

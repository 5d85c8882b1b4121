// The arguments of readFile/writeFile-style calls, checked once for every
// filesystem of the package (CacheFS and InodeFS): encodings, options
// objects, data to write.

import { describe } from '../errors.js';
import { checkInteger, checkObject } from '../cache/options.js';

const ENCODINGS = new Set(['utf8', 'utf-8', 'ascii', 'latin1', 'binary', 'base64', 'base64url', 'hex', 'ucs2', 'ucs-2', 'utf16le', 'utf-16le']);

/** The encoding readFile-style `options` ask for, or null for a Buffer. */
export function readEncoding(options, method) {
  if (options === undefined || options === null) return null;
  if (typeof options === 'string') return checkEncoding(options, 'options');
  checkObject(options, 'options');
  for (const name of Object.keys(options)) {
    if (name !== 'encoding') throw new TypeError(`options.${name} is not a known option of ${method}(); the only one is encoding`);
  }
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
  for (const name of Object.keys(options)) {
    if (name !== 'encoding' && name !== 'mode') throw new TypeError(`options.${name} is not a known option of ${method}(); they are encoding and mode`);
  }
  const encoding = options.encoding === undefined ? 'utf8' : checkEncoding(options.encoding, 'options.encoding');
  if (options.mode !== undefined) checkMode(options.mode, 'options.mode');
  return { encoding, mode: options.mode };
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

// Codecs turn values that are not bytes or strings into bytes and back.
//
// The default is msgpackr with structured cloning: plain objects, arrays,
// Map, Set, Date, RegExp, Error, typed arrays, BigInt and cyclic references
// round-trip. Each encoded value is self-describing (msgpackr's record
// structures are defined inside the message), so a value encoded in one
// thread decodes in any other, which a codec with shared state would break.

import { Packr } from 'msgpackr';
import { describe } from '../errors.js';
import { MAX_CODEC_NAME_BYTES } from '../arena/layout.js';

const packr = new Packr({ structuredClone: true });

/** @type {{ name: string, encode(value: unknown): Uint8Array, decode(bytes: Buffer): unknown }} */
export const msgpackCodec = Object.freeze({
  name: 'msgpackr',
  encode: (value) => packr.pack(value),
  decode: (bytes) => packr.unpack(bytes),
});

/** Validates a user codec; `where` names it in messages (e.g. "options.codec"). */
export function checkCodec(codec, where) {
  if (codec === null || typeof codec !== 'object') {
    throw new TypeError(`${where} must be an object with name, encode and decode (got ${describe(codec)})`);
  }
  if (typeof codec.name !== 'string' || codec.name.length === 0) {
    throw new TypeError(`${where}.name must be a non-empty string (got ${describe(codec.name)})`);
  }
  if (Buffer.byteLength(codec.name) > MAX_CODEC_NAME_BYTES) {
    throw new RangeError(`${where}.name must be at most ${MAX_CODEC_NAME_BYTES} bytes (got ${Buffer.byteLength(codec.name)})`);
  }
  if (typeof codec.encode !== 'function') {
    throw new TypeError(`${where}.encode must be a function (got ${describe(codec.encode)})`);
  }
  if (typeof codec.decode !== 'function') {
    throw new TypeError(`${where}.decode must be a function (got ${describe(codec.decode)})`);
  }
  return codec;
}

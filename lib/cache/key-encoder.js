// KeyEncoder: turns a key (string or Buffer/Uint8Array) into the bytes, kind
// and hash the arena works with, without allocating.
//
// String keys are stored as UTF-8. ASCII strings (the common case) are hashed
// and copied into a scratch buffer in one pass over their char codes; other
// strings go through TextEncoder.encodeInto. A string key and a Buffer key
// with the same bytes are different keys (the kind is part of the identity),
// so keys() gives each back as the type it was set with.

import { describe } from '../errors.js';
import { FNV_PRIME, hashBytes, hashFinish } from '../arena/entries/hash.js';
import { KEY_BYTES, KEY_STRING } from '../arena/entries/record.js';
import { typedArrayByteLength } from '../typed-array.js';

const utf8 = new TextEncoder();

export class KeyEncoder {
  /**
   * @param {number} maxKeyBytes
   * @param {number} stringStart hash start state for string keys
   * @param {number} bytesStart hash start state for byte keys
   */
  constructor(maxKeyBytes, stringStart, bytesStart) {
    this.maxKeyBytes = maxKeyBytes;
    this.stringStart = stringStart;
    this.bytesStart = bytesStart;
    this.scratch = new Uint8Array(maxKeyBytes);
    // The result of the last encode(), valid until the next one, by anyone:
    // the owner encodes right before the arena call that consumes it, with
    // no user code (a codec, a getter, a loader, which may use the same
    // cache) in between (see the top of shared-cache.js).
    this.bytes = this.scratch;
    this.length = 0;
    this.kind = KEY_STRING;
    this.hash = 0;
  }

  /** Encodes `key`; the result is in bytes/length/kind/hash until the next call. */
  encode(key) {
    if (typeof key === 'string') {
      const n = key.length;
      if (n <= this.maxKeyBytes) {
        const scratch = this.scratch;
        let h = this.stringStart;
        let i = 0;
        for (; i < n; i++) {
          const c = key.charCodeAt(i);
          if (c > 0x7f) break;
          scratch[i] = c;
          h = Math.imul(h ^ c, FNV_PRIME);
        }
        if (i === n) {
          this.bytes = scratch;
          this.length = n;
          this.kind = KEY_STRING;
          this.hash = hashFinish(h);
          return;
        }
      }
      this.encodeUnicode(key);
      return;
    }
    this.encodeBytes(key);
  }

  /**
   * Throws what encode() would for an invalid key; the scratch's content is
   * unspecified after it. For set(), which checks its key before user code
   * (the codec) runs and encodes it for the store only after: cheaper than
   * an encode for the usual key, as it neither hashes nor copies.
   */
  check(key) {
    if (typeof key === 'string') {
      // A UTF-16 unit takes at most 3 bytes of UTF-8.
      if (key.length * 3 <= this.maxKeyBytes && key.isWellFormed()) return;
    } else if (key instanceof Uint8Array && ArrayBuffer.isView(key) && typedArrayByteLength(key) <= this.maxKeyBytes) {
      return;
    }
    this.encode(key);
  }

  /** encode() of anything but a string: a Buffer or Uint8Array key, or a TypeError. */
  encodeBytes(key) {
    if (key instanceof Uint8Array && ArrayBuffer.isView(key)) {
      // Copied into the scratch buffer by TypedArray#set, which reads the
      // intrinsic length and runs no user code: a subclass that overrides
      // length or subarray cannot make the stored key differ from the hashed one.
      const n = typedArrayByteLength(key);
      if (n > this.maxKeyBytes) throw this.tooLong(n);
      this.scratch.set(key);
      this.bytes = this.scratch;
      this.length = n;
      this.kind = KEY_BYTES;
      this.hash = hashBytes(this.bytesStart, this.scratch, n);
      return;
    }
    throw new TypeError(`key must be a string, Buffer or Uint8Array (got ${describe(key)})`);
  }

  encodeUnicode(key) {
    if (!key.isWellFormed()) {
      throw new TypeError(`key must be well-formed UTF-16: it has a lone surrogate at index ${this.loneSurrogateIndex(key)}`);
    }
    const { read, written } = utf8.encodeInto(key, this.scratch);
    if (read < key.length) throw this.tooLong(Buffer.byteLength(key));
    this.bytes = this.scratch;
    this.length = written;
    this.kind = KEY_STRING;
    this.hash = hashBytes(this.stringStart, this.scratch, written);
  }

  loneSurrogateIndex(key) {
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdbff) {
        const next = key.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) i++;
        else return i;
      } else if (c >= 0xdc00 && c <= 0xdfff) {
        return i;
      }
    }
    return -1;
  }

  tooLong(length) {
    return new RangeError(`key is ${length} bytes long; the longest key this cache accepts is ${this.maxKeyBytes} bytes (options.maxKeyBytes)`);
  }
}

/** Whether `key` starts with `prefix`: strings match string keys, Buffers byte keys. */
export function keyHasPrefix(key, prefix) {
  if (typeof key === 'string') return typeof prefix === 'string' && key.startsWith(prefix);
  return typeof prefix !== 'string' && key.length >= prefix.length && key.subarray(0, prefix.length).equals(prefix);
}

export { KEY_STRING };

// ValuePool: hands out the Buffers that get() returns.
//
// Every hit returns a private copy, so the cost of creating that Buffer is on
// the hot path. Buffer.allocUnsafe() goes through several layers and, for
// copying, would need a word view of Node's pool; a pool of our own with an
// Int32Array over it lets small values be copied word by word and wrapped
// directly with Node's own Buffer class (Buffer[Symbol.species], the class
// whose prototype is Buffer.prototype), so results are ordinary Buffers.
//
// As with Node's own pool, a returned Buffer keeps its pool chunk alive:
// chunks are 64 KiB and only values up to 8 KiB come from them (allocating a
// separate ArrayBuffer for a 4 KiB value costs several times the copy).

const NodeBuffer = Buffer[Symbol.species];
if (typeof NodeBuffer !== 'function' || NodeBuffer.prototype !== Buffer.prototype) {
  throw new Error('arenacache: Buffer[Symbol.species] is not the Buffer class; this Node.js is not supported');
}

const CHUNK_BYTES = 64 * 1024;
/** Values up to this size come from the pool. */
export const POOLED_MAX = 8 * 1024;
/** Values up to this size are copied word by word (cheaper than a native call). */
const WORD_COPY_MAX = 128;

/**
 * A chunk of uninitialized memory: `new ArrayBuffer()` zero-fills, which for
 * 64 KiB costs more than the copies that fill it; every byte handed out is
 * overwritten by a copy before anyone sees it.
 */
function newChunk() {
  return Buffer.allocUnsafeSlow(CHUNK_BYTES).buffer;
}

export class ValuePool {
  constructor() {
    this.chunk = newChunk();
    this.words = new Int32Array(this.chunk);
    this.offset = 0;
  }

  /**
   * A Buffer holding a copy of `length` bytes of `words`/`bytes` starting at
   * the word-aligned byte offset `start`.
   * @param {Int32Array} words
   * @param {Uint8Array} bytes the same memory as `words`
   */
  copy(words, bytes, start, length) {
    if (length > POOLED_MAX) {
      const out = Buffer.allocUnsafe(length);
      out.set(bytes.subarray(start, start + length));
      return out;
    }
    let offset = this.offset;
    if (offset + length > CHUNK_BYTES) {
      this.chunk = newChunk();
      this.words = new Int32Array(this.chunk);
      offset = 0;
    }
    this.offset = (offset + length + 7) & ~7;
    const out = new NodeBuffer(this.chunk, offset, length);
    if (length > WORD_COPY_MAX) {
      out.set(bytes.subarray(start, start + length));
      return out;
    }
    const dst = this.words;
    const d = offset >>> 2;
    const s = start >>> 2;
    const whole = length >>> 2;
    for (let i = 0; i < whole; i++) dst[d + i] = words[s + i];
    for (let i = whole << 2; i < length; i++) out[i] = bytes[start + i];
    return out;
  }
}

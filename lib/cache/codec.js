// Codecs turn values that are not bytes or strings into bytes and back.
//
// The default is msgpackr with structured cloning: plain objects, arrays,
// Map, Set, Date, RegExp, Error, typed arrays, BigInt and cyclic references
// round-trip. Every SharedCache instance binds it to its arena (bindCodec):
// msgpackr's record structures (an object shape's key names) are kept in the
// arena's structure region (lib/arena/entries/structures.js), which every thread and
// process attached to the arena reads. An object of a known shape is then
// stored as a record id and its values, without its key names, and decoded
// by a reader msgpackr compiles once per shape and instance; a definition
// inside every value would have to be parsed, and its reader compiled, on
// every get. Shapes beyond the region's room are encoded self-describing.
//
// Each value starts with 6 bytes: how many structures the region held when
// it was encoded (u16) and their hash (u32, see StructureRegion#hashes). A
// value is decoded only with those same structures: one from another arena
// (an invalidation peer's) or read after the region was emptied (it was
// found damaged) is a miss, never an object of the wrong shape.

import { Packr, RESERVE_START_SPACE, Unpackr } from 'msgpackr';
import { describe } from '../errors.js';
import { MAX_CODEC_NAME_BYTES } from '../arena/common/layout.js';
import { APPENDED, EMPTY_STRUCTURES_HASH, MAX_STRUCTURES, StructureRegion } from '../arena/entries/structures.js';

const PREFIX_BYTES = 6;
const PACK_OPTIONS = RESERVE_START_SPACE | PREFIX_BYTES;
const UNPACK_OPTIONS = Object.freeze({ start: PREFIX_BYTES });
/** Values up to this size are decoded from a copy in a buffer of the codec's (see ArenaMsgpackCodec#decode). */
const SCRATCH_BYTES = 4096;

/** Without structures: for values that use none, and where no arena is at hand. */
const selfDescribing = new Packr({ structuredClone: true });

function writePrefix(bytes, count, hash) {
  bytes[0] = count & 0xff;
  bytes[1] = count >>> 8;
  bytes[2] = hash & 0xff;
  bytes[3] = (hash >>> 8) & 0xff;
  bytes[4] = (hash >>> 16) & 0xff;
  bytes[5] = hash >>> 24;
}

function prefixCount(bytes) {
  return bytes[0] | (bytes[1] << 8);
}

function prefixHash(bytes) {
  return (bytes[2] | (bytes[3] << 8) | (bytes[4] << 16) | (bytes[5] << 24)) >>> 0;
}

function encodeSelfDescribing(value) {
  const bytes = selfDescribing.pack(value, PACK_OPTIONS);
  writePrefix(bytes, 0, EMPTY_STRUCTURES_HASH);
  return bytes;
}

/** A value that uses no structures; undefined for any other (it needs its arena's). */
function decodeSelfDescribing(bytes) {
  if (bytes.length < PREFIX_BYTES || prefixCount(bytes) !== 0 || prefixHash(bytes) !== EMPTY_STRUCTURES_HASH) return undefined;
  return selfDescribing.unpack(bytes, UNPACK_OPTIONS);
}

/**
 * The default codec, as given in options and recorded in the arena header.
 * Its name differs from plain msgpackr's: its values carry the structure
 * prefix, so a codec of the user's that decodes plain msgpackr must not be
 * taken for it. Unbound, it encodes self-describing values (decodable in any
 * arena); SharedCache uses it bound to its arena (bindCodec).
 * @type {{ name: string, encode(value: unknown): Uint8Array, decode(bytes: Buffer): unknown }}
 */
export const msgpackCodec = Object.freeze({
  name: 'msgpackr-shared',
  encode: encodeSelfDescribing,
  decode: decodeSelfDescribing,
});

/** The default codec with its structures in the arena of `buffer` (one per instance); any other codec as it is. */
export function bindCodec(codec, buffer, header) {
  return codec === msgpackCodec ? new ArenaMsgpackCodec(new StructureRegion(buffer, header)) : codec;
}

/**
 * Bytes of the stored form `bytes` that any arena decodes (for the
 * invalidation bus, whose peers have arenas of their own); undefined when
 * they cannot be decoded here.
 */
export function portableBytes(codec, bytes) {
  return codec instanceof ArenaMsgpackCodec ? codec.portable(bytes) : bytes;
}

/**
 * The encoder's limit of shared structures runs this far ahead of those the
 * region holds. msgpackr numbers a value's own (inline) structures from the
 * limit on and stores them in its structure array at that index: a gap of
 * more than about 1024 past the array's end turns it into a slow dictionary
 * in V8, which made every value of an unshared shape cost a millisecond.
 */
const SHARED_HEADROOM = 512;
/** The encoder is replaced by one with a higher limit when the region comes this close to it. */
const REBUILD_MARGIN = 256;

class ArenaMsgpackCodec {
  #region;
  /** Made at the first encode (reading a full region takes milliseconds: attaching does not). */
  #encoder = null;
  #encoderLimit = 0;
  /** Decodes with every structure the region holds, whatever the encoder's limit. */
  #decoder;
  /** How many structures the decoder has. */
  #decoderCount = 0;
  /**
   * msgpackr gives every source it decodes a DataView of its own, as a new
   * property: for the fresh Buffer of each get, that costs about as much as
   * decoding a small object. Small values are therefore decoded from a copy
   * in this buffer, whose DataView is made once; copyBuffers makes binary
   * data inside values copies, not views of it.
   *
   * msgpackr runs extensions (user code) while it decodes, and one may read
   * the cache, which decodes again: a nested decode must not overwrite the
   * scratch the outer one is reading. While #scratch is being decoded
   * (#decoding), a nested decode reads its own bytes instead.
   */
  #scratch = Buffer.alloc(SCRATCH_BYTES);
  #scratchOptions = { start: PREFIX_BYTES, end: 0 };
  #decoding = false;

  constructor(region) {
    this.name = msgpackCodec.name;
    this.#region = region;
    this.#decoder = new Unpackr({
      structuredClone: true,
      copyBuffers: true,
      // msgpackr would call it on meeting a record id it does not know;
      // decode() hands it the structures first (see there).
      getStructures: () => {
        region.refresh();
        return region.structures.slice();
      },
    });
  }

  #newEncoder() {
    const region = this.#region;
    region.refresh();
    const limit = Math.min(MAX_STRUCTURES, region.count + SHARED_HEADROOM);
    this.#encoderLimit = limit;
    this.#encoder = new Packr({
      structuredClone: true,
      maxSharedStructures: limit,
      // msgpackr calls it when it starts without structures and after a declined save.
      getStructures: () => {
        region.refresh();
        return region.structures.slice(0, limit);
      },
      saveStructures: (structures, isCompatible) => this.#save(structures, isCompatible, limit),
      shouldShareStructure: (keys) => region.canShare(keys),
    });
  }

  /**
   * msgpackr's protocol: append the structures it added, unless the region
   * changed since it read it (isCompatible merges the region's list, as far
   * as the encoder's `limit`), and answer false when they were not saved: it
   * then reloads and encodes the value again, sharing nothing the region
   * does not hold.
   */
  #save(structures, isCompatible, limit) {
    const region = this.#region;
    if (!region.refresh()) return false;
    const known = region.structures.slice(0, limit);
    if (!isCompatible(known) || known.length !== region.count) return false;
    const added = structures.slice(region.count, structures.sharedLength);
    return added.length === 0 || region.append(added) === APPENDED;
  }

  encode(value) {
    if (this.#encoder === null || (this.#region.count > this.#encoderLimit - REBUILD_MARGIN && this.#encoderLimit < MAX_STRUCTURES)) this.#newEncoder();
    const bytes = this.#encoder.pack(value, PACK_OPTIONS);
    // The region holds at least every structure the value refers to (msgpackr
    // refers only to structures loaded from it or saved into it).
    const region = this.#region;
    const count = region.count;
    writePrefix(bytes, count, region.hashes[count]);
    return bytes;
  }

  /** The value, or undefined when the structures it was encoded with are not (or no longer) the region's. */
  decode(bytes) {
    // Shorter than the prefix: not this codec's (damage, or a peer's other codec).
    if (bytes.length < PREFIX_BYTES) return undefined;
    const count = prefixCount(bytes);
    if (count === 0) return decodeSelfDescribing(bytes);
    const region = this.#region;
    if (count > this.#decoderCount) {
      if (count > region.count) region.refresh();
      if (count > region.count) return undefined;
      // Loaded in the middle of a decode, msgpackr would go on from a
      // Uint8Array copy of the source, and Buffers inside the value would
      // come back as Uint8Arrays that once. _mergeStructures is how msgpackr
      // itself takes loaded structures (and marks those with two-byte ids).
      // @ts-expect-error _mergeStructures: msgpackr's internal method (not in its typings)
      this.#decoder._mergeStructures(region.structures.slice());
      this.#decoderCount = region.count;
    }
    if (region.hashes[count] !== prefixHash(bytes)) return undefined;
    const length = bytes.length;
    if (length > SCRATCH_BYTES || this.#decoding) return this.#decoder.unpack(bytes, UNPACK_OPTIONS);
    this.#scratch.set(bytes);
    const options = this.#scratchOptions;
    options.end = length;
    this.#decoding = true;
    try {
      return this.#decoder.unpack(this.#scratch, options);
    } finally {
      this.#decoding = false;
    }
  }

  /** `bytes` as a value without structures, or undefined when they cannot be decoded here. */
  portable(bytes) {
    if (bytes.length >= PREFIX_BYTES && prefixCount(bytes) === 0) return bytes;
    const value = this.decode(bytes);
    return value === undefined ? undefined : encodeSelfDescribing(value);
  }
}

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

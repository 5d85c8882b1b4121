// NearCache: ready values of recently read entries, private to one
// SharedCache instance (one thread), so that a get of a hot key costs a Map
// lookup and a check in shared memory (one load while its shard is unwritten,
// see RecordStamp) instead of hashing into the arena, copying out of it and
// decoding.
//
// An entry answers only while its RecordStamp holds: the arena entry it was
// read from is unchanged and unexpired. Any set, delete, eviction, clear or
// repair by any thread or process (and an invalidation applied from another
// host, which is one of those) breaks it, and the get reads the arena again.
//
// A caller must never be able to change what a later get returns:
//   - strings are immutable and are shared as they are;
//   - objects and arrays (from the codec) are deep-frozen when kept and the
//     same frozen value is returned on every hit; values holding anything
//     freezing cannot protect (Map, Set, Date, typed arrays, class
//     instances...) are not kept, and every get decodes them afresh;
//   - Buffers are not kept: every get must return a new copy, and copying
//     out of the arena costs no more than copying a private copy (measured:
//     with a private copy, a get of a 64-byte Buffer was 0.7x as fast, as
//     it reaches more memory: the Map, the entry, its copy, and the stamp).
//
// A key enters only on its second miss within a window (a doorkeeper bitmap
// of key hashes, cleared as it fills): most misses of a skewed workload are
// keys read once in a long while, and keeping each would cost more than its
// read and push out a hot entry. Eviction is CLOCK over a fixed array of
// entries: a hit sets a bit, the hand clears bits until it finds an entry
// not used since its last pass. Entries are reused in place, so a full near
// cache allocates little.

import { RecordStamp } from '../arena/record-stamp.js';

/** Nodes a value may have to be kept frozen (bounds the cost of shared or deep structures). */
const FREEZE_BUDGET = 4096;
/** Nesting a value may have to be kept frozen (a cycle reaches it at once, without exhausting the stack). */
const FREEZE_DEPTH = 64;

/**
 * Values stored in more bytes than this are never kept: the near cache is
 * bounded by entries, and a thousand of these already take 16 MiB per thread.
 */
export const NEAR_MAX_VALUE_BYTES = 16 * 1024;
/** Doorkeeper bits per near-cache entry. */
const DOORKEEPER_BITS_PER_ENTRY = 8;

class NearEntry extends RecordStamp {
  constructor(key) {
    super(null, 0, 0, 0, 0);
    this.key = key;
    /** A string or a frozen object. */
    this.value = undefined;
    this.used = false;
  }
}

export class NearCache {
  /**
   * @param {number} capacity entries kept (> 0)
   * @param {import('../arena/clock.js').Clock} clock the arena's, for expiry
   * @param {boolean} plainObjects whether the codec decodes to data properties
   *   only (the built-in one), which spares the freezing check a property
   *   descriptor per property
   */
  constructor(capacity, clock, plainObjects) {
    this.capacity = capacity;
    this.clock = clock;
    this.plainObjects = plainObjects;
    const doorkeeperWords = Math.max(32, Math.ceil((capacity * DOORKEEPER_BITS_PER_ENTRY) / 32));
    this.doorkeeper = new Int32Array(2 ** Math.ceil(Math.log2(doorkeeperWords)));
    this.doorkeeperMask = this.doorkeeper.length - 1;
    /** Keys the doorkeeper has noted since it was last cleared. */
    this.doorkeeperNoted = 0;
    /** @type {Map<string, NearEntry>} */
    this.entries = new Map();
    /** @type {NearEntry[]} */
    this.ring = [];
    this.hand = 0;
    /** The entry that answered the last get(), null if it was not a hit here (see lastStamp()). */
    this.lastHit = null;
  }

  /** The value kept for `key` if it still holds, else undefined (then the caller reads the arena). */
  get(key) {
    const entry = this.entries.get(key);
    if (entry === undefined || !entry.holds(this.clock)) return undefined;
    this.lastHit = entry;
    entry.used = true;
    entry.touch();
    return entry.value;
  }

  /**
   * Keeps the value a get of `key` (whose hash is `hash`) just read from
   * `arena` (its last lookup describes the record), stored in `storedBytes`.
   * `value` is what that get returns: a string, a Buffer (never kept) or a
   * decoded object the caller now owns, which is frozen if it is kept.
   * Returns `value`.
   * @param {import('../arena/arena.js').Arena} arena
   */
  keep(key, hash, arena, value, storedBytes) {
    // undefined: the codec read a miss (see codec.js); nothing to keep.
    if (value === undefined || storedBytes > NEAR_MAX_VALUE_BYTES || value instanceof Uint8Array) return value;
    let entry = this.entries.get(key);
    if (entry === undefined && !this.#admit(hash)) return value;
    if (typeof value !== 'string' && !deepFreeze(value, this.plainObjects)) return value;
    if (entry === undefined) entry = this.#entryFor(key);
    entry.set(arena.readShard, arena.lastSlot, arena.lastOffset, arena.lastStamp, arena.lastExpiresAt);
    entry.value = value;
    entry.used = false;
    return value;
  }

  /** Whether a key not kept may enter: the doorkeeper saw its hash since it was last cleared. */
  #admit(hash) {
    const mixed = Math.imul(hash, 0x9e3779b1);
    const index = (mixed >>> 5) & this.doorkeeperMask;
    const bit = 1 << (mixed & 31);
    const doorkeeper = this.doorkeeper;
    if ((doorkeeper[index] & bit) !== 0) return true;
    doorkeeper[index] |= bit;
    // Cleared when a quarter of the bits are noted, before false admissions pile up.
    if (++this.doorkeeperNoted > doorkeeper.length * 8) {
      doorkeeper.fill(0);
      this.doorkeeperNoted = 0;
    }
    return false;
  }

  /** The stamp of the entry that answered the last get() (entries are reused: a copy). */
  lastStamp() {
    const hit = this.lastHit;
    return new RecordStamp(hit.shard, hit.word >>> 1, hit.offset, hit.stamp, hit.expiresAt);
  }

  /** Forgets `key` (this instance deleted it: its entry can only miss now). */
  delete(key) {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    entry.key = undefined;
    entry.value = undefined;
  }

  clear() {
    this.entries.clear();
    this.ring = [];
    this.hand = 0;
  }

  /** An entry for a new key: a new one until the capacity is reached, then the one CLOCK evicts. */
  #entryFor(key) {
    const ring = this.ring;
    let entry;
    if (ring.length < this.capacity) {
      entry = new NearEntry(key);
      ring.push(entry);
    } else {
      let hand = this.hand;
      // Entries forgotten by delete() have no key: reuse them first.
      while (ring[hand].used && ring[hand].key !== undefined) {
        ring[hand].used = false;
        if (++hand === ring.length) hand = 0;
      }
      entry = ring[hand];
      this.hand = hand + 1 === ring.length ? 0 : hand + 1;
      if (entry.key !== undefined) this.entries.delete(entry.key);
      entry.key = key;
    }
    this.entries.set(key, entry);
    return entry;
  }
}

/**
 * Freezes `value` and everything it holds when it consists only of
 * primitives, plain objects and arrays (what freezing makes immutable), and
 * returns whether it did; anything else is left untouched. With
 * `plainObjects`, the codec is known to make data properties only.
 */
export function deepFreeze(value, plainObjects) {
  if (value === null || typeof value !== 'object') return true;
  const budget = { left: FREEZE_BUDGET, depth: 0 };
  if (!(plainObjects ? freezableData(value, budget) : freezable(value, budget))) return false;
  freezeAll(value);
  return true;
}

function isPlain(object) {
  const prototype = Object.getPrototypeOf(object);
  return Array.isArray(object) ? prototype === Array.prototype : prototype === Object.prototype || prototype === null;
}

/** Whether a child value stops the freezing (a function) or needs a look of its own (an object not yet frozen). */
function childFreezable(child, budget, check) {
  if (typeof child === 'function') return false;
  if (child === null || typeof child !== 'object' || Object.isFrozen(child)) return true;
  if (++budget.depth > FREEZE_DEPTH) return false;
  const freezable = check(child, budget);
  budget.depth--;
  return freezable;
}

/** freezable() for objects made of data properties (no accessor can run or hide state). */
function freezableData(object, budget) {
  if (--budget.left < 0 || !isPlain(object)) return false;
  if (Array.isArray(object)) {
    for (let i = 0; i < object.length; i++) if (!childFreezable(object[i], budget, freezableData)) return false;
    return true;
  }
  for (const name in object) if (!childFreezable(object[name], budget, freezableData)) return false;
  return Object.getOwnPropertySymbols(object).length === 0;
}

function freezable(object, budget) {
  if (--budget.left < 0 || !isPlain(object)) return false;
  // Accessors could run code on every read and hide state freezing cannot reach.
  const descriptors = Object.getOwnPropertyDescriptors(object);
  for (const name of Reflect.ownKeys(descriptors)) {
    const descriptor = descriptors[name];
    if (!('value' in descriptor) || !childFreezable(descriptor.value, budget, freezable)) return false;
  }
  return true;
}

function freezeAll(object) {
  Object.freeze(object);
  if (Array.isArray(object)) {
    for (let i = 0; i < object.length; i++) {
      const child = object[i];
      if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) freezeAll(child);
    }
    return;
  }
  for (const name of Reflect.ownKeys(object)) {
    const child = object[name];
    if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) freezeAll(child);
  }
}

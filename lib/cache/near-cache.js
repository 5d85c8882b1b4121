// NearCache: ready values of recently read entries, private to one
// SharedCache instance (one thread), so that a get of a hot key costs a Map
// lookup and two loads of shared memory instead of hashing into the arena,
// copying out of it and decoding.
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
//   - Buffers are kept as a private copy, and each hit returns a new copy.
//
// Eviction is CLOCK over a fixed array of entries: a hit sets a bit, the
// hand clears bits until it finds an entry not used since its last pass.
// Entries are reused in place, so a full near cache allocates only for the
// values themselves.

import { RecordStamp } from '../arena/record-stamp.js';
import { ValuePool } from '../arena/value-pool.js';

/** How a near entry holds its value. */
const SHARED = 0; // the value itself (a string or a frozen object)
const COPIED = 1; // a private copy of a Buffer; each hit returns a new copy

/** Nodes a value may have to be kept frozen (bounds the cost of shared or deep structures). */
const FREEZE_BUDGET = 4096;

class NearEntry extends RecordStamp {
  constructor(key, shard, slot, offset, stamp, expiresAt) {
    super(shard, slot, offset, stamp, expiresAt);
    this.key = key;
    this.kind = SHARED;
    this.value = undefined;
    this.words = null;
    this.length = 0;
    this.used = false;
  }
}

export class NearCache {
  /**
   * @param {number} capacity entries kept (> 0)
   * @param {import('../arena/clock.js').Clock} clock the arena's, for expiry
   */
  constructor(capacity, clock) {
    this.capacity = capacity;
    this.clock = clock;
    /** @type {Map<string, NearEntry>} */
    this.entries = new Map();
    /** @type {NearEntry[]} */
    this.ring = [];
    this.hand = 0;
    this.copies = new ValuePool();
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
    if (entry.kind === SHARED) return entry.value;
    return this.copies.copy(entry.words, entry.value, 0, entry.length);
  }

  /**
   * Keeps the value a get of `key` just read from `arena` (its last lookup
   * describes the record). `value` is what that get returns: a string, a
   * Buffer the caller now owns, or a decoded object the caller now owns.
   * Returns the value to give the caller: for an object that was kept, the
   * frozen one.
   * @param {import('../arena/arena.js').Arena} arena
   */
  keep(key, arena, value) {
    let kind = SHARED;
    let kept = value;
    let words = null;
    let length = 0;
    if (typeof value === 'string') {
      // Immutable: shared as it is.
    } else if (value instanceof Uint8Array) {
      kind = COPIED;
      length = value.length;
      // Its own memory, word-aligned for ValuePool#copy, and no pool chunk
      // held alive by a few kept values.
      const memory = new ArrayBuffer((length + 3) & ~3);
      kept = new Uint8Array(memory, 0, length);
      kept.set(value);
      words = new Int32Array(memory);
    } else if (!deepFreeze(value)) {
      return value;
    }
    let entry = this.entries.get(key);
    if (entry === undefined) {
      entry = this.#slotFor(key, arena);
    } else {
      entry.set(arena.readShard, arena.lastSlot, arena.lastOffset, arena.lastStamp, arena.lastExpiresAt);
    }
    entry.kind = kind;
    entry.value = kept;
    entry.words = words;
    entry.length = length;
    entry.used = false;
    return value;
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
    entry.words = null;
  }

  clear() {
    this.entries.clear();
    this.ring = [];
    this.hand = 0;
  }

  /** An entry for a new key: a new one until the capacity is reached, then one CLOCK evicts. */
  #slotFor(key, arena) {
    const ring = this.ring;
    let entry;
    if (ring.length < this.capacity) {
      entry = new NearEntry(key, arena.readShard, arena.lastSlot, arena.lastOffset, arena.lastStamp, arena.lastExpiresAt);
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
      entry.set(arena.readShard, arena.lastSlot, arena.lastOffset, arena.lastStamp, arena.lastExpiresAt);
    }
    this.entries.set(key, entry);
    return entry;
  }
}

/**
 * Freezes `value` and everything it holds when it consists only of
 * primitives, plain objects and arrays (what freezing makes immutable), and
 * returns whether it did. Anything else is left untouched.
 */
export function deepFreeze(value) {
  if (value === null || typeof value !== 'object') return true;
  const budget = { left: FREEZE_BUDGET };
  if (!freezable(value, budget)) return false;
  freezeAll(value);
  return true;
}

function isPlain(object) {
  const prototype = Object.getPrototypeOf(object);
  return Array.isArray(object) ? prototype === Array.prototype : prototype === Object.prototype || prototype === null;
}

function freezable(object, budget) {
  if (--budget.left < 0 || !isPlain(object)) return false;
  // Accessors could run code on every read and hide state freezing cannot reach.
  const descriptors = Object.getOwnPropertyDescriptors(object);
  for (const name of Reflect.ownKeys(descriptors)) {
    const descriptor = descriptors[name];
    if (!('value' in descriptor)) return false;
    const child = descriptor.value;
    if (child !== null && typeof child === 'object' && !Object.isFrozen(child) && !freezable(child, budget)) return false;
    if (typeof child === 'function') return false;
  }
  return true;
}

function freezeAll(object) {
  Object.freeze(object);
  for (const name of Reflect.ownKeys(object)) {
    const child = object[name];
    if (child !== null && typeof child === 'object' && !Object.isFrozen(child)) freezeAll(child);
  }
}

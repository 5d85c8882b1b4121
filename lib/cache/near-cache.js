// NearCache: ready values of recently read entries, private to one
// SharedCache instance (one thread), so that a get of a hot key costs a Map
// lookup and a check in shared memory (one load while the group of its
// dictionary slot is unwritten, see RecordStamp) instead of hashing into the
// arena, copying out of it and decoding. A string this instance sets
// replaces the value kept for its key (see written()).
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
// read and push out a hot entry. Eviction is CLOCK over an array of
// entries: a hit sets a bit, the hand clears bits until it finds an entry
// not used since its last pass. Entries are reused in place, so a full near
// cache allocates little.
//
// Two limits bound it: entries (options.nearCache) and bytes
// (options.nearCacheBytes). An entry's bytes are an estimate that costs
// nothing to make: the value's stored length (for an object, its encoded
// length, a proxy for the decoded object's heap), the key's length and a
// fixed NEAR_ENTRY_BYTES for the entry's own structures. A value that does not
// fit evicts entries by CLOCK until it does (each evicted entry was kept
// once: amortized O(1) per keep); entries freed that way are reused first.
//
// Re-entrancy: keep() may run user code (deepFreeze reads properties, and a
// getter or a proxy runs code then), which may call the cache and so this
// near cache. keep() therefore takes the record it stamps an entry with as
// values read before the decode (never a lookup record, which a nested get
// refills), freezes before it picks the entry, and picks it afresh after: a
// nested get, delete or clear may have moved or dropped it.
//
// What answered a get reaches the caller that asks for it in the record it
// hands get(): the near cache keeps no "last hit" to read afterwards.

import { checkStamp, STAMP_GONE, STAMP_HOLDS, VALUE_KIND_UNKNOWN } from '../arena/entries/record-stamp.js';
import { WEAK_MEMORY_ORDER } from '../arena/common/shard-lock.js';
import { STAT } from '../arena/common/thread-stats.js';

/** This thread's counter of gets a near cache answered (see thread-stats.js). */
const NEAR_HITS = STAT.nearHits;

/** Nodes a value may have to be kept frozen (bounds the cost of shared or deep structures). */
const FREEZE_BUDGET = 4096;
/** Nesting a value may have to be kept frozen (a cycle reaches it at once, without exhausting the stack). */
const FREEZE_DEPTH = 64;

/** Entries above this share of the byte limit are never kept (one value must not push out all the others; as in CacheFS's near cache). */
export const NEAR_MAX_VALUE_SHARE = 16;
/**
 * What an entry costs beyond its value's and key's lengths: its `indexes`
 * Map entry, its slots in `keys`, `ready` and `sizes` (which grow by
 * doubling), its 64-byte line of `hot`, and the key's and value's object
 * headers. Measured: a thread holding 66,064 4 KiB strings under 10-byte
 * keys grew by 4,335 bytes of heap and ArrayBuffers per entry, about 200
 * beyond the value and key. (Objects are estimated by their encoded
 * length, below what the decoded object takes: 497 bytes per entry
 * measured for small objects encoded in 60, against 270 estimated; see
 * docs/shared-cache.md#the-near-cache.)
 */
export const NEAR_ENTRY_BYTES = 200;
/** Doorkeeper bits per near-cache entry. */
const DOORKEEPER_BITS_PER_ENTRY = 8;

// Each entry's fields, float64s in NearCache.hot, HOT_FIELDS apart (64
// bytes: a hit reads one cache line of them).
const HOT_FIELDS = 8;
/** The write count of the slot's group its last full check vouched for (STAMP_HOLDS: none). */
const HOT_WRITES = 0;
const HOT_EXPIRES_AT = 1;
const HOT_SHARD = 2;
/** USED and TOUCHABLE bits. */
const HOT_FLAGS = 3;
// The stamp (see RecordStamp): dictionary slot, record offset, write stamp.
const HOT_SLOT = 4;
const HOT_OFFSET = 5;
const HOT_STAMP = 6;
/** The slot's group: its index in the arena's group write counts (Shard.groupOf). */
const HOT_GROUP = 7;
/** A hit since the CLOCK hand last passed. */
const USED = 1;
/** Another use may still count in the arena (see Shard.touchAt). */
const TOUCHABLE = 2;
/** Entries `hot` has room for at first; it doubles as the near cache fills. */
const INITIAL_ENTRIES = 1024;

// What a hit of an armed entry reads, in NearCache.ready, READY_FIELDS
// apart (24 bytes: mostly within one cache line).
const READY_FIELDS = 3;
/** The entry's value: a string or a frozen object (undefined: no entry). */
const READY_VALUE = 0;
/** The slot's group, as HOT_GROUP. */
const READY_GROUP = 1;
/** HOT_WRITES while the entry is armed (see NearCache#arm), else NaN, which no count equals. */
const READY_WRITES = 2;
/** READY_WRITES of an entry that is not armed. */
const UNARMED = NaN;

export class NearCache {
  /**
   * @param {number} capacity entries kept (> 0)
   * @param {number} maxBytes estimated bytes kept (> 0; see NEAR_ENTRY_BYTES)
   * @param {import('../arena/entries/arena.js').Arena} arena the arena values come
   *   from (its clock for expiry, its shards)
   * @param {boolean} plainObjects whether the codec decodes to data properties
   *   only (the built-in one), which spares the freezing check a property
   *   descriptor per property
   */
  constructor(capacity, maxBytes, arena, plainObjects) {
    this.capacity = capacity;
    this.maxBytes = maxBytes;
    /** The most estimated bytes one entry may take. */
    this.maxEntryBytes = Math.floor(maxBytes / NEAR_MAX_VALUE_SHARE);
    /** Estimated bytes of the entries kept (see NEAR_ENTRY_BYTES). */
    this.bytes = 0;
    this.clock = arena.clock;
    // Held here, not reached through the arena at each hit: that chain of
    // loads cost a hit 7% (a focused loop of bench:hot's gets).
    /** This thread's counters in the arena (near hits are counted there). */
    this.counters = arena.counters;
    this.shards = arena.shards;
    this.groupWrites = arena.shards[0].groupWrites;
    this.plainObjects = plainObjects;
    // Sized for the entries `hot` has room at first, and widened while the
    // near cache has room (see #admit): how many entries the byte limit
    // holds depends on the values, and a window narrower than the keys
    // read twice would keep them out.
    const words = doorkeeperWords(Math.min(capacity, INITIAL_ENTRIES));
    this.doorkeeper = new Int32Array(words);
    this.doorkeeperMask = words - 1;
    /** The widest doorkeeper: DOORKEEPER_BITS_PER_ENTRY for as many entries as could be kept. */
    this.maxDoorkeeperWords = doorkeeperWords(Math.min(capacity, Math.floor(maxBytes / NEAR_ENTRY_BYTES)));
    /** Keys the doorkeeper has noted since it was last cleared. */
    this.doorkeeperNoted = 0;
    // Entries are columns, not objects: a hit reads the Map and the entry's
    // fields in `ready`, and a hit that checks more one line of `hot`, all
    // dense. Entry objects, allocated one by one between the values they
    // keep, spread hits over the whole heap: with 4 KiB strings, a hit then
    // cost 2.5 times more.
    /** @type {Map<string, number>} key -> entry index */
    this.indexes = new Map();
    /** Keys by entry index (undefined: forgotten by delete()). */
    this.keys = [];
    /**
     * Each entry's value, and what a hit of an armed entry checks (see
     * READY_FIELDS), side by side: over 83,000 entries (bench:hot), `hot`
     * is 5 MiB, past the CPU's L2 cache, and its line was half of a hit's
     * time; the value and the check in separate arrays, a fifth.
     */
    this.ready = [];
    this.hot = new Float64Array(HOT_FIELDS * Math.min(capacity, INITIAL_ENTRIES));
    /** Each entry's estimated bytes (0: no entry), by entry index. */
    this.sizes = new Float64Array(this.hot.length / HOT_FIELDS);
    /** Entry indexes without a key (forgotten by delete() or evicted to make room), reused first. */
    this.free = [];
    /** The CLOCK hand, an entry index. */
    this.hand = 0;
  }

  /**
   * The value kept for `key` if it still holds, counted as a near hit, else
   * undefined (then the caller reads the arena). On a hit, `found` (the caller's record, or
   * null when it wants none) is filled as an arena lookup would fill it:
   * the entry's stamp, for a caller that keeps one.
   * @param {import('../arena/entries/record-stamp.js').FoundEntry | null} found
   */
  get(key, found) {
    const index = this.indexes.get(key);
    if (index === undefined) return undefined;
    const ready = this.ready;
    const r = index * READY_FIELDS;
    // Armed: nothing but the group's count to check (see #arm).
    if (this.groupWrites[ready[r + READY_GROUP]] === ready[r + READY_WRITES]) {
      this.counters[NEAR_HITS]++;
      if (found !== null) this.#fill(found, index * HOT_FIELDS);
      return ready[r + READY_VALUE];
    }
    return this.#check(index, found);
  }

  /** get() of the entry at `index` when it is not armed, or its group was written since. */
  #check(index, found) {
    const hot = this.hot;
    const h = index * HOT_FIELDS;
    if (WEAK_MEMORY_ORDER || this.groupWrites[hot[h + HOT_GROUP]] !== hot[h + HOT_WRITES]) {
      const writes = checkStamp(this.shards[hot[h + HOT_SHARD]], hot[h + HOT_SLOT], hot[h + HOT_OFFSET], hot[h + HOT_STAMP]);
      if (writes === STAMP_GONE) return undefined;
      hot[h + HOT_WRITES] = writes;
      // A write of the group may have lowered the entry's use count.
      hot[h + HOT_FLAGS] = hot[h + HOT_FLAGS] | TOUCHABLE;
    }
    const expiresAt = hot[h + HOT_EXPIRES_AT];
    if (expiresAt !== 0 && expiresAt <= this.clock.now()) return undefined;
    if (hot[h + HOT_FLAGS] !== USED) this.#use(h);
    this.#arm(index, h);
    this.counters[NEAR_HITS]++;
    const value = this.ready[index * READY_FIELDS + READY_VALUE];
    if (found !== null) this.#fill(found, h);
    return value;
  }

  /**
   * Arms the entry at `index` (`h` in `hot`) when the group count that its
   * last check vouched for is all a hit needs to check: it has no expiry,
   * is marked used and has no use left to count in the arena (its flags
   * are USED alone), and the CPU orders loads (see RecordStamp). Anything
   * that changes one of those disarms it: #note(), the CLOCK hand, #forget().
   */
  #arm(index, h) {
    const hot = this.hot;
    const writes = hot[h + HOT_WRITES];
    if (!WEAK_MEMORY_ORDER && writes !== STAMP_HOLDS && hot[h + HOT_EXPIRES_AT] === 0 && hot[h + HOT_FLAGS] === USED) {
      // As an int32 while it is one, which the array holds unboxed: a boxed
      // number would cost a hit another load, from wherever it was allocated.
      this.ready[index * READY_FIELDS + READY_WRITES] = (writes | 0) === writes ? writes | 0 : writes;
    }
  }

  /** Fills `found` with the record of the entry at `h`. */
  #fill(found, h) {
    const hot = this.hot;
    found.shard = this.shards[hot[h + HOT_SHARD]];
    found.slot = hot[h + HOT_SLOT];
    found.offset = hot[h + HOT_OFFSET];
    found.stamp = hot[h + HOT_STAMP];
    found.expiresAt = hot[h + HOT_EXPIRES_AT];
    // Only fresh values are kept, and kept ready: their stored kind is not noted.
    found.stale = false;
    found.valueKind = VALUE_KIND_UNKNOWN;
  }

  /** Marks the entry at `h` used, for this CLOCK and, while it may count, for the arena's policy. */
  #use(h) {
    const hot = this.hot;
    let flags = hot[h + HOT_FLAGS] | USED;
    if ((flags & TOUCHABLE) !== 0 && !this.shards[hot[h + HOT_SHARD]].touchAt(hot[h + HOT_SLOT], hot[h + HOT_OFFSET])) {
      flags &= ~TOUCHABLE;
    }
    hot[h + HOT_FLAGS] = flags;
  }

  /**
   * Keeps the value a get of `key` (whose hash is `hash`) just read,
   * stored in `storedBytes`, from the record at `offset` that dictionary
   * slot `slot` of `shard` pointed at, with write stamp `stamp`, fresh until
   * `expiresAt` (0: no end): all as the get's lookup found them, taken
   * before any user code ran (see the top of this file). `value` is what
   * that get returns: a string, a Buffer (never kept) or a decoded object
   * the caller now owns, which is frozen if it is kept. Returns `value`.
   * @param {import('../arena/entries/shard.js').Shard} shard
   */
  keep(key, hash, value, storedBytes, shard, slot, offset, stamp, expiresAt) {
    // undefined: the codec read a miss (see codec.js); nothing to keep.
    const size = storedBytes + key.length + NEAR_ENTRY_BYTES;
    if (value === undefined || size > this.maxEntryBytes || value instanceof Uint8Array) return value;
    let index = this.indexes.get(key);
    if (index === undefined && !this.#admit(hash)) return value;
    if (typeof value !== 'string') {
      if (!deepFreeze(value, this.plainObjects)) return value;
      // The walk may have run user code that changed the entries.
      index = this.indexes.get(key);
    }
    if (index === undefined) index = this.#entryFor(key);
    this.ready[index * READY_FIELDS + READY_VALUE] = value;
    this.#note(index, shard, slot, offset, stamp, expiresAt);
    this.#resize(index, size);
    return value;
  }

  /**
   * This instance just set `key` to `value`, stored in `storedBytes`, in the
   * record `written` describes (as the arena's set() filled it). A string is
   * kept in place of the entry's old value, so that the next get of a hot
   * key neither reads the arena nor makes a new string; anything else waits
   * for that get (a caller's object could change after the set, and a
   * frozen copy costs a decode). Only keys the near cache already holds: a
   * set is not a sign that the key will be read.
   */
  written(key, value, storedBytes, written) {
    // The value first: a set of anything else costs no Map lookup.
    if (typeof value !== 'string') return;
    const size = storedBytes + key.length + NEAR_ENTRY_BYTES;
    if (size > this.maxEntryBytes) return;
    const index = this.indexes.get(key);
    if (index === undefined) return;
    this.ready[index * READY_FIELDS + READY_VALUE] = value;
    this.#note(index, written.shard, written.slot, written.offset, written.stamp, written.expiresAt);
    this.#resize(index, size);
  }

  /**
   * Counts the entry at `index` at `size` estimated bytes (see
   * NEAR_ENTRY_BYTES), then evicts other entries by CLOCK until the near
   * cache is within its byte limit again. The entry itself stays: it takes
   * at most 1/NEAR_MAX_VALUE_SHARE of the limit, so others hold the rest.
   */
  #resize(index, size) {
    const sizes = this.sizes;
    this.bytes += size - sizes[index];
    sizes[index] = size;
    while (this.bytes > this.maxBytes) this.#forget(this.#victim(index));
  }

  /** Notes in the entry at `index` the record it now holds (see keep()): checked in full at its next hit. */
  #note(index, shard, slot, offset, stamp, expiresAt) {
    const hot = this.hot;
    const h = index * HOT_FIELDS;
    const group = shard.groupOf(slot);
    hot[h + HOT_WRITES] = STAMP_HOLDS;
    hot[h + HOT_EXPIRES_AT] = expiresAt;
    hot[h + HOT_SHARD] = shard.index;
    hot[h + HOT_FLAGS] = TOUCHABLE;
    hot[h + HOT_SLOT] = slot;
    hot[h + HOT_OFFSET] = offset;
    hot[h + HOT_STAMP] = stamp;
    hot[h + HOT_GROUP] = group;
    const r = index * READY_FIELDS;
    this.ready[r + READY_GROUP] = group;
    this.ready[r + READY_WRITES] = UNARMED;
  }

  /** Whether a key not kept may enter: the doorkeeper saw its hash since it was last cleared. */
  #admit(hash) {
    const mixed = Math.imul(hash, 0x9e3779b1);
    const index = (mixed >>> 5) & this.doorkeeperMask;
    const bit = 1 << (mixed & 31);
    const doorkeeper = this.doorkeeper;
    if ((doorkeeper[index] & bit) !== 0) return true;
    doorkeeper[index] |= bit;
    // While the near cache has room, widened when a sixteenth of the bits
    // are noted (its window must span the keys it could keep, and a
    // widening keeps the fill, so false admissions stay under a tenth);
    // else cleared when a quarter are, before false admissions pile up.
    const noted = ++this.doorkeeperNoted;
    if (noted > doorkeeper.length * 2 && doorkeeper.length < this.maxDoorkeeperWords && this.indexes.size < this.capacity && this.bytes + this.maxEntryBytes <= this.maxBytes) {
      this.#widenDoorkeeper();
    } else if (noted > doorkeeper.length * 8) {
      doorkeeper.fill(0);
      this.doorkeeperNoted = 0;
    }
    return false;
  }

  /** Doubles the doorkeeper, keeping what it noted: a hash's word in the wider one is its old word or that word plus the old length. */
  #widenDoorkeeper() {
    const old = this.doorkeeper;
    const wider = new Int32Array(2 * old.length);
    wider.set(old);
    wider.set(old, old.length);
    this.doorkeeper = wider;
    this.doorkeeperMask = wider.length - 1;
  }

  /** Forgets `key` (this instance deleted it: its entry can only miss now). */
  delete(key) {
    const index = this.indexes.get(key);
    if (index !== undefined) this.#forget(index);
  }

  /** Drops the entry at `index`; its index is reused first. */
  #forget(index) {
    this.indexes.delete(this.keys[index]);
    this.keys[index] = undefined;
    const r = index * READY_FIELDS;
    this.ready[r + READY_VALUE] = undefined;
    this.ready[r + READY_WRITES] = UNARMED;
    this.bytes -= this.sizes[index];
    this.sizes[index] = 0;
    this.free.push(index);
  }

  clear() {
    this.indexes.clear();
    this.keys = [];
    this.ready = [];
    this.hot = new Float64Array(HOT_FIELDS * Math.min(this.capacity, INITIAL_ENTRIES));
    this.sizes = new Float64Array(this.hot.length / HOT_FIELDS);
    this.free = [];
    this.bytes = 0;
    this.hand = 0;
  }

  /**
   * An entry index for a new key: a freed one, else a new one until the
   * capacity is reached, else the one CLOCK evicts. Its size is counted by
   * #resize().
   */
  #entryFor(key) {
    const keys = this.keys;
    let index;
    if (this.free.length > 0) {
      index = this.free.pop();
      keys[index] = key;
    } else if (keys.length < this.capacity) {
      index = keys.length;
      keys.push(key);
      this.ready.push(undefined, 0, UNARMED);
      if (this.hot.length < keys.length * HOT_FIELDS) {
        const entries = Math.min(this.capacity, 2 * keys.length);
        const grown = new Float64Array(entries * HOT_FIELDS);
        grown.set(this.hot);
        this.hot = grown;
        const sizes = new Float64Array(entries);
        sizes.set(this.sizes);
        this.sizes = sizes;
      }
    } else {
      index = this.#victim(-1);
      this.indexes.delete(keys[index]);
      this.bytes -= this.sizes[index];
      this.sizes[index] = 0;
      keys[index] = key;
    }
    this.indexes.set(key, index);
    return index;
  }

  /**
   * The entry CLOCK evicts next, other than the one at `spared`: the hand
   * clears use bits until it finds a kept entry not used since its last
   * pass. Some entry other than `spared` is kept whenever this is called
   * (the near cache is full by entries, or over its byte limit with one
   * entry taking at most 1/NEAR_MAX_VALUE_SHARE of it), so the hand stops
   * within two turns.
   */
  #victim(spared) {
    const keys = this.keys;
    const hot = this.hot;
    let hand = this.hand;
    for (;;) {
      if (hand >= keys.length) hand = 0;
      if (hand !== spared && keys[hand] !== undefined) {
        const flags = hand * HOT_FIELDS + HOT_FLAGS;
        if ((hot[flags] & USED) === 0) break;
        hot[flags] &= ~USED;
        this.ready[hand * READY_FIELDS + READY_WRITES] = UNARMED;
      }
      hand++;
    }
    this.hand = hand + 1;
    return hand;
  }
}

/** Int32 words of a doorkeeper with DOORKEEPER_BITS_PER_ENTRY for each of `entries` (a power of two, at least 32). */
function doorkeeperWords(entries) {
  return 2 ** Math.ceil(Math.log2(Math.max(32, Math.ceil((entries * DOORKEEPER_BITS_PER_ENTRY) / 32))));
}

/**
 * Freezes `value` and everything it holds when it consists only of
 * primitives, plain objects and arrays (what freezing makes immutable), and
 * returns whether it did; anything else is left untouched. Parts already
 * frozen (a codec of the user's may return them) are walked like the rest:
 * a frozen Map or typed array still has contents a caller can change. With
 * `plainObjects`, the codec is known to make data properties only.
 */
export function deepFreeze(value, plainObjects) {
  if (value === null || typeof value !== 'object') return true;
  // A getter (or a proxy's trap) the walk runs may call the cache, which
  // keeps what it reads: a walk inside a walk would share the state below.
  // The inner value is not kept, and the outer one neither: it runs code
  // when read, which freezing cannot hold still.
  if (walking) {
    walkReentered = true;
    return false;
  }
  walking = true;
  walkReentered = false;
  nodesLeft = FREEZE_BUDGET;
  try {
    const freezes = (plainObjects ? freezableData(value, 0) : freezable(value, 0)) && !walkReentered;
    // Frozen only once the whole value passed: a value that is not kept goes
    // back to its caller as it was decoded.
    if (freezes) for (let i = 0; i < toFreeze.length; i++) Object.freeze(toFreeze[i]);
    return freezes;
  } finally {
    // Also when a getter threw: the next walk starts with nothing noted.
    toFreeze.length = 0;
    walking = false;
  }
}

/** Whether deepFreeze() is walking a value (see there). */
let walking = false;
/** Whether a walk was asked for while one was under way. */
let walkReentered = false;
/** Objects deepFreeze() may still look at in the value it checks (bounds the cost of shared or deep structures). */
let nodesLeft = 0;
/** The objects of that value not frozen yet (reused from call to call; one walk at a time, see deepFreeze). */
const toFreeze = [];

/** Whether `object` (at nesting `depth`) is a plain object or array within the budget; notes it for freezing. */
function plainNode(object, depth) {
  if (--nodesLeft < 0 || depth > FREEZE_DEPTH) return false;
  const prototype = Object.getPrototypeOf(object);
  if (Array.isArray(object) ? prototype !== Array.prototype : prototype !== Object.prototype && prototype !== null) return false;
  if (!Object.isFrozen(object)) toFreeze.push(object);
  return true;
}

/**
 * freezable() for what the built-in codec decodes: plain objects with
 * enumerable, string-keyed data properties (msgpack has no symbols,
 * accessors or hidden properties), which for-in reaches without the
 * allocations of a full property listing (those cost three times the decode).
 */
function freezableData(object, depth) {
  if (!plainNode(object, depth)) return false;
  if (Array.isArray(object)) {
    for (let i = 0; i < object.length; i++) {
      const child = object[i];
      if (typeof child === 'object' ? child !== null && !freezableData(child, depth + 1) : typeof child === 'function') return false;
    }
    return true;
  }
  for (const name in object) {
    const child = object[name];
    if (typeof child === 'object' ? child !== null && !freezableData(child, depth + 1) : typeof child === 'function') return false;
  }
  return true;
}

function freezable(object, depth) {
  if (!plainNode(object, depth)) return false;
  // Accessors could run code on every read and hide state freezing cannot reach.
  /** @type {{ [key: PropertyKey]: PropertyDescriptor }} */
  const descriptors = Object.getOwnPropertyDescriptors(object);
  for (const name of Reflect.ownKeys(descriptors)) {
    const descriptor = descriptors[name];
    if (!('value' in descriptor)) return false;
    const child = descriptor.value;
    if (typeof child === 'object' ? child !== null && !freezable(child, depth + 1) : typeof child === 'function') return false;
  }
  return true;
}

// The collections a check or a rebuild of a whole shard keeps of its
// records (verify.js, rebuild.js): which positions hold live records, which
// write stamps were seen where, and the newest record of each key hash. In
// typed arrays rather than Map and Set: a shard of 150,000 entries is
// checked and rebuilt several times faster without a hash-table entry
// object per record, and a restart waits for exactly that.

/** Positions of records in a region (multiples of 8 below `regionBytes`), one bit each. */
export class PositionSet {
  /** @param {number} regionBytes */
  constructor(regionBytes) {
    this.bits = new Int32Array((regionBytes >>> 8) + 1);
    this.size = 0;
  }

  /** Adds `position` (a multiple of 8 inside the region); false if it was there. */
  add(position) {
    const word = position >>> 8;
    const bit = 1 << ((position >>> 3) & 31);
    if ((this.bits[word] & bit) !== 0) return false;
    this.bits[word] |= bit;
    this.size++;
    return true;
  }

  /**
   * Whether `position` was added. Any number may be asked about (a damaged
   * slot's): one past the region, a fraction or not a multiple of 8 never
   * was, checked before any shift, which would wrap it back into range.
   */
  has(position) {
    if (!(position >= 0 && position < this.bits.length * 256 && position % 8 === 0)) return false;
    return (this.bits[position >>> 8] & (1 << ((position >>> 3) & 31))) !== 0;
  }

  delete(position) {
    if (!this.has(position)) return false;
    this.bits[position >>> 8] &= ~(1 << ((position >>> 3) & 31));
    this.size--;
    return true;
  }
}

const EMPTY = -1;

/** The start of a probe for a 32-bit `key` in a table of 2^(32 - `shift`) slots (Fibonacci hashing: the product's top bits). */
function home(key, shift) {
  return Math.imul(key, 0x9e3779b1) >>> shift;
}

/**
 * Record positions by a 32-bit key (a key hash, or the low bits of a
 * stamp), several per key: open addressing with linear probing, grown at
 * half full. Visit the positions of a key with first()/next(), which give
 * a slot index (-1: no more), and read or replace them with positionAt()
 * and replace().
 */
export class PositionsByKey {
  /** @param {number} expected how many positions are likely (the table grows past it) */
  constructor(expected) {
    let slots = 16;
    while (slots < expected * 2) slots *= 2;
    this.keys = new Int32Array(slots);
    this.positions = new Int32Array(slots).fill(EMPTY);
    this.mask = slots - 1;
    this.shift = 32 - Math.log2(slots);
    this.size = 0;
  }

  /** The first slot holding a position of `key`, or -1. */
  first(key) {
    return this.scan(key | 0, home(key | 0, this.shift));
  }

  /** The next slot after `slot` holding a position of `key`, or -1. */
  next(key, slot) {
    return this.scan(key | 0, (slot + 1) & this.mask);
  }

  scan(key, from) {
    const { keys, positions, mask } = this;
    for (let slot = from; positions[slot] !== EMPTY; slot = (slot + 1) & mask) {
      if (keys[slot] === key) return slot;
    }
    return -1;
  }

  positionAt(slot) {
    return this.positions[slot];
  }

  replace(slot, position) {
    this.positions[slot] = position;
  }

  /** Adds a position (0 or more, below 2^31) under `key`. */
  add(key, position) {
    if ((this.size + 1) * 2 > this.positions.length) this.grow();
    const { keys, positions, mask } = this;
    let slot = home(key | 0, this.shift);
    while (positions[slot] !== EMPTY) slot = (slot + 1) & mask;
    keys[slot] = key | 0;
    positions[slot] = position;
    this.size++;
  }

  grow() {
    const { keys, positions } = this;
    const slots = positions.length * 2;
    this.keys = new Int32Array(slots);
    this.positions = new Int32Array(slots).fill(EMPTY);
    this.mask = slots - 1;
    this.shift = 32 - Math.log2(slots);
    this.size = 0;
    for (let slot = 0; slot < positions.length; slot++) if (positions[slot] !== EMPTY) this.add(keys[slot], positions[slot]);
  }

  /** Calls `visit(position)` for every position held. */
  forEach(visit) {
    const positions = this.positions;
    for (let slot = 0; slot < positions.length; slot++) if (positions[slot] !== EMPTY) visit(positions[slot]);
  }
}

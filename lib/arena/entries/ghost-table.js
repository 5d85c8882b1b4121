// The hybrid policy's memory of evicted keys, and the state that sizes its
// small ring (see policies.js, S3FifoPolicy). One per shard, in the shard's
// ghost area of the arena, written only under the shard's lock.
//
// The area is a few state words followed by two direct-mapped tables of
// equal size, one for keys evicted from the small ring and one for keys
// evicted from the main ring, each about as many slots as the shard holds
// entries. Only a cache with `max` adapts (where memory binds first, the
// small ring's memory, a tenth of the shard's, bounds it anyway): without
// `max` the area holds the small ring's table alone, the share stays at
// 10%, and the memory a second table would take holds entries. Two tables, not one: the small ring evicts many times as often
// as the main one, and in a shared table its ghosts would overwrite the
// main ring's before they could count. They are interleaved (a key's slot
// in each is in one pair of words, one cache line), so that a lookup in
// both costs one memory access. A slot holds
//
//   bits 16-31  a 16-bit tag of the key's hash (its slot is chosen by the
//               hash's high bits, the tag by all of them, remixed);
//   bits 1-15   when the key was evicted: the table's ring's eviction count
//               at that moment, in units of 2^timeShift evictions, modulo
//               2^15;
//   bit 0       1 (an empty slot is 0).
//
// A key asked for again while its small-ring ghost remains is a ghost hit:
// it enters the main ring directly, as in S3-FIFO. A ghost's age (evictions of its ring
// since it left) says whether a ring larger by an eighth of the cache would
// have kept it: a recent ghost from the small ring argues for a larger small
// ring, one from the main ring for a larger main ring; the policy moves the
// small ring's share one entry towards whichever argued, so that it settles
// where the two rings' last entries are worth the same.
//
// State words: the small ring's share of the shard's entries (in 2^-24
// units), and the two rings' eviction counts. They are read back from shared
// memory, where damage can have left anything: the share word carries a
// mark (SHARE_MARK in bits 25-31, the share in bits 1-24, bit 0 clear), a
// word without it reads as the default share, and the share is clamped to
// its bounds wherever it is read; counts are only ever compared modulo
// 2^15. A rebuild or clear empties the tables and keeps the share (it
// describes the workload, not the entries lost), clamped.
//
// Files from before the two tables had one table of hashes (`hash | 1`)
// without state words, and processes of that version may still open a file
// of this one and write its ghosts over the state words. Their words are
// odd, so never a marked share: such a share reads as the default (10%)
// instead of as whatever share a hash would spell, and their other slots
// read as ghosts that almost never match, so such a file works and learns
// its share afresh, from the default.

import { GHOST_STATE_WORDS } from '../common/layout.js';

const S_SHARE = 0;
const S_SMALL_EVICTIONS = 1;
const S_MAIN_EVICTIONS = 2;

/** The small ring's share of entries is in units of 2^-24. */
export const SHARE_ONE = 2 ** 24;
/** Bounds of the share: at least 1% of the entries are probationary, at most 98%. */
export const SHARE_MIN = Math.round(SHARE_ONE * 0.01);
export const SHARE_MAX = Math.round(SHARE_ONE * 0.98);
/** Above this share, an entry read in the small ring gets a second chance there instead of a move to the main ring (see policies.js). */
export const SHARE_HALF = SHARE_ONE / 2;
/** The share of a new table (and of a share word without its mark, see boundedShare): S3-FIFO's 10%. */
export const SHARE_DEFAULT = Math.round(SHARE_ONE * 0.1);

/** A ghost is recent when its ring evicted at most this share of the shard's entries since (1/8). */
const RECENT_SHIFT = 3;
const TIME_BITS = 15;
const TIME_MASK = (1 << TIME_BITS) - 1;
/** Eviction counts are kept in units such that a shard's capacity is at most this many of them. */
const CAPACITY_UNITS = 2048;

/** Ghost hits, as take() reports them. */
export const GHOST_NONE = 0;
export const GHOST_SMALL = 1;
export const GHOST_MAIN = 2;
/** Added to GHOST_SMALL or GHOST_MAIN when the ghost is recent (see the top). */
export const GHOST_RECENT = 4;

/** Bits 25-31 of a share word (see the top): a word without them is not a share. */
const SHARE_MARK = 0xa4000000;
const MARK_MASK = 0xfe000001;

/** The share `word` holds, within its bounds (the default when it holds none: 0, damage, an older version's ghost). */
export function boundedShare(word) {
  if (((word & MARK_MASK) >>> 0) !== SHARE_MARK) return SHARE_DEFAULT;
  const share = (word >>> 1) & 0xffffff;
  return share < SHARE_MIN ? SHARE_MIN : share > SHARE_MAX ? SHARE_MAX : share;
}

/** The word that holds `share` (within its bounds). */
export function shareWord(share) {
  return (SHARE_MARK | (share << 1)) >>> 0;
}

export class GhostTable {
  /**
   * @param {ArrayBufferLike} buffer
   * @param {number} offset first byte of the shard's ghost area
   * @param {number} words the area's size in 32-bit words (0: the policy keeps no ghosts)
   * @param {number} maxEntries the most entries the shard can hold
   * @param {boolean} adaptive whether the share adapts (the cache has `max`): two tables, else the small ring's alone
   */
  constructor(buffer, offset, words, maxEntries, adaptive) {
    /** Whether the share adapts, with a table of main-ring ghosts (the cache has `max`). */
    this.adaptive = adaptive;
    /** Tables: 2 (small and main ring, a pair of words per hash), or the small ring's alone. */
    this.tables = adaptive ? 2 : 1;
    const usable = words >= GHOST_STATE_WORDS + this.tables;
    this.state = new Uint32Array(buffer, offset, usable ? GHOST_STATE_WORDS : 0);
    /** Slots per table. */
    this.half = usable ? Math.floor((words - GHOST_STATE_WORDS) / this.tables) : 0;
    this.slots = new Uint32Array(buffer, offset + GHOST_STATE_WORDS * 4, this.tables * this.half);
    this.scale = this.half / 4294967296;
    this.timeShift = Math.max(0, Math.ceil(Math.log2(Math.max(1, maxEntries) / CAPACITY_UNITS)));
  }

  /** The small ring's share of the entries, in 2^-24 units, within its bounds. */
  get share() {
    return this.state.length === 0 || !this.adaptive ? SHARE_DEFAULT : boundedShare(this.state[S_SHARE]);
  }

  /** The share as a fraction (0.01 to 0.98; 0.1 where it does not adapt); 0 when the policy keeps no ghosts (not hybrid). */
  get shareOfEntries() {
    return this.state.length === 0 ? 0 : this.share / SHARE_ONE;
  }

  /** Moves the share by `step` (2^-24 units, signed), within its bounds. */
  moveShare(step) {
    if (this.state.length === 0 || !this.adaptive) return;
    const share = this.share + step;
    this.state[S_SHARE] = shareWord(share < SHARE_MIN ? SHARE_MIN : share > SHARE_MAX ? SHARE_MAX : share);
  }

  /** Index of `hash`'s slot in the table of `ring` (GHOST_SMALL or GHOST_MAIN; with two tables a pair of words per hash, small first). */
  index(hash, ring) {
    return this.tables * Math.floor((hash >>> 0) * this.scale) + (ring === GHOST_MAIN ? 1 : 0);
  }

  /** What a slot holds for `hash` (without its time and valid bits). */
  static tag(hash) {
    return Math.imul(hash, 0x9e3779b1) & 0xffff0000;
  }

  /** Remembers that `hash`'s key left `ring` (GHOST_SMALL or GHOST_MAIN) by eviction. */
  put(hash, ring) {
    if (this.half === 0 || ring > this.tables) return;
    // Without adaptation (the small ring's table alone) no time: nothing asks for a ghost's age.
    let time = 0;
    if (this.adaptive) {
      const word = ring === GHOST_MAIN ? S_MAIN_EVICTIONS : S_SMALL_EVICTIONS;
      const evictions = (this.state[word] + 1) >>> 0;
      this.state[word] = evictions;
      time = (evictions >>> this.timeShift) & TIME_MASK;
    }
    this.slots[this.index(hash, ring)] = (GhostTable.tag(hash) | (time << 1) | 1) >>> 0;
  }

  /**
   * Whether `hash`'s key left a ring lately, consuming the ghost: GHOST_NONE,
   * or GHOST_SMALL or GHOST_MAIN, plus GHOST_RECENT when it left within the
   * last eighth of `capacity` evictions of its ring.
   */
  take(hash, capacity) {
    if (this.half === 0) return GHOST_NONE;
    const tag = GhostTable.tag(hash);
    // GHOST_SMALL and GHOST_MAIN are 1 and 2: the rings of the tables there are.
    for (let ring = GHOST_SMALL; ring <= this.tables; ring++) {
      const i = this.index(hash, ring);
      const slot = this.slots[i];
      if ((slot & 1) === 0 || ((slot ^ tag) & 0xffff0000) !== 0) continue;
      this.slots[i] = 0;
      if (!this.adaptive) return ring;
      const now = (this.state[ring === GHOST_MAIN ? S_MAIN_EVICTIONS : S_SMALL_EVICTIONS] >>> this.timeShift) & TIME_MASK;
      const age = (now - ((slot >>> 1) & TIME_MASK)) & TIME_MASK;
      const recent = age <= Math.max(1, (capacity >>> RECENT_SHIFT) >>> this.timeShift);
      return recent ? ring + GHOST_RECENT : ring;
    }
    return GHOST_NONE;
  }

  /** Forgets every ghost (a clear or a rebuild); the share stays, within its bounds. */
  clear() {
    this.slots.fill(0);
    if (this.state.length > 0) this.state[S_SHARE] = shareWord(this.share);
  }
}

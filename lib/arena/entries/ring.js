// Ring: a circular log of records inside a shard's data region.
//
// Records are appended at `head`; space is reclaimed at `tail`, where the
// shard's eviction policy decides what happens to the record found there
// (free it if dead, evict it, give it a second chance by moving it to the
// head, or promote it to another ring). A record never straddles the end of
// the ring: when the next one does not fit, a PAD record fills the end and
// the head wraps to the start.
//
// Positions are byte offsets in the shard's region, within [base, end).
// `used` counts every byte between tail and head (records, dead records and
// padding), which tells a full ring (head === tail, used === size) from an
// empty one (used === 0). An empty ring's head and tail are at its base,
// where the next record goes (verify.js checks it).
//
// Positions and sizes are read back from shared memory, where damage (or a
// writer that lost its lock) can have left anything: a ring checks its head
// and tail before it writes at them, and its policy's work at the tail is
// bounded per insert (see Shard.tailBudget), so that bad words become an
// ERR_ARENA_CORRUPT, which repairs the shard, and never a write outside the
// ring or an endless loop under the lock. (Freeing or evicting the tail
// record shrinks `used`, so the policy's loops end; moving it to the head
// does not, hence the budget.)

import { RECORD_HEADER_BYTES, TYPE_MASK, TYPE_PAD } from './record.js';
import { M_MOVE_FROM, M_MOVE_SIZE, M_MOVE_TO, M_RINGS } from '../common/shard-meta.js';

const RING_WORDS = 5;
const R_HEAD = 0;
const R_TAIL = 1;
const R_USED = 2;
const R_COUNT = 3;
const R_LIVE_RECORD_BYTES = 4;

/** Below this fraction of live bytes, a ring's tail is compacted rather than evicted. */
export const COMPACTION_LIVE_FRACTION = 7 / 8;

export const RING_MAIN = 0;
export const RING_SMALL = 1;

export class Ring {
  /**
   * @param {import('./shard.js').Shard} shard
   * @param {number} index RING_MAIN or RING_SMALL
   * @param {number} base first byte of the ring in the shard's region
   * @param {number} size bytes (a multiple of 8; 0 for an unused ring)
   */
  constructor(shard, index, base, size) {
    this.shard = shard;
    this.index = index;
    this.base = base;
    this.size = size;
    this.end = base + size;
    const words = M_RINGS + index * RING_WORDS;
    this.headWord = words + R_HEAD;
    this.tailWord = words + R_TAIL;
    this.usedWord = words + R_USED;
    this.countWord = words + R_COUNT;
    this.liveWord = words + R_LIVE_RECORD_BYTES;
  }

  contains(offset) {
    return offset >= this.base && offset < this.end;
  }

  /** Whether `position` can be a record's start in this ring: inside it (one unsigned comparison), 8-aligned. */
  isPosition(position) {
    return (position - this.base) >>> 0 < this.size && (position & 7) === 0;
  }

  /** Whether head, tail and used are plausible (see the header): positions in the ring, something in use, no more than the ring. */
  positionsHold(head, tail, used) {
    const base = this.base;
    const size = this.size;
    return (head - base) >>> 0 < size && (tail - base) >>> 0 < size && ((head | tail) & 7) === 0 && (used - 1) >>> 0 < size;
  }

  // The errors below are built away from the methods that throw them, which
  // run on every insert: kept small, V8 inlines them.

  /** The ERR_ARENA_CORRUPT of implausible head, tail or used words. */
  positionsCorrupt() {
    const meta = this.shard.meta;
    const name = this.index === RING_MAIN ? 'main' : 'small';
    return this.shard.corrupt(
      `its ${name} ring's head ${meta[this.headWord]}, tail ${meta[this.tailWord]} or used ${meta[this.usedWord]} is out of place (the ring is [${this.base}, ${this.end}))`,
    );
  }

  /** The ERR_ARENA_CORRUPT of the implausible record at the tail (word 0 `flags`, `size` bytes). */
  tailCorrupt(flags, size) {
    const meta = this.shard.meta;
    const what = `record at offset ${meta[this.tailWord]} (flags 0x${(flags >>> 0).toString(16)}, size ${size})`;
    return this.shard.corrupt(size > meta[this.usedWord] ? `the ${what} is larger than its ring's ${meta[this.usedWord]} bytes in use` : `bad ${what}`);
  }

  get count() {
    return this.shard.meta[this.countWord];
  }

  get used() {
    return this.shard.meta[this.usedWord];
  }

  /** Bytes of live records (headers included). */
  get liveRecordBytes() {
    return this.shard.meta[this.liveWord];
  }

  get tail() {
    return this.shard.meta[this.tailWord];
  }

  /**
   * Whether the record at `offset` is in the half of the ring nearer the
   * tail (the older records). Read without the lock, so only a hint.
   */
  inOlderHalf(offset) {
    const meta = this.shard.meta;
    let distance = offset - meta[this.tailWord];
    if (distance < 0) distance += this.size;
    return 2 * distance < meta[this.usedWord];
  }

  /**
   * Whether a record of `size` bytes fits without evicting anything: the
   * live records plus it stay within the share of the ring that compaction
   * keeps (dead records and padding are reclaimed, not evicted).
   */
  hasRoom(size) {
    return this.liveRecordBytes + size <= this.size * COMPACTION_LIVE_FRACTION;
  }

  /**
   * Returns the offset where `size` contiguous bytes start at the head,
   * asking the policy to reclaim the tail until they are free. Writes a PAD
   * record when the head has to wrap. The caller then calls commit().
   */
  allocate(size) {
    const meta = this.shard.meta;
    for (;;) {
      const used = meta[this.usedWord];
      if (used === 0) return this.startEmpty();
      const head = meta[this.headWord];
      const tail = meta[this.tailWord];
      if (!this.positionsHold(head, tail, used)) throw this.positionsCorrupt();
      if (tail < head) {
        // Not wrapped: records fill [tail, head); free space is after head and before tail.
        if (this.end - head >= size) return head;
        if (tail - this.base >= size) {
          this.pad(head);
          meta[this.headWord] = this.base;
          return this.base;
        }
      } else if (tail - head >= size) {
        // Wrapped (or exactly full when head === tail): free space is [head, tail).
        return head;
      }
      this.shard.policy.reclaim(this, size);
    }
  }

  /** allocate() in an empty ring: its base, where its head and tail go too. */
  startEmpty() {
    const meta = this.shard.meta;
    // An empty ring that still counts records has lost track of them:
    // writing over them at the base would leave their slots pointing into
    // the new record.
    if (meta[this.countWord] !== 0) throw this.shard.corrupt(`a ring with nothing in use counts ${meta[this.countWord]} records`);
    meta[this.headWord] = this.base;
    meta[this.tailWord] = this.base;
    return this.base;
  }

  /** Accounts a live record of `size` bytes just written at `offset` (from allocate). */
  commit(offset, size) {
    const meta = this.shard.meta;
    const head = offset + size;
    meta[this.headWord] = head === this.end ? this.base : head;
    meta[this.usedWord] += size;
    meta[this.countWord]++;
    meta[this.liveWord] += size;
  }

  /** Fills [head, end) with a PAD record. */
  pad(head) {
    if (head === this.end) return;
    this.shard.u32[head >>> 2] = TYPE_PAD;
    this.shard.meta[this.usedWord] += this.end - head;
  }

  /**
   * Size of the record at the tail (a PAD covers the rest of the ring), or
   * throws ERR_ARENA_CORRUPT when the tail does not hold a plausible record.
   */
  tailRecordSize(flags) {
    const meta = this.shard.meta;
    const tail = meta[this.tailWord];
    if (!this.isPosition(tail)) throw this.positionsCorrupt();
    const pad = (flags & TYPE_MASK) === TYPE_PAD;
    const size = pad ? this.end - tail : this.shard.u32[(tail >>> 2) + 3];
    // No larger than what is in use, so that freeing it shrinks `used` and never takes it below 0.
    if ((!pad && ((flags & TYPE_MASK) === 0 || size < RECORD_HEADER_BYTES || size % 8 !== 0 || tail + size > this.end)) || size > meta[this.usedWord]) {
      throw this.tailCorrupt(flags, size);
    }
    return size;
  }

  /** Frees the `size` bytes at the tail (the record there is dead, padding, or was just removed). */
  advanceTail(size) {
    const meta = this.shard.meta;
    const used = meta[this.usedWord] - size;
    meta[this.usedWord] = used;
    if (used === 0) {
      meta[this.headWord] = this.base;
      meta[this.tailWord] = this.base;
    } else {
      const tail = meta[this.tailWord] + size;
      meta[this.tailWord] = tail === this.end ? this.base : tail;
    }
  }

  /** A live record leaves this ring (evicted, deleted or moved away). */
  forget(size) {
    const meta = this.shard.meta;
    meta[this.countWord]--;
    meta[this.liveWord] -= size;
  }

  /** Moves the live record at the tail to the head of this ring (`used` stays the same). */
  recycleTail(size, slot) {
    const shard = this.shard;
    // Freeing or evicting at the tail shrinks `used`, so it ends; moving
    // records round the ring does not, and is bounded per insert.
    shard.tailBudget -= size;
    if (shard.tailBudget < 0) throw shard.corrupt('an insert moved records round its rings for laps without freeing space (their counts do not match their records)');
    const meta = shard.meta;
    const tail = meta[this.tailWord];
    let head = meta[this.headWord];
    if (!this.isPosition(head)) throw this.positionsCorrupt();
    if (tail < head && this.end - head < size) {
      // Not wrapped and no room before the end: pad the end and wrap the head.
      this.pad(head);
      head = this.base;
    }
    // The destination is free space, possibly overlapping the record itself
    // (copyWithin moves like memmove); when head === tail it stays in place.
    // A copy onto itself is journaled while it runs: a holder dying in the
    // middle would leave the record torn where the ring's tail still points.
    const ontoItself = head !== tail && head < tail && head + size > tail;
    if (ontoItself) {
      meta[M_MOVE_TO] = head;
      meta[M_MOVE_SIZE] = size;
      meta[M_MOVE_FROM] = tail + 1;
    }
    if (head !== tail) shard.u8.copyWithin(head, tail, tail + size);
    shard.table[2 * slot] = head / 8 + 1;
    shard.slotChanged(slot);
    head += size;
    meta[this.headWord] = head === this.end ? this.base : head;
    meta[this.tailWord] = tail + size === this.end ? this.base : tail + size;
    if (ontoItself) meta[M_MOVE_FROM] = 0;
  }

  /**
   * Moves the live record at the tail into ring `to` (promotion). Allocating
   * in `to` may evict there, which can shift dictionary slots, so the slot is
   * looked up again afterwards. Returns the record's new offset.
   */
  moveTailTo(to, size, hash) {
    const shard = this.shard;
    const from = this.shard.meta[this.tailWord];
    const destination = to.allocate(size);
    shard.u8.copyWithin(destination, from, from + size);
    const slot = shard.slotOfRecord(from, hash);
    if (slot < 0) throw shard.corrupt(`record at ${from} lost its dictionary slot while moving`);
    shard.table[2 * slot] = destination / 8 + 1;
    shard.slotChanged(slot);
    to.commit(destination, size);
    this.forget(size);
    this.advanceTail(size);
    return destination;
  }

  reset() {
    const meta = this.shard.meta;
    meta[this.headWord] = this.base;
    meta[this.tailWord] = this.base;
    meta[this.usedWord] = 0;
    meta[this.countWord] = 0;
    meta[this.liveWord] = 0;
  }
}

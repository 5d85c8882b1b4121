// Eviction policies. Each decides what happens to the record at the tail of
// a ring when space is needed, which ring a new record enters, and which
// entry leaves when the entry bound (`max`) is reached. All state is in the
// shared buffer (the per-entry frequency lives in the low bits of the
// entry's dictionary slot, which readers raise with one compareExchange,
// and only while it is below the policy's cap), so every thread and process
// evicts by the same rules, and every operation is O(1) amortized: a record
// moved to the head spends a frequency unit that a read paid for.
//
//   lru     CLOCK: a read marks the entry; the tail gives marked entries a
//           second chance (moves them to the head, unmarked) and evicts the rest.
//           Only reads in the older half of the ring mark: strict LRU keeps
//           an entry for about one cache-full of accesses after its last
//           read, while a mark set just after insertion would keep it for
//           nearly two laps. Marking in the older half only keeps it for 0.5
//           to 1.5 laps, one on average, which tracks exact LRU's hit ratio
//           within a few tenths of a point (bench/hit-ratio) where plain
//           CLOCK ran up to 1.3 points ahead of it.
//   lfu     Evicts the least frequently read entry of a random sample of 16
//           (4-bit frequency counts); every eviction also halves the counts
//           of two entries in turn (aging), so an old burst of reads fades
//           instead of pinning its entries forever. The ring is compacted.
//   hybrid  S3-FIFO that sizes itself: new entries enter a small ring (10%
//           of the memory); an entry read there moves to the main ring,
//           others leave and are remembered as ghosts, so that a key that
//           comes back soon enters the main ring directly. The main ring is a
//           CLOCK with a 2-bit frequency, whose evictions are remembered too.
//           One-hit wonders and scans pass through the small ring without
//           pushing out the entries that are read often. How many entries
//           the small ring keeps (1% to 98% of the shard's, 10% to start)
//           follows the ghosts: a key back soon after the small ring evicted
//           it raises the share, one back soon after the main ring did
//           lowers it (ghost-table.js). So keys read twice a little apart
//           (which a 10% small ring evicts before their second read, where
//           S3-FIFO is far below LRU) and loops larger than the small ring
//           grow it, and skewed popularity shrinks it. Above a share of a
//           half, an entry read in the small ring gets a second chance there
//           (a CLOCK) rather than a move to a main ring of a few entries,
//           which would evict it before its next read. It adapts in caches
//           with `max`: without, memory binds, and the small ring's memory
//           (10%) bounds it anyway.
//   ttl     Evicts the entry closest to its expiry among a random sample of
//           16 entries (entries without a ttl last, oldest first), and
//           compacts the ring.
//
// Evictions are published on the diagnostics_channel 'arenacache:evict'
// (see lib/cache/diagnostics.js), one message per reason per set() that
// evicted. Not from inside the set: it holds the shard's lock, and a
// subscriber that used the cache there would wait for that lock forever.
// The evictions of one holding of the lock are counted and published in a
// microtask, which runs after the set has returned. Nobody subscribed: one
// hasSubscribers read per eviction, nothing else.

import { channel } from 'node:diagnostics_channel';
import { EXPIRY_F64, HAS_TTL, TYPE_LIVE, TYPE_MASK } from './record.js';
import { COMPACTION_LIVE_FRACTION, RING_SMALL } from './ring.js';
import { GHOST_MAIN, GHOST_NONE, GHOST_RECENT, GHOST_SMALL, SHARE_HALF, SHARE_ONE } from './ghost-table.js';
import { M_AGING_CURSOR, M_SEQ } from '../common/shard-meta.js';
import { STAT } from '../common/thread-stats.js';

/** Frequency bits in a slot's word 1. */
export const FREQUENCY_MASK = 15;
/** Keeps the hash bits of a slot's word 1, clearing the frequency. */
export const TAG_MASK = ~FREQUENCY_MASK;
/** Entries the lfu and ttl policies sample per eviction. */
const SAMPLES = 16;
/** hybrid: while the cache fills, the small ring takes new entries up to 1/FILLING_SMALL_SHARE of the entries (see S3FifoPolicy#place): a half. */
const FILLING_SMALL_SHARE = 2;
/** lfu: evictions per aged slot. */
const AGING_EVICTIONS = 4;

/** The diagnostics_channel of eviction batches (named here: arena/ imports nothing from cache/). */
export const EVICT_CHANNEL_NAME = 'arenacache:evict';
const evictChannel = channel(EVICT_CHANNEL_NAME);

/**
 * Publishes the evictions counted in `batch` (see EvictionPolicy#noteEviction):
 * a message for each reason that evicted, `max` first (a set evicts for the
 * entry bound before it makes room in memory).
 */
function publishEvictions(policy, batch) {
  if (policy.evictionBatch === batch) policy.evictionBatch = null;
  const shard = policy.shard.index;
  if (batch.max > 0) evictChannel.publish({ count: batch.max, reason: 'max', shard });
  if (batch.memory > 0) evictChannel.publish({ count: batch.memory, reason: 'memory', shard });
}

class EvictionPolicy {
  /** @param {import('./shard.js').Shard} shard */
  constructor(shard) {
    this.shard = shard;
    /** Evictions of the current holding of the shard's lock, not yet published (only while someone subscribes). */
    this.evictionBatch = null;
  }

  /**
   * The ring for a record of `size` bytes with `hash`: a new entry when
   * `previous` is null, else a new version of an entry that was in `previous`.
   * `cacheFull`: the insert had to evict for `max`.
   * @type {(size: number, hash: number, cacheFull: boolean, previous: import('./ring.js').Ring | null) => import('./ring.js').Ring}
   */
  place() {
    return this.shard.main;
  }

  /** Processes the record at the tail of `ring` once; `need` is the space the caller wants. */
  reclaim(ring, need) {
    const shard = this.shard;
    const tail = ring.tail;
    const flags = shard.u32[tail >>> 2];
    const size = ring.tailRecordSize(flags);
    if ((flags & TYPE_MASK) !== TYPE_LIVE) {
      ring.advanceTail(size);
      return;
    }
    const hash = shard.u32[(tail >>> 2) + 2];
    const slot = shard.slotOfRecord(tail, hash);
    if (slot < 0) throw shard.corrupt(`live record at offset ${tail} has no dictionary slot`);
    if ((flags & HAS_TTL) !== 0 && shard.f64[(tail >>> 3) + EXPIRY_F64] <= shard.clock.now()) {
      this.evictTail(ring, slot, size, STAT.expirations);
      return;
    }
    this.atTail(ring, slot, size, hash, need);
  }

  /** The policy's decision for a live, unexpired record at the tail. */
  atTail(ring, slot, size, hash, need) {
    if (this.compactable(ring, need)) {
      this.recycle(ring, slot, size);
    } else {
      this.evicting(ring, hash);
      this.evictTail(ring, slot, size, this.shard.evictionCause);
    }
  }

  /**
   * The live record of `hash` at the tail of `ring` is about to be evicted for space (hybrid remembers it).
   * @type {(ring: import('./ring.js').Ring, hash: number) => void}
   */
  evicting() {}

  /**
   * Whether moving live records beats evicting them: enough of the ring is
   * dead space. Compaction is not limited by the relocation budget: while it
   * applies, one pass around the ring frees at least an eighth of it, so it
   * always ends and costs O(1) amortized per byte written.
   */
  compactable(ring, need) {
    return ring.liveRecordBytes + need <= ring.size * COMPACTION_LIVE_FRACTION;
  }

  /** Moves the tail record to the head of its ring (a second chance or compaction). */
  recycle(ring, slot, size) {
    ring.recycleTail(size, slot);
    this.shard.counters[STAT.relocations]++;
  }

  /** A second chance paid by a read: bounded per write by the relocation budget. */
  secondChance(ring, slot, size, frequency) {
    this.shard.relocationBudget--;
    this.shard.setFrequency(slot, frequency);
    this.recycle(ring, slot, size);
  }

  evictTail(ring, slot, size, stat) {
    const shard = this.shard;
    shard.removeEntry(slot, ring.tail);
    ring.advanceTail(size);
    shard.counters[stat]++;
    if (evictChannel.hasSubscribers && stat !== STAT.expirations) this.noteEviction(stat);
  }

  /**
   * Counts an eviction (`stat`: STAT.evictions or STAT.evictionsMax) for
   * 'arenacache:evict'. The lock's sequence value names this holding of the
   * lock, that is this set(): its first eviction opens a batch and queues
   * the batch's publication, which runs once the set has returned.
   */
  noteEviction(stat) {
    const holding = this.shard.meta[M_SEQ];
    let batch = this.evictionBatch;
    if (batch === null || batch.holding !== holding) {
      batch = { holding, max: 0, memory: 0 };
      this.evictionBatch = batch;
      queueMicrotask(() => publishEvictions(this, batch));
    }
    if (stat === STAT.evictionsMax) batch.max++;
    else batch.memory++;
  }

  /** Removes one entry because the entry bound is reached. */
  evictForCount() {
    const shard = this.shard;
    const before = shard.count;
    // `need` of a whole ring: never compact instead of evicting here.
    while (shard.count === before && shard.main.used > 0) this.reclaim(shard.main, shard.main.size);
  }
}

/** lru: CLOCK with one mark, set only by reads in the older half of the ring. */
class ClockPolicy extends EvictionPolicy {
  constructor(shard) {
    super(shard);
    this.maxFrequency = 1;
    this.marksOlderHalfOnly = true;
  }

  atTail(ring, slot, size, hash, need) {
    const shard = this.shard;
    if (shard.relocationBudget > 0 && shard.frequency(slot) > 0) this.secondChance(ring, slot, size, 0);
    else super.atTail(ring, slot, size, hash, need);
  }
}

/**
 * hybrid: S3-FIFO (small ring, main ring, ghosts) whose small ring's share
 * of the entries adapts to the workload (see ghost-table.js).
 */
class S3FifoPolicy extends EvictionPolicy {
  constructor(shard) {
    super(shard);
    this.maxFrequency = 3;
    /** The shard's entry capacity (fixed by the layout). */
    this.capacity = shard.entryCapacity();
    /** While the cache fills, the small ring takes new entries up to this many. */
    this.fillingLimit = this.capacity / FILLING_SMALL_SHARE;
  }

  /** Entries the small ring keeps once the cache is full: its share of the shard's capacity, at least 1. */
  smallTarget() {
    return Math.max(1, Math.floor((this.capacity * this.shard.ghosts.share) / SHARE_ONE));
  }

  /**
   * New entries go to the small ring while it holds less than its share and
   * its memory has room. While the cache fills (the insert did not have to
   * evict for the entry bound), up to half of the entries: the first
   * evictions then sort a larger sample (read entries to the main ring,
   * others to the ghosts), while the rest fills the main ring, which keeps
   * part of a loop larger than the cache (see docs/how-it-works.md). When
   * the small ring takes no more and the cache is still filling, straight
   * to the main ring (as libCacheSim's S3-FIFO does), so that a cache that
   * is filling up uses all its memory and nothing is evicted before it is
   * full. A key
   * evicted not long ago (a ghost) has proven itself and goes to the main
   * ring, and moves the small ring's share (see ghost-table.js); so do records
   * too large for the small ring, and new versions of main-ring entries.
   */
  place(size, hash, cacheFull, previous) {
    const shard = this.shard;
    const small = shard.small;
    const main = shard.main;
    if (previous === main || size > small.size / 4) return main;
    if (previous === null && this.admittedByGhost(hash)) return main;
    if (small.hasRoom(size) && (small.count < this.smallTarget() || (!cacheFull && small.count < this.fillingLimit))) return small;
    // The cache is full once the main ring cannot take the record without
    // evicting: from then on new entries go through the small ring.
    if (!cacheFull && main.liveRecordBytes + size <= main.size) return main;
    return small;
  }

  /**
   * Whether the key of `hash` left the small ring lately and goes to the
   * main ring (its ghost is consumed). A recent ghost moves the small ring's
   * share by one entry: up if it left the small ring, down if the main one.
   * A key the main ring evicted enters the small ring again, as a new key
   * does: sent back to the main ring, keys of a loop larger than the cache
   * would push each other out of it in turn.
   */
  admittedByGhost(hash) {
    const shard = this.shard;
    const capacity = Math.max(shard.count, 1);
    const ghost = shard.ghosts.take(hash, capacity);
    if (ghost === GHOST_NONE) return false;
    // Only an adaptive table reports recent ghosts.
    if (ghost >= GHOST_RECENT) {
      const step = Math.max(1, Math.round(SHARE_ONE / capacity));
      shard.ghosts.moveShare(ghost === GHOST_SMALL + GHOST_RECENT ? step : -step);
    }
    return (ghost & GHOST_MAIN) === 0;
  }

  atTail(ring, slot, size, hash, need) {
    const shard = this.shard;
    const frequency = shard.frequency(slot);
    if (ring.index === RING_SMALL && frequency > 0) {
      // A small ring that holds most of the cache is a CLOCK: a main ring
      // of a few entries would evict what it promoted before its next read.
      if (shard.relocationBudget > 0 && shard.ghosts.share > SHARE_HALF) {
        this.secondChance(ring, slot, size, 0);
      } else {
        shard.setFrequency(slot, 0);
        ring.moveTailTo(shard.main, size, hash);
        shard.counters[STAT.promotions]++;
      }
    } else if (ring.index !== RING_SMALL && shard.relocationBudget > 0 && frequency > 0) {
      this.secondChance(ring, slot, size, frequency - 1);
    } else {
      super.atTail(ring, slot, size, hash, need);
    }
  }

  /** A key evicted from either ring becomes a ghost of that ring. */
  evicting(ring, hash) {
    this.shard.ghosts.put(hash, ring.index === RING_SMALL ? GHOST_SMALL : GHOST_MAIN);
  }

  evictForCount() {
    const shard = this.shard;
    const before = shard.count;
    const target = this.smallTarget();
    while (shard.count === before) {
      const small = shard.small;
      const fromSmall = small.count > 0 && (small.count >= target || shard.main.count === 0);
      const ring = fromSmall ? small : shard.main;
      if (ring.used === 0) return;
      this.reclaim(ring, ring.size);
    }
  }
}

/**
 * Evicts the entry with the lowest score among a random sample of the
 * dictionary, wherever its record is; the ring's tail is then compacted
 * (its live records move to the head) until the freed space comes round.
 */
class SampledPolicy extends EvictionPolicy {
  atTail(ring, slot, size, hash, need) {
    if (this.compactable(ring, need)) {
      this.recycle(ring, slot, size);
      return;
    }
    if (!this.evictSampled()) this.evictTail(ring, slot, size, this.shard.evictionCause);
  }

  /**
   * Score of the entry in `slot` whose record is at `offset`: the lowest is evicted; null: never chosen.
   * @type {(slot: number, offset: number) => number | null}
   */
  score() {
    return 0;
  }

  /** Evicts the lowest-scoring entry of a sample; false if the sample offered none. */
  evictSampled() {
    const shard = this.shard;
    const table = shard.table;
    let bestSlot = -1;
    let bestScore = Infinity;
    let sampled = 0;
    for (let tries = 0; tries < 4 * SAMPLES && sampled < SAMPLES; tries++) {
      const i = shard.randomSlot();
      const w0 = table[2 * i];
      if (w0 === 0) continue;
      sampled++;
      const score = this.score(i, (w0 - 1) * 8);
      if (score !== null && score < bestScore) {
        bestScore = score;
        bestSlot = i;
      }
    }
    if (bestSlot < 0) return false;
    const offset = (table[2 * bestSlot] - 1) * 8;
    const expired = (shard.u32[offset >>> 2] & HAS_TTL) !== 0 && shard.f64[(offset >>> 3) + EXPIRY_F64] <= shard.clock.now();
    shard.removeEntry(bestSlot, offset);
    if (expired) {
      shard.counters[STAT.expirations]++;
    } else {
      shard.counters[shard.evictionCause]++;
      if (evictChannel.hasSubscribers) this.noteEviction(shard.evictionCause);
    }
    this.evicted();
    return true;
  }

  evicted() {}

  evictForCount() {
    if (!this.evictSampled()) super.evictForCount();
  }
}

/** lfu: sampled least-frequently-read eviction with aging. */
class SampledLfuPolicy extends SampledPolicy {
  constructor(shard) {
    super(shard);
    this.maxFrequency = 15;
  }

  score(slot) {
    return this.shard.frequency(slot);
  }

  /**
   * Aging: every AGING_EVICTIONS evictions, halve the count of the next slot
   * in turn, so each count halves about once per 5 × the entry count
   * evictions (cf. TinyLFU's periodic halving). Slower aging favours stable
   * popularity, faster aging shifting popularity; see bench/hit-ratio.
   */
  evicted() {
    const shard = this.shard;
    const step = shard.meta[M_AGING_CURSOR] + 1;
    shard.meta[M_AGING_CURSOR] = step;
    if (step % AGING_EVICTIONS !== 0) return;
    const slot = (step / AGING_EVICTIONS) % shard.slots;
    const frequency = shard.frequency(slot);
    if (frequency > 0) shard.setFrequency(slot, frequency >> 1);
  }
}

/** ttl: sampled earliest-expiry eviction; entries without a ttl go last (then FIFO). */
class ExpiryPolicy extends SampledPolicy {
  constructor(shard) {
    super(shard);
    this.maxFrequency = 0;
  }

  score(slot, offset) {
    const shard = this.shard;
    return (shard.u32[offset >>> 2] & HAS_TTL) === 0 ? null : shard.f64[(offset >>> 3) + EXPIRY_F64];
  }
}

/**
 * A shard's eviction policy: `maxFrequency` is the frequency readers may
 * raise an entry to; `marksOlderHalfOnly` (lru) that a read counts only in
 * the older half of the main ring.
 * @typedef {EvictionPolicy & { maxFrequency: number, marksOlderHalfOnly?: boolean }} Policy
 */

/**
 * The policy object for a shard, by name.
 * @param {string} name
 * @param {import('./shard.js').Shard} shard
 * @returns {Policy}
 */
export function createPolicy(name, shard) {
  switch (name) {
    case 'lru':
      return new ClockPolicy(shard);
    case 'lfu':
      return new SampledLfuPolicy(shard);
    case 'ttl':
      return new ExpiryPolicy(shard);
    default:
      return new S3FifoPolicy(shard);
  }
}

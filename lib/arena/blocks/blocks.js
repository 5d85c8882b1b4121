// BlockArena: file data in fixed-size blocks inside one shared buffer (or
// mapped file), addressed by (file id, block index). It is the data cache
// that CacheFS write-back builds on: written blocks stay dirty, and so
// pinned, until the writer-back has stored them and marks them clean; only
// clean blocks are evicted (CLOCK). Its layout is in block-layout.js.
//
// Blocks are spread over stripes (block-stripe.js) by a hash of (file,
// index), so consecutive blocks of one file land on different stripes and
// writers to different blocks rarely meet. Each stripe owns a fixed share of
// the blocks, an open-addressing table (linear probing, backward-shift
// deletion) and a ShardLock: writers lock, readers copy optimistically and
// check the stripe's sequence afterwards, as in the cache arena.
//
// A block holds one contiguous valid range [from, to) of its bytes. A write
// that leaves a gap to the range is refused while the block is dirty (the
// bytes in between are unknown and must not be written back), and replaces
// the range of a clean block.
//
// File locks (block-file-lock.js) serve users that change several blocks of
// a file as one step.

import { ArenaCacheError, codes } from '../../errors.js';
import { B_FILE, B_FLAGS, B_FROM, B_GENERATION, B_INDEX, B_TO, BLOCK_META_WORDS, BLOCKS_MAGIC, DIRTY, FILE_LOCKS, readBlocksHeader, REFERENCED, S_DIRTY, S_FRESH, S_HAND, S_LOST_DIRTY, S_USED, S_WRITING, SLOT_WORDS, USED, writeBlocksHeader } from './block-layout.js';
import { FILE_LOCK_LEASE_MS, FileLock } from './block-file-lock.js';
import { Stripe } from './block-stripe.js';
import { releaseAbandonedLock, sequenceAfter, sequenceBefore, ShardLock } from '../common/shard-lock.js';
import { M_SEQ } from '../common/shard-meta.js';
import { claimThreadSlot, releaseThreadSlots, STAT, sumThreadSlots } from '../common/thread-stats.js';
import { memoryWaiting } from '../common/waiting.js';

const OPTIMISTIC_ATTEMPTS = 4;

function stripeCorrupt(stripe, what) {
  return new ArenaCacheError(codes.ERR_ARENA_CORRUPT, `block stripe ${stripe.index} is corrupt: ${what}`);
}

function mix(file, index) {
  let h = Math.imul(file ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 0x7f4a7c15, 0xc2b2ae35);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 13)) >>> 0;
}

export class BlockArena {
  /** A new block arena in `buffer` (zeroed, at least plan.memoryBytes). */
  static initialize(buffer, plan, options) {
    writeBlocksHeader(buffer, plan);
    return new BlockArena(buffer, readBlocksHeader(buffer), options);
  }

  static attach(buffer, options) {
    return new BlockArena(buffer, readBlocksHeader(buffer), options);
  }

  constructor(buffer, header, { waiting = memoryWaiting, truncation = null, liveness = null } = {}) {
    this.buffer = buffer;
    this.header = header;
    this.blockBytes = header.blockBytes;
    const claim = claimThreadSlot(buffer, header, liveness);
    /** For a mapped file: the liveness lock of this thread's slot (given back by file-backing.js's releaseMappedArena). */
    this.liveness = liveness;
    this.counters = claim.counters;
    this.threadSlot = claim.slot;
    // Waits are not bounded here (unlike a cache's, see shard-lock.js): a
    // write or a drop spans several stripes and its user (CacheFS
    // write-back) cannot yet undo one cut short, so a stopped holder is
    // waited for rather than leave a file's blocks half changed.
    this.lock = new ShardLock({ leaseMs: 1000, counters: claim.counters, ownerId: claim.owner, waiting, truncation, liveness });
    const blockCount = header.stripeCount * header.blocksPerStripe;
    this.blockMeta = new Uint32Array(buffer, header.blockMetaOffset, blockCount * BLOCK_META_WORDS);
    this.data = new Uint8Array(buffer, header.dataOffset, blockCount * header.blockBytes);
    this.stripes = [];
    for (let i = 0; i < header.stripeCount; i++) this.stripes.push(new Stripe(buffer, header, i, this));
    this.fileLocks = [];
    for (let i = 0; i < FILE_LOCKS; i++) this.fileLocks.push(new FileLock(buffer, header, i));
    this.fileLock = new ShardLock({ leaseMs: FILE_LOCK_LEASE_MS, counters: claim.counters, ownerId: claim.owner, waiting, truncation, liveness });
    /** Block of the last copyOut(), and table slot of the last find(). */
    this.foundBlock = -1;
    this.foundSlot = -1;
    /** A private word for the read fence on weakly ordered CPUs (see sequenceAfter). */
    this.fence = new Int32Array(new SharedArrayBuffer(4));
  }


  /** Takes the lock of `file` (shared with the files whose ids are equal modulo 256); returns the holding for unlockFile(). */
  lockFile(file) {
    return this.fileLock.acquire(this.fileLocks[file % FILE_LOCKS]);
  }

  fileLockSequence(file) {
    return Atomics.load(this.fileLocks[file % FILE_LOCKS].meta, M_SEQ);
  }

  unlockFile(file, held) {
    this.fileLock.release(this.fileLocks[file % FILE_LOCKS], held, false);
  }

  stripeOf(file, index) {
    return this.stripes[mix(file, index) % this.stripes.length];
  }

  /** The block holding (file, index) in `stripe`, or -1. Safe without the lock (bounded probes). */
  find(stripe, file, index) {
    const table = stripe.table;
    const n = stripe.slots;
    let i = mix(index, file) % n;
    for (let probes = 0; probes < n; probes++) {
      const base = i * SLOT_WORDS;
      const block = table[base + 2];
      if (block === 0) return -1;
      if (table[base] === file && table[base + 1] === index) {
        this.foundSlot = i;
        return block - 1;
      }
      if (++i === n) i = 0;
    }
    return -1;
  }

  /** Adds (file, index) -> block to the table; false if the key is there already (a damaged stripe). */
  insert(stripe, file, index, block) {
    const table = stripe.table;
    const n = stripe.slots;
    let i = mix(index, file) % n;
    // The table has twice as many slots as the stripe has blocks: one
    // without a free slot is damaged, and must not become an endless probe.
    for (let base = i * SLOT_WORDS, probes = 0; table[base + 2] !== 0; base = i * SLOT_WORDS) {
      if (table[base] === file && table[base + 1] === index) return false;
      if (++probes === n) throw stripeCorrupt(stripe, 'its table has no free slot');
      if (++i === n) i = 0;
    }
    const base = i * SLOT_WORDS;
    table[base] = file;
    table[base + 1] = index;
    table[base + 2] = block + 1;
    return true;
  }

  /** Empties table slot `i` and shifts back the entries whose probe ran through it. */
  removeSlot(stripe, i) {
    const table = stripe.table;
    const n = stripe.slots;
    let j = i;
    for (let probes = 0; ; probes++) {
      if (probes === n) throw stripeCorrupt(stripe, 'its table has no free slot');
      if (++j === n) j = 0;
      const base = j * SLOT_WORDS;
      if (table[base + 2] === 0) break;
      const home = mix(table[base + 1], table[base]) % n;
      const stays = i <= j ? i < home && home <= j : i < home || home <= j;
      if (!stays) {
        table.copyWithin(i * SLOT_WORDS, base, base + SLOT_WORDS);
        i = j;
      }
    }
    table.fill(0, i * SLOT_WORDS, (i + 1) * SLOT_WORDS);
  }

  /** A block for a new (file, index): a never-used one, else a clean one by CLOCK; -1 when every block is dirty. */
  allocate(stripe) {
    const meta = stripe.meta;
    const blockMeta = this.blockMeta;
    // Both counts are read back from shared memory and name a block: out of
    // range, they would hand out another stripe's block (or none at all).
    const fresh = meta[S_FRESH];
    if (!(fresh >= 0 && fresh <= stripe.blockCount && meta[S_HAND] >= 0 && meta[S_HAND] < stripe.blockCount)) {
      throw stripeCorrupt(stripe, `its fresh-block count ${fresh} or CLOCK hand ${meta[S_HAND]} is outside [0, ${stripe.blockCount}]`);
    }
    if (fresh < stripe.blockCount) {
      meta[S_FRESH] = fresh + 1;
      return stripe.firstBlock + fresh;
    }
    for (let step = 0; step < 2 * stripe.blockCount; step++) {
      const hand = meta[S_HAND];
      meta[S_HAND] = hand + 1 === stripe.blockCount ? 0 : hand + 1;
      const block = stripe.firstBlock + hand;
      const m = block * BLOCK_META_WORDS;
      const flags = blockMeta[m + B_FLAGS];
      if ((flags & USED) === 0) return block;
      if ((flags & DIRTY) !== 0) continue;
      if ((flags & REFERENCED) !== 0) {
        blockMeta[m + B_FLAGS] = flags & ~REFERENCED;
        continue;
      }
      this.evict(stripe, block);
      this.counters[STAT.evictions]++;
      return block;
    }
    return -1;
  }

  /** Removes `block` from its stripe (it must be in use); the caller holds the lock. */
  evict(stripe, block) {
    const m = block * BLOCK_META_WORDS;
    const blockMeta = this.blockMeta;
    if (this.find(stripe, blockMeta[m + B_FILE], blockMeta[m + B_INDEX]) !== block) throw stripeCorrupt(stripe, `block ${block} is not in its table`);
    this.removeSlot(stripe, this.foundSlot);
    if ((blockMeta[m + B_FLAGS] & DIRTY) !== 0) stripe.meta[S_DIRTY]--;
    blockMeta[m + B_FLAGS] = 0;
    stripe.meta[S_USED]--;
  }

  /**
   * Writes `length` bytes of `source` from `sourceStart` into block `index`
   * of `file` at byte `offset` within the block, and marks it dirty.
   */
  writeBlock(file, index, offset, source, sourceStart, length) {
    const stripe = this.stripeOf(file, index);
    const held = this.lock.acquire(stripe);
    try {
      const blockMeta = this.blockMeta;
      let block = this.find(stripe, file, index);
      let m;
      if (block < 0) {
        block = this.allocate(stripe);
        if (block < 0) {
          throw new ArenaCacheError(
            codes.ERR_BLOCKS_FULL,
            `every block of stripe ${stripe.index} is dirty: write dirty blocks back and markClean() them, or give the store more memoryBytes`,
          );
        }
        stripe.meta[S_WRITING] = block + 1;
        m = block * BLOCK_META_WORDS;
        blockMeta[m + B_FILE] = file;
        blockMeta[m + B_INDEX] = index;
        blockMeta[m + B_FROM] = offset;
        blockMeta[m + B_TO] = offset + length;
        blockMeta[m + B_FLAGS] = USED;
        this.insert(stripe, file, index, block);
        stripe.meta[S_USED]++;
      } else {
        stripe.meta[S_WRITING] = block + 1;
        m = block * BLOCK_META_WORDS;
        const from = blockMeta[m + B_FROM];
        const to = blockMeta[m + B_TO];
        if (offset > to || offset + length < from) {
          if ((blockMeta[m + B_FLAGS] & DIRTY) !== 0) {
            throw new ArenaCacheError(
              codes.ERR_BLOCK_GAP,
              `a write at byte ${index * this.blockBytes + offset} of file ${file} would leave a gap in a dirty block (it holds bytes ` +
                `${index * this.blockBytes + from} to ${index * this.blockBytes + to}); write the block back and markClean() it first`,
            );
          }
          blockMeta[m + B_FROM] = offset;
          blockMeta[m + B_TO] = offset + length;
        } else {
          blockMeta[m + B_FROM] = Math.min(from, offset);
          blockMeta[m + B_TO] = Math.max(to, offset + length);
        }
      }
      this.data.set(source.subarray(sourceStart, sourceStart + length), block * this.blockBytes + offset);
      const flags = blockMeta[m + B_FLAGS];
      if ((flags & DIRTY) === 0) stripe.meta[S_DIRTY]++;
      blockMeta[m + B_FLAGS] = flags | DIRTY | REFERENCED;
      blockMeta[m + B_GENERATION] = (blockMeta[m + B_GENERATION] + 1) >>> 0;
      stripe.meta[S_WRITING] = 0;
      this.counters[STAT.sets]++;
    } catch (error) {
      stripe.meta[S_WRITING] = 0;
      if (error?.code === codes.ERR_ARENA_CORRUPT) {
        stripe.reset();
        this.counters[STAT.shardRepairs]++;
      }
      throw error;
    } finally {
      this.lock.release(stripe, held);
    }
  }

  /**
   * Copies bytes [offset, offset + length) of block `index` of `file` into
   * `target` at `targetStart` without a lock (retrying if a writer came in
   * between). Returns false when the block does not hold all of them.
   */
  readBlock(file, index, offset, length, target, targetStart) {
    const stripe = this.stripeOf(file, index);
    const meta = stripe.meta;
    for (let attempt = 0; attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
      const seq = sequenceBefore(meta);
      if ((seq & 1) !== 0) {
        this.lock.waitWhileHeld(stripe, seq);
        continue;
      }
      const found = this.copyOut(stripe, file, index, offset, length, target, targetStart);
      if (sequenceAfter(meta, this.fence) === seq) return this.counted(found);
      this.counters[STAT.readRetries]++;
    }
    const held = this.lock.acquire(stripe);
    try {
      return this.counted(this.copyOut(stripe, file, index, offset, length, target, targetStart));
    } finally {
      this.lock.release(stripe, held, false);
    }
  }

  counted(found) {
    if (found) {
      this.counters[STAT.hits]++;
      const m = this.foundBlock * BLOCK_META_WORDS + B_FLAGS;
      const flags = this.blockMeta[m];
      // A use for CLOCK: one compare-and-swap, only when not yet marked.
      if ((flags & REFERENCED) === 0) Atomics.compareExchange(this.blockMeta, m, flags, flags | REFERENCED);
    } else {
      this.counters[STAT.misses]++;
    }
    return found;
  }

  copyOut(stripe, file, index, offset, length, target, targetStart) {
    const block = this.find(stripe, file, index);
    if (block < 0) return false;
    const m = block * BLOCK_META_WORDS;
    if (this.blockMeta[m + B_FROM] > offset || this.blockMeta[m + B_TO] < offset + length) return false;
    const start = block * this.blockBytes + offset;
    // Only a torn read can point outside the data; the sequence check discards it.
    if (start + length > this.data.length) return false;
    target.set(this.data.subarray(start, start + length), targetStart);
    this.foundBlock = block;
    return true;
  }

  /**
   * The dirty blocks (of `file` only, unless it is -1), one stripe at a time:
   * [{ file, index, from, to, generation }].
   */
  dirtyBlocks(file) {
    const result = [];
    const blockMeta = this.blockMeta;
    for (const stripe of this.stripes) {
      if (stripe.meta[S_DIRTY] === 0) continue;
      const held = this.lock.acquire(stripe);
      try {
        for (let block = stripe.firstBlock; block < stripe.firstBlock + stripe.blockCount; block++) {
          const m = block * BLOCK_META_WORDS;
          if ((blockMeta[m + B_FLAGS] & DIRTY) === 0) continue;
          if (file !== -1 && blockMeta[m + B_FILE] !== file) continue;
          result.push({ file: blockMeta[m + B_FILE], index: blockMeta[m + B_INDEX], from: blockMeta[m + B_FROM], to: blockMeta[m + B_TO], generation: blockMeta[m + B_GENERATION] });
        }
      } finally {
        this.lock.release(stripe, held, false);
      }
    }
    return result;
  }

  /** Marks block `index` of `file` clean if it was not written since `generation`; returns whether it did. */
  markClean(file, index, generation) {
    const stripe = this.stripeOf(file, index);
    const held = this.lock.acquire(stripe);
    let cleaned = false;
    try {
      const block = this.find(stripe, file, index);
      if (block >= 0) {
        const m = block * BLOCK_META_WORDS;
        const flags = this.blockMeta[m + B_FLAGS];
        if ((flags & DIRTY) !== 0 && this.blockMeta[m + B_GENERATION] === generation) {
          this.blockMeta[m + B_FLAGS] = flags & ~DIRTY;
          stripe.meta[S_DIRTY]--;
          cleaned = true;
        }
      }
    } finally {
      this.lock.release(stripe, held, cleaned);
    }
    return cleaned;
  }

  /** Drops every block of `file` (dirty ones too: the file was deleted); returns how many. */
  dropFile(file) {
    let dropped = 0;
    const blockMeta = this.blockMeta;
    for (const stripe of this.stripes) {
      if (stripe.meta[S_USED] === 0) continue;
      const held = this.lock.acquire(stripe);
      let changed = false;
      try {
        for (let block = stripe.firstBlock; block < stripe.firstBlock + stripe.blockCount; block++) {
          const m = block * BLOCK_META_WORDS;
          if ((blockMeta[m + B_FLAGS] & USED) !== 0 && blockMeta[m + B_FILE] === file) {
            this.evict(stripe, block);
            changed = true;
            dropped++;
          }
        }
      } finally {
        this.lock.release(stripe, held, changed);
      }
    }
    this.counters[STAT.deletes] += dropped;
    return dropped;
  }

  dirtyCount() {
    let dirty = 0;
    for (const stripe of this.stripes) dirty += stripe.meta[S_DIRTY];
    return dirty;
  }

  stats() {
    const totals = sumThreadSlots(this.buffer, this.header, this.counters);
    let used = 0;
    let dirty = 0;
    let lostDirty = 0;
    for (const stripe of this.stripes) {
      used += stripe.meta[S_USED];
      dirty += stripe.meta[S_DIRTY];
      lostDirty += stripe.meta[S_LOST_DIRTY];
    }
    return { totals, used, dirty, lostDirty };
  }

  /** After a restart (sole user of the file): stripes left locked by exited writers are repaired, thread slots freed. */
  recoverAfterRestart() {
    let reset = 0;
    for (const stripe of this.stripes) {
      if (releaseAbandonedLock(stripe)) {
        this.counters[STAT.lockRecoveries]++;
        reset++;
      }
    }
    for (const fileLock of this.fileLocks) if (releaseAbandonedLock(fileLock)) this.counters[STAT.lockRecoveries]++;
    releaseThreadSlots(this.buffer, this.header, this.threadSlot);
    return reset;
  }
}

/** The block arena as a kind of file content (see openArenaFile). */
export const BLOCK_ARENA = Object.freeze({
  magic: BLOCKS_MAGIC,
  create: (buffer, plan, options) => BlockArena.initialize(buffer, plan, options),
  attach: (buffer, options) => BlockArena.attach(buffer, options),
  recover: (arena) => arena.recoverAfterRestart(),
});

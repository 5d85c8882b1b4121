// Stripe: one share of a block arena's blocks, with its lock word and meta,
// its open-addressing table (linear probing, backward-shift deletion) and
// its range of blocks. The table operations are BlockArena's (blocks.js);
// this is what a stripe does on its own when its lock was taken from a
// holder that died or cannot be trusted.

import { B_FILE, B_FLAGS, B_INDEX, BLOCK_META_WORDS, DIRTY, S_DIRTY, S_FRESH, S_HAND, S_LOST_DIRTY, S_USED, S_WRITING, SLOT_WORDS, STRIPE_META_BYTES, USED } from './block-layout.js';

/** A stripe: its lock word and meta, table, and block range. Reset drops its blocks. */
export class Stripe {
  /** @param {import('./blocks.js').BlockArena} arena the arena it belongs to (its block meta, and its table operations for recovery) */
  constructor(buffer, header, index, arena) {
    this.arena = arena;
    this.blockMeta = arena.blockMeta;
    this.index = index;
    this.meta = new Int32Array(buffer, header.metaOffset + index * STRIPE_META_BYTES, STRIPE_META_BYTES / 4);
    this.slots = header.slotsPerStripe;
    this.table = new Uint32Array(buffer, header.tablesOffset + index * header.slotsPerStripe * SLOT_WORDS * 4, header.slotsPerStripe * SLOT_WORDS);
    this.firstBlock = index * header.blocksPerStripe;
    this.blockCount = header.blocksPerStripe;
  }

  /**
   * A writer died holding this stripe's lock. Block meta is the truth (a
   * writer sets a block's file and index before it enters the table), so
   * only the block it was writing is dropped (its bytes may be half new) and
   * the table and counts are rebuilt from the rest: other files' dirty blocks
   * survive.
   */
  recoverFromDeadHolder() {
    const meta = this.meta;
    const blockMeta = this.blockMeta;
    const writing = meta[S_WRITING] - 1;
    if (writing >= this.firstBlock && writing < this.firstBlock + this.blockCount) {
      const m = writing * BLOCK_META_WORDS;
      if ((blockMeta[m + B_FLAGS] & USED) !== 0) meta[S_LOST_DIRTY]++;
      blockMeta.fill(0, m, m + BLOCK_META_WORDS);
    }
    meta[S_WRITING] = 0;
    this.table.fill(0);
    let used = 0;
    let dirty = 0;
    for (let block = this.firstBlock; block < this.firstBlock + this.blockCount; block++) {
      const m = block * BLOCK_META_WORDS;
      const flags = blockMeta[m + B_FLAGS];
      if ((flags & USED) === 0) continue;
      // A block evicted half-way (slot gone, flags not yet cleared) comes back whole: its data was never touched.
      if (!this.arena.insert(this, blockMeta[m + B_FILE], blockMeta[m + B_INDEX], block)) {
        blockMeta.fill(0, m, m + BLOCK_META_WORDS);
        continue;
      }
      used++;
      if ((flags & DIRTY) !== 0) dirty++;
    }
    meta[S_USED] = used;
    meta[S_DIRTY] = dirty;
  }

  /** Drops every block: a holder whose lock was taken may have written anywhere meanwhile. */
  reset() {
    const meta = this.meta;
    meta[S_LOST_DIRTY] += meta[S_DIRTY];
    this.table.fill(0);
    meta[S_FRESH] = 0;
    meta[S_HAND] = 0;
    meta[S_USED] = 0;
    meta[S_DIRTY] = 0;
    meta[S_WRITING] = 0;
    this.blockMeta.fill(0, this.firstBlock * BLOCK_META_WORDS, (this.firstBlock + this.blockCount) * BLOCK_META_WORDS);
  }
}

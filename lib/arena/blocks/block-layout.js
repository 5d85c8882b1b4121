// The memory layout of a block arena (blocks.js): where every region lives
// inside the one shared buffer, the words of a stripe's meta line and of a
// block's meta, and the self-describing header (checked as the cache arena's
// is, see layout.js).
//
//   [header 4 KiB][thread stats][stripe meta][file locks][block tables][block meta][block data]

import { ArenaCacheError, codes } from '../../errors.js';
import { BLOCKS_MAGIC, checkHeaderStart, H32_CHECKSUM, H32_HEADER_BYTES, H32_MAGIC, H32_VERSION, HEADER_BYTES, headerChecksum, THREAD_SLOT_BYTES } from '../common/layout.js';

export { BLOCKS_MAGIC };
export const BLOCKS_LAYOUT_VERSION = 2;
export const STRIPE_META_BYTES = 128;
export const SLOT_WORDS = 4; // file, index, block + 1, 0
export const BLOCK_META_WORDS = 8; // file, index, from, to, flags, generation
const THREAD_SLOTS = 64;
const DATA_ALIGN = 4096;
export const FILE_LOCKS = 256;
export const FILE_LOCK_BYTES = 64;

// Stripe meta words (M_SEQ and the lock's words come from shard-meta.js).
export const S_FRESH = 3; // blocks of the stripe never used yet start here
export const S_HAND = 4; // CLOCK hand
export const S_USED = 5;
export const S_DIRTY = 6;
export const S_LOST_DIRTY = 7; // dirty blocks dropped by a reset (dead writer, damage)
export const S_WRITING = 8; // the block (+ 1) a writer is changing, for recovery after it dies

// Block meta words.
export const B_FILE = 0;
export const B_INDEX = 1;
export const B_FROM = 2;
export const B_TO = 3;
export const B_FLAGS = 4;
export const B_GENERATION = 5;
export const USED = 1;
export const DIRTY = 2;
export const REFERENCED = 4;

const FIELDS = Object.freeze(['memoryBytes', 'blockBytes', 'stripeCount', 'blocksPerStripe', 'slotsPerStripe', 'arenaId', 'threadSlots', 'statsOffset', 'metaOffset', 'tablesOffset', 'blockMetaOffset', 'dataOffset', 'fileLocksOffset']);
const FIRST_FIELD = 2;

/** Offsets for a block arena of `memoryBytes` with blocks of `blockBytes`. */
export function planBlocks({ memoryBytes, blockBytes, stripes }) {
  const statsOffset = HEADER_BYTES;
  const metaOffset = statsOffset + THREAD_SLOTS * THREAD_SLOT_BYTES;
  const fileLocksOffset = metaOffset + stripes * STRIPE_META_BYTES;
  const tablesOffset = fileLocksOffset + FILE_LOCKS * FILE_LOCK_BYTES;
  // Per block: its data, its meta and two table slots (load at most 1/2).
  const perBlock = blockBytes + BLOCK_META_WORDS * 4 + 2 * SLOT_WORDS * 4;
  const blocksPerStripe = Math.floor((memoryBytes - tablesOffset - DATA_ALIGN) / perBlock / stripes);
  if (blocksPerStripe < 2) {
    throw new RangeError(
      `options.memoryBytes (${memoryBytes}) holds fewer than 2 blocks of ${blockBytes} bytes per stripe; raise memoryBytes or lower blockBytes`,
    );
  }
  const slotsPerStripe = 2 * blocksPerStripe;
  const blockMetaOffset = tablesOffset + stripes * slotsPerStripe * SLOT_WORDS * 4;
  const blockCount = stripes * blocksPerStripe;
  const dataOffset = Math.ceil((blockMetaOffset + blockCount * BLOCK_META_WORDS * 4) / DATA_ALIGN) * DATA_ALIGN;
  return { memoryBytes, blockBytes, stripeCount: stripes, blocksPerStripe, slotsPerStripe, threadSlots: THREAD_SLOTS, statsOffset, metaOffset, tablesOffset, blockMetaOffset, dataOffset, fileLocksOffset };
}

export function writeBlocksHeader(buffer, plan) {
  const h32 = new Uint32Array(buffer, 0, HEADER_BYTES / 4);
  const h64 = new Float64Array(buffer, 0, HEADER_BYTES / 8);
  const random = new Uint32Array(2);
  crypto.getRandomValues(random);
  const values = { ...plan, arenaId: (random[0] & 0x1fffff) * 2 ** 32 + random[1] };
  FIELDS.forEach((name, i) => {
    h64[FIRST_FIELD + i] = values[name];
  });
  h32[H32_HEADER_BYTES] = HEADER_BYTES;
  h32[H32_VERSION] = BLOCKS_LAYOUT_VERSION;
  h32[H32_CHECKSUM] = headerChecksum(new Uint8Array(buffer, 0, HEADER_BYTES));
  Atomics.store(new Int32Array(buffer, 0, 1), H32_MAGIC, BLOCKS_MAGIC | 0);
}

export function readBlocksHeader(buffer) {
  checkHeaderStart(buffer, BLOCKS_MAGIC, BLOCKS_LAYOUT_VERSION);
  const h64 = new Float64Array(buffer, 0, HEADER_BYTES / 8);
  const header = {};
  FIELDS.forEach((name, i) => {
    header[name] = h64[FIRST_FIELD + i];
  });
  if (buffer.byteLength < header.memoryBytes) {
    throw new ArenaCacheError(
      codes.ERR_ARENA_TRUNCATED,
      `arena is truncated: its header describes ${header.memoryBytes} bytes but the buffer has ${buffer.byteLength}`,
    );
  }
  const expected = Number.isInteger(header.stripeCount) && header.stripeCount >= 1 ? planBlocks({ memoryBytes: header.memoryBytes, blockBytes: header.blockBytes, stripes: header.stripeCount }) : null;
  if (expected === null || FIELDS.some((name) => name !== 'arenaId' && expected[name] !== header[name])) {
    throw new ArenaCacheError(codes.ERR_ARENA_CORRUPT, 'arena header is inconsistent: its stored offsets do not follow from its stored sizes');
  }
  return header;
}

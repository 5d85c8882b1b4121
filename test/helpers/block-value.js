// Whole blocks that check themselves: u32 file, u32 index, u32 writer, u32
// sequence, pseudo-random bytes, u32 FNV-1a of everything before it.
import { fillRandom } from './seeded-random.js';

function fnv(bytes, from, to) {
  let h = 0x811c9dc5;
  for (let i = from; i < to; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

export function makeBlock(size, file, index, writer, sequence) {
  const block = Buffer.allocUnsafe(size);
  block.writeUInt32LE(file, 0);
  block.writeUInt32LE(index, 4);
  block.writeUInt32LE(writer, 8);
  block.writeUInt32LE(sequence, 12);
  fillRandom(block, (writer * 2654435761 + sequence * 97 + index) >>> 0, 16, size - 4);
  block.writeUInt32LE(fnv(block, 0, size - 4), size - 4);
  return block;
}

/** 'ok', 'torn' (checksum wrong) or 'foreign' (a whole block of another file or index). */
export function checkBlock(block, file, index) {
  if (block.readUInt32LE(block.length - 4) !== fnv(block, 0, block.length - 4)) return 'torn';
  if (block.readUInt32LE(0) !== file || block.readUInt32LE(4) !== index) return 'foreign';
  return 'ok';
}

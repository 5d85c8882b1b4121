// Invariant checks for a shard: used by the tests after randomized and
// concurrent runs, and available to users who suspect a damaged arena
// (`cache.verify()`). Must be called with the shard's lock held.

import { hashBytes } from './hash.js';
import { HAS_TTL, KEY_KIND_SHIFT, RECORD_HEADER_BYTES, TTL_BYTES, TYPE_DEAD, TYPE_LIVE, TYPE_MASK, TYPE_PAD } from './record.js';
import { M_COUNT, M_HEAD, M_LIVE_BYTES, M_LIVE_RECORD_BYTES, M_TAIL, M_USED, TAG_MASK } from './shard.js';

/**
 * Returns a list of problems found in `shard` (empty when it is consistent).
 * @param {import('./shard.js').Shard} shard
 * @param {number[]} hashStarts the hash start state for each key kind
 */
export function verifyShard(shard, hashStarts) {
  const problems = [];
  const meta = shard.meta;
  const u32 = shard.u32;
  const table = shard.table;
  const regionBytes = shard.regionBytes;
  const head = meta[M_HEAD];
  const tail = meta[M_TAIL];
  const used = meta[M_USED];
  if (head < 0 || head >= regionBytes || head % 8 !== 0) problems.push(`head ${head} is not a record position`);
  if (tail < 0 || tail >= regionBytes || tail % 8 !== 0) problems.push(`tail ${tail} is not a record position`);
  if (used < 0 || used > regionBytes) problems.push(`used ${used} is outside [0, ${regionBytes}]`);
  if (problems.length > 0) return problems;

  // Walk the ring from tail to head.
  const liveOffsets = new Set();
  let liveBytes = 0;
  let liveRecordBytes = 0;
  let position = tail;
  let remaining = used;
  let records = 0;
  while (remaining > 0) {
    if (++records > regionBytes / 8) {
      problems.push('the ring does not end');
      return problems;
    }
    const flags = u32[position >>> 2];
    const type = flags & TYPE_MASK;
    const size = type === TYPE_PAD ? regionBytes - position : u32[(position >>> 2) + 3];
    if (type === 0 || size < 8 || size % 8 !== 0 || position + size > regionBytes || size > remaining) {
      problems.push(`bad record at ${position}: type ${type}, size ${size}, ${remaining} bytes left in the ring`);
      return problems;
    }
    if (type === TYPE_LIVE) {
      const keyLength = flags >>> 16;
      const valueLength = u32[(position >>> 2) + 1];
      const expected = RECORD_HEADER_BYTES + ((flags & HAS_TTL) !== 0 ? TTL_BYTES : 0) + ((keyLength + 3) & ~3) + valueLength;
      if (size !== expected + ((8 - (expected % 8)) % 8)) problems.push(`live record at ${position} has size ${size}, expected ${expected} rounded up to 8`);
      const keyStart = position + RECORD_HEADER_BYTES + ((flags & HAS_TTL) !== 0 ? TTL_BYTES : 0);
      const keyHash = hashBytes(hashStarts[(flags >>> KEY_KIND_SHIFT) & 1], shard.u8.subarray(keyStart, keyStart + keyLength), keyLength);
      if (keyHash !== u32[(position >>> 2) + 2]) problems.push(`live record at ${position}: its key bytes do not hash to its stored hash`);
      liveOffsets.add(position);
      liveBytes += keyLength + valueLength;
      liveRecordBytes += size;
    } else if (type !== TYPE_DEAD && type !== TYPE_PAD) {
      problems.push(`unknown record type ${type} at ${position}`);
    }
    remaining -= size;
    position += size;
    if (position === regionBytes) position = 0;
  }
  if (position !== head) problems.push(`the ring ends at ${position}, but head is ${head}`);
  if (liveBytes !== meta[M_LIVE_BYTES]) problems.push(`live bytes are ${liveBytes}, meta says ${meta[M_LIVE_BYTES]}`);
  if (liveRecordBytes !== meta[M_LIVE_RECORD_BYTES]) {
    problems.push(`live record bytes are ${liveRecordBytes}, meta says ${meta[M_LIVE_RECORD_BYTES]}`);
  }

  // Every slot points at a live record of its hash, reachable from its home.
  let slotsUsed = 0;
  const n = shard.slots;
  for (let i = 0; i < n; i++) {
    const w0 = table[2 * i];
    if (w0 === 0) continue;
    slotsUsed++;
    const offset = (w0 - 1) * 8;
    if (!liveOffsets.has(offset)) {
      problems.push(`slot ${i} points at ${offset}, which is not a live record`);
      continue;
    }
    liveOffsets.delete(offset);
    const recordHash = u32[(offset >>> 2) + 2];
    if (((recordHash ^ table[2 * i + 1]) & TAG_MASK) !== 0) problems.push(`slot ${i} holds another hash than its record`);
    for (let j = shard.homeOf(table[2 * i + 1] & TAG_MASK); j !== i; j = j + 1 === n ? 0 : j + 1) {
      if (table[2 * j] === 0) {
        problems.push(`slot ${i} is unreachable: empty slot ${j} lies between it and its home`);
        break;
      }
    }
  }
  if (liveOffsets.size > 0) problems.push(`${liveOffsets.size} live records have no slot`);
  if (slotsUsed !== meta[M_COUNT]) problems.push(`${slotsUsed} slots are used, meta counts ${meta[M_COUNT]}`);
  if (slotsUsed > shard.maxEntries) problems.push(`${slotsUsed} entries exceed the bound of ${shard.maxEntries}`);
  return problems;
}

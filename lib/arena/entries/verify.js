// Invariant checks for a shard: used by the tests after randomized and
// concurrent runs, and available to users who suspect a damaged arena
// (`cache.verify()`). Must be called with the shard's lock held.

import { hashBytes } from './hash.js';
import { ASCII_TEXT, CHECKSUM_BYTES, EXPIRY_F64, HAS_STALE, HAS_TTL, KEY_KIND_SHIFT, NUMBER_BYTES, paddedKeyBytes, RECORD_HEADER_BYTES, recordChecksumHolds, recordKeyStart, recordTimeBytes, REWRITING, STALE_F64, STAMP_F64, TYPE_DEAD, TYPE_LIVE, TYPE_MASK, TYPE_PAD, VALUE_KIND_SHIFT, VALUE_NUMBER, VALUE_UTF8 } from './record.js';
import { TAG_MASK } from './policies.js';
import { PositionSet, PositionsByKey } from './record-sets.js';
import { M64_WRITE_STAMP, M_COUNT, M_LIVE_BYTES, M_TTL_COUNT, M_UNDO_AT } from '../common/shard-meta.js';
import { isSoundWriteCount, MAX_WRITE_STAMP } from './write-count.js';

/**
 * What is wrong with the live record at `position` (word 0 `flags`, `size`
 * bytes), or null: its size must fit its key and value, its key bytes hash
 * to its stored hash, its write stamp be a whole number in [1, `stampLimit`]
 * (the shard's count, unless the caller knows better), its expiry and stale
 * times (when it has them) be finite with the stale time no later, no rewrite in place
 * be under way (see Shard.rewrite), only a string be marked ASCII_TEXT, and
 * in a checksummed arena its checksum hold. Used by verify() and by rebuilds (rebuild.js), which drop such a
 * record.
 */
export function liveRecordProblem(shard, position, flags, size, stampLimit = shard.meta64[M64_WRITE_STAMP]) {
  const u32 = shard.u32;
  if ((flags & REWRITING) !== 0) return `live record at ${position} is marked as being rewritten`;
  const keyLength = flags >>> 16;
  const valueLength = u32[(position >>> 2) + 1];
  if ((flags & (HAS_STALE | HAS_TTL)) === HAS_STALE) return `live record at ${position} has a stale time but no expiry time`;
  if ((flags & ASCII_TEXT) !== 0 && ((flags >>> VALUE_KIND_SHIFT) & 3) !== VALUE_UTF8) return `live record at ${position} marks a value that is not a string as ASCII`;
  if (((flags >>> VALUE_KIND_SHIFT) & 3) === VALUE_NUMBER && valueLength !== NUMBER_BYTES) return `live record at ${position} holds a number in ${valueLength} bytes, not ${NUMBER_BYTES}`;
  const expected = RECORD_HEADER_BYTES + recordTimeBytes(flags) + paddedKeyBytes(keyLength) + valueLength + (shard.checksums ? CHECKSUM_BYTES : 0);
  if (size !== expected + ((8 - (expected % 8)) % 8)) return `live record at ${position} has size ${size}, expected ${expected} rounded up to 8`;
  const keyStart = recordKeyStart(position, flags);
  const keyHash = hashBytes(shard.hashStarts[(flags >>> KEY_KIND_SHIFT) & 1], shard.u8.subarray(keyStart, keyStart + keyLength), keyLength);
  if (keyHash !== u32[(position >>> 2) + 2]) return `live record at ${position}: its key bytes do not hash to its stored hash`;
  // Near caches trust a stamp to name one write: never reused, never ahead of the shard's count.
  const stamp = shard.f64[(position >>> 3) + STAMP_F64];
  if (!(Number.isInteger(stamp) && stamp >= 1 && stamp <= stampLimit)) {
    return `live record at ${position} has write stamp ${stamp}, outside [1, ${stampLimit}]`;
  }
  // Its times decide whether it is served: NaN never expires, and a stale
  // time past the expiry would serve a value as fresh after its ttl.
  if ((flags & HAS_TTL) !== 0) {
    const expiresAt = shard.f64[(position >>> 3) + EXPIRY_F64];
    if (!(Number.isFinite(expiresAt) && expiresAt > 0)) return `live record at ${position} has expiry time ${expiresAt}`;
    const staleAt = (flags & HAS_STALE) !== 0 ? shard.f64[(position >>> 3) + STALE_F64] : expiresAt;
    if (!(staleAt > 0 && staleAt <= expiresAt)) return `live record at ${position} has stale time ${staleAt}, outside (0, its expiry time ${expiresAt}]`;
  }
  if (shard.checksums && !recordChecksumHolds(u32, shard.u8, position)) return `live record at ${position} fails its checksum`;
  return null;
}

/**
 * The position of a record already seen with write stamp `stamp`, or -1.
 * `stamps` holds positions by the stamp's low 32 bits; the stamps
 * themselves are read back from the records.
 * @param {PositionsByKey} stamps
 */
function stampSeen(shard, stamps, stamp) {
  for (let slot = stamps.first(stamp); slot >= 0; slot = stamps.next(stamp, slot)) {
    const position = stamps.positionAt(slot);
    if (Object.is(shard.f64[(position >>> 3) + STAMP_F64], stamp)) return position;
  }
  return -1;
}

/**
 * Walks one ring from tail to head; adds its live records' offsets to
 * `live` and to `stamps` (by write stamp), their key and value bytes and
 * how many have a ttl to `totals`, and returns the problems found.
 * @param {PositionSet} live
 * @param {PositionsByKey} stamps
 * @param {{ keyValueBytes: number, withTtl: number }} totals
 */
function walkRing(shard, ring, live, stamps, totals, checkRecords) {
  const problems = [];
  const meta = shard.meta;
  const u32 = shard.u32;
  const name = ring.index === 0 ? 'main ring' : 'small ring';
  const head = meta[ring.headWord];
  const tail = meta[ring.tailWord];
  const used = meta[ring.usedWord];
  if (ring.size === 0) {
    if (used !== 0 || ring.count !== 0) problems.push(`${name} has no space but holds ${used} bytes`);
    return problems;
  }
  const inRing = (position) => position >= ring.base && position < ring.end && position % 8 === 0;
  if (!inRing(head)) problems.push(`${name}: head ${head} is not a record position`);
  if (!inRing(tail)) problems.push(`${name}: tail ${tail} is not a record position`);
  if (used < 0 || used > ring.size) problems.push(`${name}: used ${used} is outside [0, ${ring.size}]`);
  // The next record of an empty ring goes at its base (Ring.allocate): a
  // head or tail elsewhere would no longer frame what the ring holds.
  if (used === 0 && (head !== ring.base || tail !== ring.base)) {
    problems.push(`${name} is empty, but its head ${head} and tail ${tail} are not its base ${ring.base}`);
  }
  if (problems.length > 0) return problems;
  let count = 0;
  let liveRecordBytes = 0;
  let position = tail;
  let remaining = used;
  for (let records = 0; remaining > 0; records++) {
    if (records > ring.size / 8) {
      problems.push(`${name} does not end`);
      return problems;
    }
    const flags = u32[position >>> 2];
    const type = flags & TYPE_MASK;
    const size = type === TYPE_PAD ? ring.end - position : u32[(position >>> 2) + 3];
    if (type === 0 || size < 8 || size % 8 !== 0 || position + size > ring.end || size > remaining) {
      problems.push(`${name}: bad record at ${position}: type ${type}, size ${size}, ${remaining} bytes left in the ring`);
      return problems;
    }
    if (type === TYPE_LIVE) {
      const problem = checkRecords ? liveRecordProblem(shard, position, flags, size) : null;
      if (problem !== null) problems.push(problem);
      const stamp = shard.f64[(position >>> 3) + STAMP_F64];
      if (problem === null) {
        const seen = stampSeen(shard, stamps, stamp);
        if (seen >= 0) problems.push(`live records at ${seen} and ${position} have the same write stamp`);
      }
      stamps.add(stamp, position);
      live.add(position);
      totals.keyValueBytes += (flags >>> 16) + u32[(position >>> 2) + 1];
      if ((flags & HAS_TTL) !== 0) totals.withTtl++;
      count++;
      liveRecordBytes += size;
    } else if (type !== TYPE_DEAD && type !== TYPE_PAD) {
      problems.push(`${name}: unknown record type ${type} at ${position}`);
    }
    remaining -= size;
    position += size;
    if (position === ring.end) position = ring.base;
  }
  if (position !== head) problems.push(`${name} ends at ${position}, but its head is ${head}`);
  if (count !== ring.count) problems.push(`${name} holds ${count} live records, its meta counts ${ring.count}`);
  if (liveRecordBytes !== ring.liveRecordBytes) {
    problems.push(`${name}: live record bytes are ${liveRecordBytes}, its meta says ${ring.liveRecordBytes}`);
  }
  return problems;
}

/**
 * Returns a list of problems found in `shard` (empty when it is consistent).
 * @param {import('./shard.js').Shard} shard
 * @param {boolean} [checkRecords=true] false only for a caller that has
 *   just checked every live record itself (a rebuild): then the rings,
 *   slots and counts are checked, not each record's contents again
 */
export function verifyShard(shard, checkRecords = true) {
  const live = new PositionSet(shard.regionBytes);
  const stamps = new PositionsByKey(shard.meta[M_COUNT] > 0 ? Math.min(shard.meta[M_COUNT], shard.slots) : 16);
  const totals = { keyValueBytes: 0, withTtl: 0 };
  // The count that stamps every record: a fraction or a value out of range
  // would be handed on to every record written after it (see write-count.js).
  const stamp = shard.meta64[M64_WRITE_STAMP];
  const stampProblems = isSoundWriteCount(stamp) ? [] : [`its write stamp is ${stamp}, not a whole number in [0, ${MAX_WRITE_STAMP}]`];
  // Set only while an increment in place holds the lock (see atomic-ops.js); the caller holds it now.
  if (shard.meta[M_UNDO_AT] !== 0) stampProblems.push(`an increment's undo record (at ${shard.meta[M_UNDO_AT] - 1}) is left set`);
  const problems = [...stampProblems, ...walkRing(shard, shard.main, live, stamps, totals, checkRecords), ...walkRing(shard, shard.small, live, stamps, totals, checkRecords)];
  if (problems.length > 0) return problems;
  const meta = shard.meta;
  const { keyValueBytes, withTtl } = totals;
  if (keyValueBytes !== meta[M_LIVE_BYTES]) problems.push(`live bytes are ${keyValueBytes}, meta says ${meta[M_LIVE_BYTES]}`);
  if (withTtl !== meta[M_TTL_COUNT]) problems.push(`${withTtl} live records have a ttl, meta counts ${meta[M_TTL_COUNT]}`);
  // A count that stops advancing (NaN, or too large for +1 to change it)
  // would let near caches keep serving a value its slot no longer holds.
  for (let group = 0; group < shard.groupCount; group++) {
    const writes = shard.groupWrites[shard.groupBase + group];
    if (!isSoundWriteCount(writes)) {
      problems.push(`slot group ${group} has write count ${writes}, outside [0, ${MAX_WRITE_STAMP}]`);
    }
  }

  // Every slot points at a live record of its hash, reachable from its home.
  const table = shard.table;
  const u32 = shard.u32;
  let slotsUsed = 0;
  const n = shard.slots;
  for (let i = 0; i < n; i++) {
    const w0 = table[2 * i];
    if (w0 === 0) continue;
    slotsUsed++;
    const offset = (w0 - 1) * 8;
    if (!live.has(offset)) {
      problems.push(`slot ${i} points at ${offset}, which is not a live record`);
      continue;
    }
    live.delete(offset);
    const recordHash = u32[(offset >>> 2) + 2];
    if (((recordHash ^ table[2 * i + 1]) & TAG_MASK) !== 0) problems.push(`slot ${i} holds another hash than its record`);
    for (let j = shard.homeOf(table[2 * i + 1] & TAG_MASK); j !== i; j = j + 1 === n ? 0 : j + 1) {
      if (table[2 * j] === 0) {
        problems.push(`slot ${i} is unreachable: empty slot ${j} lies between it and its home`);
        break;
      }
    }
  }
  if (live.size > 0) problems.push(`${live.size} live records have no slot`);
  if (slotsUsed !== meta[M_COUNT]) problems.push(`${slotsUsed} slots are used, meta counts ${meta[M_COUNT]}`);
  if (shard.counts !== null && shard.counts[shard.index] !== meta[M_COUNT]) {
    problems.push(`its published entry count is ${shard.counts[shard.index]}, meta counts ${meta[M_COUNT]}`);
  }
  if (slotsUsed > shard.maxEntries) problems.push(`${slotsUsed} entries exceed the bound of ${shard.maxEntries}`);
  return problems;
}

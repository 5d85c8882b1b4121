// Rebuilding a shard in place after its lock holder died mid-write.
//
// A holder that dies (a terminated worker, a process killed with SIGKILL)
// may leave any of the shard's bookkeeping half done: dictionary slots
// shifted halfway, ring counts or live bytes not yet adjusted, a record
// marked dead whose slot still points at it. Its records, though, say what
// they are: each ring is a log of self-describing records between its tail
// and its head, and that log is what a rebuild trusts. Why it can:
//
//   1. A record is written wholly before it enters a ring: a ring's head
//      moves past a record only in commit(), after the record is written.
//      What lies at or past the head (a record being written, a copy being
//      made by a move) is not walked.
//   2. The one change made to a record inside the log, a rewrite in place
//      (Shard.rewrite), marks the record REWRITING before it touches the
//      value and clears the mark after: a marked record is the write in
//      flight and is dropped.
//   3. Every other change to a walked record is one aligned word: its type
//      (live to dead, by delete, eviction or replacement), or its size and
//      type together never (a record's size never changes).
//   4. A key can have two live records only while a write in flight moves
//      or replaces it: a move copies the record (same stamp), a replacement
//      writes a newer stamp. The record with the highest stamp is kept, so
//      the key holds its value from before the write in flight or after it,
//      whole.
//   5. A clear (Shard.reset) marks the shard RESETTING before it starts and
//      unmarks it when done: a marked shard is cleared, as it was about to be.
//
// So a rebuild walks each ring from tail to head, checks every live record
// (size, key hash, stamp), keeps the newest live record of each key and
// marks the rest dead, and derives everything else from what it kept: the
// dictionary (frequencies start again at 0), ring and shard counts, the
// ghost table (emptied). Every slot group's write count advances, so near
// caches check their entries again (entries whose record survived still
// hold). If anything does not add up (a walk that does not end at its head,
// a record that cannot be parsed), or verify() finds a problem afterwards,
// the shard is reset instead: entries are lost, never corrupted.
//
// A machine crash is different: a file's pages are written back in any
// order, so a record's value can be older than its header (checksums would
// tell, see the issue tracker). The sole opener after a restart therefore
// still resets a shard that fails verify(); rebuilds are for dead holders,
// whose writes all reached memory in program order up to the moment they died.

import { HAS_TTL, KEY_KIND_SHIFT, RECORD_HEADER_BYTES, REWRITING, STAMP_F64, TTL_BYTES, TYPE_DEAD, TYPE_LIVE, TYPE_MASK, TYPE_PAD } from './record.js';
import { M_AGING_CURSOR, M_COUNT, M_LIVE_BYTES, M_RESETTING, M_SWEEP_CURSOR, M_TTL_COUNT } from './shard-meta.js';
import { liveRecordProblem, verifyShard } from './verify.js';

/**
 * Walks `ring` from its tail to its head, collecting its live records into
 * `newest` (key → the newest live record of it) and dropping (marking dead)
 * live records that are a write in flight or damaged, counted in
 * `dropped.count`. Returns the bytes walked, or -1 when the ring cannot be
 * walked.
 */
function walkRing(shard, ring, hashStarts, newest, dropped) {
  if (ring.size === 0) return 0;
  const meta = shard.meta;
  const u32 = shard.u32;
  const head = meta[ring.headWord];
  const tail = meta[ring.tailWord];
  const inRing = (position) => position >= ring.base && position < ring.end && position % 8 === 0;
  if (!inRing(head) || !inRing(tail)) return -1;
  // head === tail is an empty ring or a full one: `used` tells (a holder
  // updates it after the head, so it can lag only when the head moved).
  const empty = head === tail && meta[ring.usedWord] === 0;
  let position = tail;
  let walked = 0;
  while (!empty && (position !== head || walked === 0)) {
    const flags = u32[position >>> 2];
    const type = flags & TYPE_MASK;
    const size = type === TYPE_PAD ? ring.end - position : u32[(position >>> 2) + 3];
    if (type === 0 || size < 8 || size % 8 !== 0 || position + size > ring.end || walked + size > ring.size) return -1;
    if (type === TYPE_LIVE) {
      const keep = liveRecord(shard, position, flags, size, hashStarts);
      if (keep === null) {
        u32[position >>> 2] = (flags & ~(TYPE_MASK | REWRITING)) | TYPE_DEAD;
        dropped.count++;
      } else {
        const known = newest.get(keep.id);
        if (known === undefined || keep.stamp > known.stamp) {
          if (known !== undefined) u32[known.position >>> 2] = (u32[known.position >>> 2] & ~TYPE_MASK) | TYPE_DEAD;
          newest.set(keep.id, keep);
        } else {
          u32[position >>> 2] = (flags & ~TYPE_MASK) | TYPE_DEAD;
        }
      }
    }
    walked += size;
    position += size;
    if (position === ring.end) position = ring.base;
  }
  return walked;
}

/** The facts of the live record at `position` ({ id, position, stamp, ... }), or null when it must be dropped. */
function liveRecord(shard, position, flags, size, hashStarts) {
  if (liveRecordProblem(shard, position, flags, size, hashStarts) !== null) return null;
  const u32 = shard.u32;
  const keyLength = flags >>> 16;
  const hasTtl = (flags & HAS_TTL) !== 0;
  const keyStart = position + RECORD_HEADER_BYTES + (hasTtl ? TTL_BYTES : 0);
  const key = Buffer.from(shard.u8.subarray(keyStart, keyStart + keyLength)).toString('latin1');
  return {
    id: `${(flags >>> KEY_KIND_SHIFT) & 1}:${key}`,
    position,
    stamp: shard.f64[(position >>> 3) + STAMP_F64],
    hash: u32[(position >>> 2) + 2],
    size,
    keyValueBytes: keyLength + u32[(position >>> 2) + 1],
    hasTtl,
  };
}

/**
 * Rebuilds `shard` from its rings (see the header); the caller holds its
 * lock. Returns the number of entries lost: the live records dropped (the
 * write in flight), or when the shard had to be reset, every entry it held.
 * @param {import('./shard.js').Shard} shard
 * @param {number[]} hashStarts the hash start state for each key kind
 */
export function rebuildShard(shard, hashStarts) {
  const meta = shard.meta;
  if (meta[M_RESETTING] !== 0) {
    // A clear was under way: finish it (what it drops is the write in flight, not a loss).
    shard.reset();
    return 0;
  }
  const newest = new Map();
  const dropped = { count: 0 };
  const mainWalked = walkRing(shard, shard.main, hashStarts, newest, dropped);
  const smallWalked = mainWalked < 0 ? -1 : walkRing(shard, shard.small, hashStarts, newest, dropped);
  if (smallWalked < 0 || newest.size >= shard.slots) return resetLosing(shard);
  shard.table.fill(0);
  shard.ghosts.fill(0);
  const rings = [shard.main, shard.small];
  const ringCounts = [0, 0];
  const ringLive = [0, 0];
  let keyValueBytes = 0;
  let withTtl = 0;
  for (const record of newest.values()) {
    shard.insertSlot(record.hash, record.position, 0);
    const r = shard.main.contains(record.position) ? 0 : 1;
    ringCounts[r]++;
    ringLive[r] += record.size;
    keyValueBytes += record.keyValueBytes;
    if (record.hasTtl) withTtl++;
  }
  const walked = [mainWalked, smallWalked];
  for (let r = 0; r < 2; r++) {
    const ring = rings[r];
    if (ring.size === 0) continue;
    meta[ring.usedWord] = walked[r];
    meta[ring.countWord] = ringCounts[r];
    meta[ring.liveWord] = ringLive[r];
  }
  meta[M_COUNT] = newest.size;
  meta[M_LIVE_BYTES] = keyValueBytes;
  meta[M_TTL_COUNT] = withTtl;
  meta[M_SWEEP_CURSOR] = 0;
  meta[M_AGING_CURSOR] = 0;
  shard.advanceAllGroups();
  shard.publishCount();
  if (verifyShard(shard, hashStarts).length > 0) return resetLosing(shard);
  return dropped.count;
}

/** Resets `shard`; returns the entries it held (as far as its count can be believed). */
function resetLosing(shard) {
  const count = shard.meta[M_COUNT];
  shard.reset();
  return count > 0 ? count : 0;
}

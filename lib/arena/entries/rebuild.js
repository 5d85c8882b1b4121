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
//      (live to dead, by delete, eviction or replacement). A record's size
//      never changes.
//   4. A key can have two live records only while a write in flight moves
//      or replaces it: a move copies the record (same stamp), a replacement
//      writes a newer stamp. The record with the highest stamp is kept, so
//      the key holds its value from before the write in flight or after it,
//      whole.
//   5. A clear (Shard.reset) marks the shard RESETTING before it starts and
//      unmarks it when done: a marked shard is cleared, as it was about to be.
//   6. A relocation whose copy overlaps its own source (a nearly full ring)
//      journals where the record is, where it goes and its size while it
//      runs (M_MOVE_*). If the ring's head had not moved past the copy, the
//      record may be torn: it is dropped, as if the write in flight had
//      evicted it (it was making room for that write), and the ring's tail
//      and head are set past its source and back to the copy's start.
//   7. Only with record checksums (see below): a walk that meets bytes that
//      are no record before it reaches the head ends the ring there, as a
//      log's recovery ends at its first bad entry. After a machine crash
//      that is where the pages written back stop matching the meta line:
//      records a ring holds are written in order, so those past the cut are
//      the latest writes, lost, and those before it walk as before.
//   8. An increment in place of a number record (atomic-ops.js) journals
//      the record, its value and its stamp in the meta line (M_UNDO_*)
//      before it changes them, and clears the journal after: a journal left
//      set is put back, so the counter holds its value from before the
//      increment in flight (never lost, as a torn rewrite would be).
//
// So a rebuild walks each ring from tail to head, checks every live record
// (size, key hash, stamp, checksum), keeps the newest live record of each
// key and marks the rest dead, and derives everything else from what it
// kept: the dictionary (frequencies start again at 0), ring and shard
// counts, the ghost tables (emptied; the adaptive share they keep stays,
// within its bounds). A ring it keeps nothing of (cut at its
// first record, say) starts again empty at its base, where the next record
// goes. Every slot group's write count advances, so near caches check their
// entries again (entries whose record survived still hold). The shard's
// write stamp is bookkeeping too, and is derived rather than trusted: a
// record's stamp is part of what its checksum covers, so a stamp found in a
// sound record ahead of a damaged or fallen count is believed, and the count
// restarts past it and past anything a reader may hold (write-count.js); a
// record is never dropped for a fault of the count. If anything does not
// add up (without checksums, a
// walk that does not end at its head or a record that cannot be parsed), or
// verify() finds a problem afterwards, the shard is reset instead: entries
// are lost, never corrupted.
//
// A machine crash is different: a file's pages are written back in any
// order, so a record's value can be older than its header, and a shard's
// meta line older than its rings. Only checksums tell such a record: in an
// arena whose records carry them (file-backed caches; see recordChecksum),
// a record that fails its checksum is dropped like a write in flight, and
// counted in checksumFailures; a ring whose meta line is newer than its
// records ends where they stop being records (7). So after a
// restart the sole opener rebuilds every shard left locked or failing
// verify() when records are checksummed, and otherwise only shards left
// locked in a file in memory, resetting the rest (see
// Arena.recoverAfterRestart). What a crash cannot take back is a version's
// age: a page written back from before a set or a delete brings back the
// version that page held, whole.

import { HAS_TTL, KEY_KIND_SHIFT, NUMBER_BYTES, paddedKeyBytes, recordChecksumHolds, recordKeyStart, REWRITING, sealRecord, STAMP_F64, TYPE_DEAD, TYPE_LIVE, TYPE_MASK, TYPE_PAD, VALUE_KIND_SHIFT, VALUE_NUMBER } from './record.js';
import { M64_UNDO_STAMP, M64_UNDO_VALUE, M64_WRITE_STAMP, M_AGING_CURSOR, M_COUNT, M_LIVE_BYTES, M_MOVE_FROM, M_MOVE_SIZE, M_MOVE_TO, M_RESETTING, M_SWEEP_CURSOR, M_TTL_COUNT, M_UNDO_AT } from '../common/shard-meta.js';
import { STAT } from '../common/thread-stats.js';
import { liveRecordProblem, verifyShard } from './verify.js';
import { PositionsByKey } from './record-sets.js';
import { isSoundWriteCount, MAX_WRITE_STAMP, restartedWriteCount } from './write-count.js';

/** Marks the record at `position` dead (a superseded copy keeps its other flags; a damaged record loses REWRITING). */
function markDead(u32, position, damaged = false) {
  u32[position >>> 2] = (u32[position >>> 2] & ~(damaged ? TYPE_MASK | REWRITING : TYPE_MASK)) | TYPE_DEAD;
}

/** Whether the records at positions `a` and `b` hold the same key (kind, length and bytes). */
function sameKey(shard, a, b) {
  const u32 = shard.u32;
  const flagsA = u32[a >>> 2];
  const flagsB = u32[b >>> 2];
  if (flagsA >>> 16 !== flagsB >>> 16 || ((flagsA >>> KEY_KIND_SHIFT) & 1) !== ((flagsB >>> KEY_KIND_SHIFT) & 1)) return false;
  const u8 = shard.u8;
  const startA = recordKeyStart(a, flagsA);
  const startB = recordKeyStart(b, flagsB);
  for (let i = 0, length = flagsA >>> 16; i < length; i++) if (u8[startA + i] !== u8[startB + i]) return false;
  return true;
}

function stampAt(shard, position) {
  return shard.f64[(position >>> 3) + STAMP_F64];
}

/**
 * Keeps the live record at `position` in `newest` (the newest live record
 * of each key so far, by key hash) if it is the newest of its key, marking
 * the older one of the two dead.
 * @param {PositionsByKey} newest
 */
function keepNewest(shard, newest, position) {
  const u32 = shard.u32;
  const hash = u32[(position >>> 2) + 2];
  for (let slot = newest.first(hash); slot >= 0; slot = newest.next(hash, slot)) {
    const other = newest.positionAt(slot);
    if (!sameKey(shard, other, position)) continue;
    if (stampAt(shard, position) > stampAt(shard, other)) {
      markDead(u32, other);
      newest.replace(slot, position);
    } else {
      markDead(u32, position);
    }
    return;
  }
  newest.add(hash, position);
}

/**
 * Walks `ring` from its tail to its head, collecting its live records into
 * `newest` (the newest live record of each key) and dropping (marking dead)
 * live records that are a write in flight or damaged, counted in
 * `dropped.count`. Returns the bytes walked, or -1 when the ring cannot be
 * walked.
 * @param {PositionsByKey} newest
 */
function walkRing(shard, ring, newest, dropped) {
  if (ring.size === 0) return 0;
  const meta = shard.meta;
  const u32 = shard.u32;
  const head = meta[ring.headWord];
  const tail = meta[ring.tailWord];
  const inRing = (position) => position >= ring.base && position < ring.end && position % 8 === 0;
  if (!inRing(head) || !inRing(tail)) return -1;
  // `used` grows only once the bytes it counts are written (after a commit
  // moves the head, after a pad is written) and shrinks before the tail
  // moves on: a ring it calls full has no free space, and is walked whole
  // from the tail, whatever the head says (a full ring's record stays in
  // place while its head and tail move past it, one after the other).
  // Otherwise the walk ends at the head: what lies beyond is free space,
  // where stale copies of moved records must not come back. head === tail
  // with nothing used is an empty ring.
  const used = meta[ring.usedWord];
  const full = used === ring.size;
  const empty = !full && head === tail && used === 0;
  let position = tail;
  let walked = 0;
  while (!empty && (full ? walked < ring.size : position !== head || walked === 0)) {
    const flags = u32[position >>> 2];
    const type = flags & TYPE_MASK;
    const size = type === TYPE_PAD ? ring.end - position : u32[(position >>> 2) + 3];
    if (type === 0 || size < 8 || size % 8 !== 0 || position + size > ring.end || walked + size > ring.size) {
      if (!shard.checksums) return -1;
      // The log ends here (see the header, 7): what lies beyond is free space now.
      meta[ring.headWord] = position;
      dropped.cut = true;
      return walked;
    }
    if (type === TYPE_LIVE) {
      // Any stamp in range: the count is settled from the records afterwards (see the header).
      if (liveRecordProblem(shard, position, flags, size, MAX_WRITE_STAMP) !== null) {
        // Damage, not the write in flight (which a rewrite's mark names).
        if (shard.checksums && (flags & REWRITING) === 0 && !recordChecksumHolds(u32, shard.u8, position)) shard.counters[STAT.checksumFailures]++;
        markDead(u32, position, true);
        dropped.count++;
      } else {
        keepNewest(shard, newest, position);
      }
    }
    walked += size;
    position += size;
    if (position === ring.end) position = ring.base;
  }
  // A full ring's head is its tail.
  if (full) meta[ring.headWord] = tail;
  return walked;
}

/**
 * Settles a relocation onto itself that was under way (see the header, 6).
 * Returns the entries it dropped (0 or 1), or -1 when the journal is not
 * plausible.
 */
function settleMove(shard) {
  const meta = shard.meta;
  const from = meta[M_MOVE_FROM] - 1;
  const to = meta[M_MOVE_TO];
  const size = meta[M_MOVE_SIZE];
  meta[M_MOVE_FROM] = 0;
  const ring = shard.main.contains(from) ? shard.main : shard.small;
  if (!ring.contains(from) || !ring.contains(to) || !(to < from && from < to + size && from + size <= ring.end) || size % 8 !== 0) return -1;
  const wrap = (position) => (position === ring.end ? ring.base : position);
  const movedHead = wrap(to + size);
  const movedTail = wrap(from + size);
  const head = meta[ring.headWord];
  const tail = meta[ring.tailWord];
  // The head moves past the copy only once it is complete: then only the tail may be left behind.
  if (head === movedHead) {
    meta[ring.tailWord] = movedTail;
    return 0;
  }
  if (tail !== from) return -1;
  meta[ring.tailWord] = movedTail;
  meta[ring.headWord] = to;
  // Not full: [to, from + size) is free now (the walk recounts `used`).
  meta[ring.usedWord] = Math.min(meta[ring.usedWord], ring.size - (from + size - to));
  return 1;
}

/**
 * Puts back the number record an increment in place was changing when its
 * holder died (see the header, 8): its value and stamp as journaled, and its
 * checksum over them. A journal that does not name such a record (damage)
 * is dropped, and the walk judges the record as it finds it.
 */
function undoIncrement(shard) {
  const meta = shard.meta;
  const at = meta[M_UNDO_AT] - 1;
  meta[M_UNDO_AT] = 0;
  const ring = shard.main.contains(at) ? shard.main : shard.small;
  if (!(at >= 0 && at % 8 === 0 && ring.contains(at))) return;
  const u32 = shard.u32;
  const flags = u32[at >>> 2];
  const size = u32[(at >>> 2) + 3];
  if ((flags & TYPE_MASK) !== TYPE_LIVE || ((flags >>> VALUE_KIND_SHIFT) & 3) !== VALUE_NUMBER || u32[(at >>> 2) + 1] !== NUMBER_BYTES) return;
  const valueStart = recordKeyStart(at, flags) + paddedKeyBytes(flags >>> 16);
  if (!(size % 8 === 0 && at + size <= ring.end && valueStart + NUMBER_BYTES <= at + size)) return;
  shard.f64[valueStart >>> 3] = shard.meta64[M64_UNDO_VALUE];
  shard.f64[(at >>> 3) + STAMP_F64] = shard.meta64[M64_UNDO_STAMP];
  if (shard.checksums) sealRecord(u32, shard.u8, at, size, valueStart + NUMBER_BYTES);
}

/**
 * Rebuilds `shard` from its rings (see the header); the caller holds its
 * lock. Returns the number of entries lost: the live records dropped (the
 * write in flight), or when the shard had to be reset, every entry it held.
 * @param {import('./shard.js').Shard} shard
 */
export function rebuildShard(shard) {
  const meta = shard.meta;
  if (meta[M_RESETTING] !== 0) {
    // A clear was under way: finish it (what it drops is the write in flight, not a loss).
    shard.reset();
    return 0;
  }
  const newest = new PositionsByKey(meta[M_COUNT] > 0 ? Math.min(meta[M_COUNT], shard.slots) : 16);
  const dropped = { count: 0, cut: false };
  const countBefore = meta[M_COUNT];
  if (meta[M_UNDO_AT] !== 0) undoIncrement(shard);
  if (meta[M_MOVE_FROM] !== 0) {
    const moved = settleMove(shard);
    if (moved < 0) return shard.resetLosingAll();
    dropped.count += moved;
  }
  const mainWalked = walkRing(shard, shard.main, newest, dropped);
  const smallWalked = mainWalked < 0 ? -1 : walkRing(shard, shard.small, newest, dropped);
  // In the order they lie in the rings: reading their headers then walks
  // memory forward instead of jumping about it (a third of a rebuild's time).
  const kept = new Int32Array(newest.size);
  let keptCount = 0;
  newest.forEach((position) => {
    kept[keptCount++] = position;
  });
  kept.sort();
  if (smallWalked < 0 || kept.length >= shard.slots) return shard.resetLosingAll();
  shard.table.fill(0);
  shard.ghosts.clear();
  const rings = [shard.main, shard.small];
  const ringCounts = [0, 0];
  const ringLive = [0, 0];
  let keyValueBytes = 0;
  let withTtl = 0;
  let highestStamp = 0;
  const u32 = shard.u32;
  for (const position of kept) {
    const word = position >>> 2;
    const stamp = stampAt(shard, position);
    if (stamp > highestStamp) highestStamp = stamp;
    shard.insertSlot(u32[word + 2], position, 0);
    const r = shard.main.contains(position) ? 0 : 1;
    ringCounts[r]++;
    ringLive[r] += u32[word + 3];
    keyValueBytes += (u32[word] >>> 16) + u32[word + 1];
    if ((u32[word] & HAS_TTL) !== 0) withTtl++;
  }
  const walked = [mainWalked, smallWalked];
  for (let r = 0; r < 2; r++) {
    const ring = rings[r];
    if (ring.size === 0) continue;
    meta[ring.usedWord] = walked[r];
    meta[ring.countWord] = ringCounts[r];
    meta[ring.liveWord] = ringLive[r];
    // Kept nothing (a cut at its first record leaves head = tail = the cut):
    // empty, at its base, where Ring.allocate puts the next record.
    if (walked[r] === 0) {
      meta[ring.headWord] = ring.base;
      meta[ring.tailWord] = ring.base;
    }
  }
  const count = shard.meta64[M64_WRITE_STAMP];
  if (!isSoundWriteCount(count) || count >= MAX_WRITE_STAMP || highestStamp > count) {
    shard.meta64[M64_WRITE_STAMP] = restartedWriteCount(count, highestStamp);
  }
  meta[M_COUNT] = kept.length;
  meta[M_LIVE_BYTES] = keyValueBytes;
  meta[M_TTL_COUNT] = withTtl;
  meta[M_SWEEP_CURSOR] = 0;
  meta[M_AGING_CURSOR] = 0;
  shard.advanceAllGroups();
  shard.publishCount();
  // Every live record left was checked by the walk: what is left to check
  // is what the rebuild itself wrote (slots, counts, rings).
  if (verifyShard(shard, false).length > 0) return shard.resetLosingAll();
  // Records past a cut were not walked: the count from before tells how many went.
  return dropped.cut ? Math.max(dropped.count, countBefore - kept.length) : dropped.count;
}

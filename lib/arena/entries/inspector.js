// ArenaInspector: the entry arena of a file, read and never written (the
// arena side of SharedCache.inspect(); see arena/common/file.js
// inspectArenaFile, which maps the file read-only: a store through the
// buffer would fault, so none is ever made).
//
// An Arena would not do: constructing one claims a thread slot, its reads
// count hits and raise frequencies, its locks write their sequence and
// owner, its waits count waiters, its stats() resets damaged counter slots.
// The inspector reads a shard the way the arena's optimistic readers do,
// without taking its lock: it reads the shard's sequence word, runs the
// check or copy, and reads the word again; a writer that came in between
// makes it try again. A shard whose lock is held waits (briefly, by
// polling its own private word, never the shard's futex) for the holder.
// After INSPECT_SHARD_MS of either, the shard is "not checked" and says
// why: busy is never reported as damage, and never waited for without bound.
//
// A lock held by a thread that has exited is what a process killed in the
// middle of a write leaves: nothing will ever release it, so the shard is
// read as it is (its sequence cannot change until someone takes the lock
// over) and the held lock is reported as a problem, with whatever verify
// finds in the shard. Where no process has the file open at all (asked
// anew at each call: `users()`), every holder is dead, named or not.

import { Clock } from './clock.js';
import { collectEntries, shardSizes } from './arena.js';
import { Shard } from './shard.js';
import { verifyShard } from './verify.js';
import { readHeader, THREAD_SLOT_BYTES } from '../common/layout.js';
import { OWNER_ALIVE, OWNER_DEAD, ownerState } from '../common/liveness.js';
import { countUnchecked, isUnchecked, lockHolder, sequenceAfter, sequenceBefore } from '../common/shard-lock.js';
import { M_SEQ } from '../common/shard-meta.js';
import { readThreadSlots, threadSlotProblems } from '../common/thread-stats.js';
import { structureProblems } from './structures.js';
import { ArenaCacheError, codes } from '../../errors.js';
import { mappingTruncated } from '../../native/truncation-guard.js';

/**
 * How long one shard is tried: its reads retried while writers change it,
 * or its lock's live holder waited for. A writer holds a lock for
 * microseconds; a shard that changes under every read for this long is
 * busy, and is reported so.
 */
export const INSPECT_SHARD_MS = 100;
/** Polls of the sequence word before the first sleep while a lock is held. */
const SPIN_POLLS = 256;
const SLEEP_MAX_MS = 2;

/**
 * What reading one shard gave: `value` (what `read(shard)` returned at one
 * instant of it), `deadHolder` (the pid a dead holder recorded, -1 when its
 * lock is not held by a dead thread), or `unchecked` (why it was not read).
 * @template T
 * @typedef {{ value?: T, deadHolder: number, unchecked?: string }} ShardRead
 */

export class ArenaInspector {
  /**
   * @param {SharedArrayBuffer} buffer a read-only mapping of the file
   * @param {{ liveness: import('../common/liveness.js').ThreadLiveness, users: () => boolean }} options
   *   `liveness` answers whether a claim's thread lives (it holds nothing);
   *   `users()` whether processes have the file open now (false: every
   *   lock holder and thread slot owner is dead)
   */
  constructor(buffer, { liveness, users }) {
    this.buffer = buffer;
    /** The validated header (see layout.js readHeader). @type {any} */
    this.header = readHeader(buffer);
    this.liveness = liveness;
    this.users = users;
    // The shards count into this private slot, never into the file's (they
    // count only while writing, which the inspector never does).
    const counters = new Float64Array(THREAD_SLOT_BYTES / 8);
    this.clock = new Clock(0);
    this.shards = [];
    for (let i = 0; i < this.header.shardCount; i++) this.shards.push(new Shard(buffer, this.header, i, counters, this.clock));
    /** A private word: sleeps between polls, and the read fence (see sequenceAfter). */
    this.pause = new Int32Array(new SharedArrayBuffer(4));
    this.fence = new Int32Array(new SharedArrayBuffer(4));
  }

  /**
   * Throws ERR_ARENA_TRUNCATED if the file was cut short while mapped (by
   * an opener's reset, or from outside): what was read past the new end
   * were zeros (see arena/common/truncation.js), not the file.
   */
  checkWhole() {
    if (mappingTruncated(this.buffer)) {
      throw new ArenaCacheError(
        codes.ERR_ARENA_TRUNCATED,
        'the arena file was truncated while it was inspected (reset by a process that opened it, or cut short from outside); inspect it again',
      );
    }
  }

  /** Whether the owner recorded as pid word `word` and id `id` is alive (never with `users` false: no process has the file open). */
  ownerAlive(word, id, users) {
    return users && ownerState(word, id, this.liveness) !== OWNER_DEAD;
  }

  /**
   * Runs `read(shard)` at one instant of the shard (see the header).
   * @template T
   * @param {Shard} shard
   * @param {(shard: Shard) => T} read reads only; may see torn data, which the sequence check throws away
   * @returns {ShardRead<T>}
   */
  readShard(shard, read) {
    const meta = shard.meta;
    const deadline = performance.now() + INSPECT_SHARD_MS;
    let sleepMs = 0.05;
    let why = 'it changed under every read (writers kept it busy)';
    for (;;) {
      const seq = sequenceBefore(meta);
      let deadHolder = -1;
      // A shard a restart left to be checked is not being written: read as it is.
      if ((seq & 1) !== 0 && !isUnchecked(meta, seq)) {
        const holder = lockHolder(meta, seq, this.liveness);
        // Only once a holder is seen: asking costs a system call.
        if (holder.state === OWNER_DEAD || (holder.state !== OWNER_ALIVE && !this.users())) {
          deadHolder = holder.pid;
        } else {
          why =
            holder.state === OWNER_ALIVE
              ? `its lock is held by a live thread of process ${holder.pid}`
              : 'its lock is held by a thread that has not said who it is';
          if (performance.now() > deadline) return { deadHolder, unchecked: why };
          this.waitWhileHeld(meta, seq, sleepMs);
          sleepMs = Math.min(sleepMs * 2, SLEEP_MAX_MS);
          continue;
        }
      }
      let value;
      let failure = null;
      try {
        value = read(shard);
      } catch (error) {
        failure = error;
      }
      if (sequenceAfter(meta, this.fence) === seq) {
        // Thrown on a shard that held still: the read itself failed.
        if (failure !== null) throw failure;
        return { value, deadHolder };
      }
      if (performance.now() > deadline) return { deadHolder: -1, unchecked: why };
    }
  }

  /** How many shards a restart left to be checked still are (see leaveUnchecked). */
  pendingChecks() {
    return countUnchecked(this.shards);
  }

  /** Polls the sequence word (never its futex: a waiter would have to count itself in the file) while it stays `seq`. */
  waitWhileHeld(meta, seq, sleepMs) {
    for (let polls = 0; polls < SPIN_POLLS; polls++) {
      if (Atomics.load(meta, M_SEQ) !== seq) return;
    }
    Atomics.wait(this.pause, 0, 0, sleepMs);
  }

  /**
   * The arena's problems as found (see Arena.verify, which locks each
   * shard), and the shards not checked: { problems, unchecked: [{ shard, reason }] }.
   */
  verify() {
    const problems = [...threadSlotProblems(this.buffer, this.header), ...structureProblems(this.buffer, this.header)];
    const unchecked = [];
    for (const shard of this.shards) {
      const found = this.readShard(shard, verifyShard);
      if (found.unchecked !== undefined) {
        unchecked.push({ shard: shard.index, reason: found.unchecked });
        continue;
      }
      if (found.deadHolder >= 0) {
        const who = found.deadHolder > 0 ? `a thread of process ${found.deadHolder}` : 'a thread';
        problems.push(
          `shard ${shard.index}: its lock is held by ${who} that has exited, maybe in the middle of a write; the next process to open the file repairs the shard`,
        );
      }
      for (const problem of found.value) problems.push(`shard ${shard.index}: ${problem}`);
    }
    this.checkWhole();
    return { problems, unchecked };
  }

  /**
   * The counters of every thread (damaged slots left out, not reset),
   * `threads` counting the live ones only, and the sizes (see Arena.stats).
   */
  stats() {
    const users = this.users();
    const totals = readThreadSlots(this.buffer, this.header, (word, owner) => this.ownerAlive(word, owner, users));
    const sizes = shardSizes(this.shards);
    this.checkWhole();
    return { totals, ...sizes };
  }

  /**
   * The live entries of one shard (see collectEntries), read at one
   * instant: { entries } or { unchecked } (why it was not read). A shard
   * whose records point outside its region is damaged: { entries: [], damaged: true }.
   */
  shardEntries(index, withValues) {
    const now = Date.now();
    const found = this.readShard(this.shards[index], (shard) =>
      collectEntries(shard, withValues, now, (start, length) => Buffer.from(shard.u8.slice(start, start + length).buffer).toString('utf8')),
    );
    this.checkWhole();
    if (found.unchecked !== undefined) return { entries: [], unchecked: found.unchecked };
    return found.value === null ? { entries: [], damaged: true } : { entries: found.value };
  }
}

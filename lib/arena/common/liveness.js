// Which threads using an arena are alive, in any process and any PID
// namespace.
//
// A pid means nothing outside its namespace: for a process in another
// container sharing /dev/shm, kill(pid, 0) says "no such process" while it
// runs, or names an unrelated process here; and two containers of one image
// both run node as pid 1, with equal thread ids. So in a mapped arena file
// every thread claims the file under a claim id of its own, drawn at random
// from 1 to 2^30, and holds a kernel lock on the byte of the file that
// stands for that id (src/native/mapped_file.h, livenessHold): a write lock
// of an open file description of the thread's own, closed when the thread
// ends and dropped by the kernel when its process dies. A claim is taken
// only when its byte is free, so no two live threads share an id, and the
// id of a thread that died is not handed out again (unless 2^30 random draws
// meet it). Whether the owner of a lock, a fetch flight or the sweeper
// lease lives is then a question about its claim id that the kernel answers
// the same way in every namespace, for this process's own threads too
// (livenessAlive). Nothing here compares a pid with this process's.
//
// In an in-memory arena every thread is one of this process's: the kernel
// answers by tid.

import { randomInt } from 'node:crypto';
import { ArenaCacheError, codes } from '../../errors.js';
import { livenessAlive, livenessHold, livenessRelease, MAX_CLAIM_ID } from '../../native/mapped-file.js';
import { isThreadAlive } from '../../native/thread-identity.js';

// What is known of a recorded owner (a lock holder, the sweeper, a fetch
// loader): see ownerState.
export const OWNER_DEAD = 0;
export const OWNER_ALIVE = 1;
export const OWNER_UNKNOWN = 2;
/** Pids are below 2^22 (PID_MAX_LIMIT); the bits above are 0 in what ownerPidWord() records. */
const PID_MASK = (1 << 22) - 1;
/** Random claim ids tried before giving up (each is free unless 2^30 ids are nearly all held). */
const CLAIM_ATTEMPTS = 64;

/** The pid word this thread records next to its id as an owner: its pid, for messages only (see ownerState). */
export function ownerPidWord() {
  return process.pid;
}

/** The pid of a pid word (files of earlier versions kept a thread slot above it). */
export function pidOf(word) {
  return word & PID_MASK;
}

/**
 * The owner id of claim `claimId` in a mapped file: negative, so that it
 * never equals a tid (what in-memory arenas and earlier versions record).
 */
export function claimOwnerId(claimId) {
  return -claimId;
}

/**
 * Whether the owner recorded as pid word `word` and id `id` is dead, alive
 * or cannot be told (OWNER_*).
 *
 * In a mapped file (`liveness` not null) only the owner's claim answers:
 * `id` is claimOwnerId(claim), and the claim's liveness lock says whether
 * its thread lives, in any PID namespace; the pid is not asked. An id that
 * is no claim (a file written by an earlier version, damaged words) cannot
 * be told.
 *
 * In an in-memory arena `id` is the owner's kernel tid, and the kernel
 * answers by tid.
 */
export function ownerState(word, id, liveness) {
  if (liveness !== null) {
    if (!(id < 0 && id >= -MAX_CLAIM_ID && Number.isInteger(id))) return OWNER_UNKNOWN;
    return liveness.claimAlive(-id) ? OWNER_ALIVE : OWNER_DEAD;
  }
  const pid = word & PID_MASK;
  if (pid !== process.pid || id <= 0) return OWNER_UNKNOWN;
  const alive = isThreadAlive(pid, id);
  return alive === true ? OWNER_ALIVE : alive === false ? OWNER_DEAD : OWNER_UNKNOWN;
}

export class ThreadLiveness {
  /** @param {SharedArrayBuffer} buffer a mapped arena file's buffer */
  constructor(buffer) {
    this.buffer = buffer;
    /** The claim whose lock this instance holds (0: none). */
    this.claimId = 0;
  }

  /** This thread takes claim `claimId`'s lock (one more hold if it has it); false when another live thread holds it. */
  hold(claimId) {
    const held = livenessHold(this.buffer, claimId);
    if (held) this.claimId = claimId;
    return held;
  }

  /**
   * A new claim of this thread: a random id whose lock was free, now held.
   * Throws ERR_ARENA_BUSY when every id tried was held: only a reader of a
   * readable arena file that read-locks the whole range of claim bytes
   * does that (see SECURITY.md).
   */
  claimNew() {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const claimId = randomInt(1, MAX_CLAIM_ID + 1);
      if (this.hold(claimId)) return claimId;
    }
    throw new ArenaCacheError(
      codes.ERR_ARENA_BUSY,
      `could not claim a thread identity in the arena file: ${CLAIM_ATTEMPTS} random claim bytes were all locked ` +
        '(a process that may read the file holds locks on them: keep arena files 0o600)',
    );
  }

  /** Gives back the hold this instance took (its cache or store closes). */
  release() {
    if (this.claimId > 0) livenessRelease(this.buffer, this.claimId);
    this.claimId = 0;
  }

  /** Whether the thread that claimed the file as `claimId` is alive (in any process and PID namespace). */
  claimAlive(claimId) {
    return livenessAlive(this.buffer, claimId);
  }
}

// Which threads using a mapped arena file are alive, in any process and any
// PID namespace.
//
// A pid means nothing outside its namespace: for a process in another
// container sharing /dev/shm, kill(pid, 0) says "no such process" while it
// runs, or names an unrelated process here. So every thread that uses a
// mapped arena holds a kernel lock on a byte of the file that stands for its
// thread slot (src/native/mapped_file.h, livenessHold): an OFD lock of an
// open file description of the thread's own, closed when the thread ends
// and dropped by the kernel when its process dies. Whether a slot's owner
// lives is then a question the kernel answers the same way in every
// namespace (livenessAlive).
//
// A slot is handed to a new thread only once its owner is dead (see
// thread-stats.js), and the new owner writes its own identity into it: a
// claim id that no other claim of the file had, and its pid. A lock holder
// recorded with slot s, pid p and claim id c is alive exactly while slot s
// still names c and p and its byte is locked. Nothing here compares pids
// with this process's: equal pids in two PID namespaces are two processes.

import { livenessAlive, livenessHold, livenessRelease } from '../native/mapped-file.js';
import { isThreadAlive } from '../native/thread-identity.js';
import { THREAD_SLOT_BYTES } from './layout.js';

const WORDS_PER_SLOT = THREAD_SLOT_BYTES / 4;

// What is known of a recorded owner (a lock holder, the sweeper, a fetch
// loader): see ownerState.
export const OWNER_DEAD = 0;
export const OWNER_ALIVE = 1;
export const OWNER_UNKNOWN = 2;
/** An owner's pid word holds the pid in its low bits (pids are below 2^22) and its thread slot + 1 above them (0: none). */
const PID_BITS = 22;
const PID_MASK = (1 << PID_BITS) - 1;

/**
 * The pid word this thread records next to its tid as an owner: its pid,
 * and with `liveness` (a mapped file's) the thread slot whose lock it holds.
 */
export function ownerPidWord(liveness) {
  return liveness !== null && liveness.slot >= 0 ? process.pid | ((liveness.slot + 1) << PID_BITS) : process.pid;
}

/** The pid of a pid word (see ownerPidWord). */
export function pidOf(word) {
  return word & PID_MASK;
}

/**
 * Whether the owner recorded as pid word `word` and id `id` is dead, alive
 * or cannot be told (OWNER_*).
 *
 * In a mapped file (`liveness` not null) only the owner's thread slot
 * answers, whatever the pid: two containers of one image both run node as
 * pid 1 (and their main threads as tid 1), so an equal pid does not mean
 * this process, and a tid asked of this process's kernel namespace says
 * nothing of a thread in another. The slot's liveness lock and owner words
 * say it the same way in every namespace, for this process's threads too.
 * `id` is then the slot's claim id (see claimThreadSlot), unique in the
 * file, so a slot handed on to a thread of another process with the same
 * pid and tid does not pass for the old owner. An owner recorded without a
 * slot (a thread sharing the last slot) cannot be told.
 *
 * In an in-memory arena every thread is one of this process's, and `id` is
 * its kernel tid: the kernel answers by tid.
 */
export function ownerState(word, id, liveness) {
  const pid = word & PID_MASK;
  if (pid <= 0) return OWNER_UNKNOWN;
  if (liveness !== null) {
    const slot = (word >>> PID_BITS) - 1;
    // No slot, or none of this file (damaged words): nothing can be told.
    if (slot < 0 || slot >= liveness.slotCount) return OWNER_UNKNOWN;
    return liveness.ownerAlive(slot, pid, id) ? OWNER_ALIVE : OWNER_DEAD;
  }
  if (pid !== process.pid || id <= 0) return OWNER_UNKNOWN;
  const alive = isThreadAlive(pid, id);
  return alive === true ? OWNER_ALIVE : alive === false ? OWNER_DEAD : OWNER_UNKNOWN;
}

export class ThreadLiveness {
  /** @param {SharedArrayBuffer} buffer a mapped arena file's buffer */
  constructor(buffer) {
    this.buffer = buffer;
    /** The thread slots' owner words, once the layout is known (see bind). */
    this.owners = null;
    /** How many thread slots the arena has (0 until bound). */
    this.slotCount = 0;
    /** The slot whose lock this instance holds (-1: none, or a slot shared by several threads). */
    this.slot = -1;
  }

  /** Binds to the arena's thread slots (its header is read after the mapping). */
  bind(layout) {
    this.owners = new Int32Array(this.buffer, layout.statsOffset, (layout.threadSlots * THREAD_SLOT_BYTES) / 4);
    this.slotCount = layout.threadSlots;
  }

  /** This thread takes slot `slot`'s lock (one more hold if it has it); false when another live thread holds it. */
  hold(slot) {
    const held = livenessHold(this.buffer, slot);
    if (held) this.slot = slot;
    return held;
  }

  /** Gives back the hold this instance took (its cache or store closes). */
  release() {
    if (this.slot >= 0) livenessRelease(this.buffer, this.slot);
    this.slot = -1;
  }

  /** Whether the owner of slot `slot` is alive (whoever it is). */
  slotAlive(slot) {
    return livenessAlive(this.buffer, slot);
  }

  /** Whether the thread of process `pid` that claimed slot `slot` as `id` (see claimThreadSlot) is alive. */
  ownerAlive(slot, pid, id) {
    const base = slot * WORDS_PER_SLOT;
    // The slot went to another thread: it was handed on only after its owner died.
    if (Atomics.load(this.owners, base) !== id || this.owners[base + 1] !== pid) return false;
    return livenessAlive(this.buffer, slot);
  }
}

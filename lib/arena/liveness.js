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
// lock holder recorded with slot s, pid p and thread t is alive exactly
// while slot s still names p and t and its byte is locked.

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
 * Whether the owner recorded as pid word `word` and thread `tid` is dead,
 * alive or cannot be told (OWNER_*): the kernel by tid for a thread of this
 * process; for another process, only the liveness lock of its slot, which
 * `liveness` (a mapped file's, or null) reads, in any PID namespace.
 */
export function ownerState(word, tid, liveness) {
  const pid = word & PID_MASK;
  if (pid <= 0) return OWNER_UNKNOWN;
  if (pid === process.pid) {
    if (tid <= 0) return OWNER_UNKNOWN;
    const alive = isThreadAlive(pid, tid);
    return alive === true ? OWNER_ALIVE : alive === false ? OWNER_DEAD : OWNER_UNKNOWN;
  }
  const slot = (word >>> PID_BITS) - 1;
  if (liveness === null || slot < 0) return OWNER_UNKNOWN;
  return liveness.ownerAlive(slot, pid, tid) ? OWNER_ALIVE : OWNER_DEAD;
}

export class ThreadLiveness {
  /** @param {SharedArrayBuffer} buffer a mapped arena file's buffer */
  constructor(buffer) {
    this.buffer = buffer;
    /** The thread slots' owner words, once the layout is known (see bind). */
    this.owners = null;
    /** The slot whose lock this instance holds (-1: none, or a slot shared by several threads). */
    this.slot = -1;
  }

  /** Binds to the arena's thread slots (its header is read after the mapping). */
  bind(layout) {
    this.owners = new Int32Array(this.buffer, layout.statsOffset, (layout.threadSlots * THREAD_SLOT_BYTES) / 4);
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

  /** Whether thread `tid` of process `pid`, recorded as the owner of slot `slot`, is alive. */
  ownerAlive(slot, pid, tid) {
    const base = slot * WORDS_PER_SLOT;
    // The slot went to another thread: it was handed on only after its owner died.
    if (Atomics.load(this.owners, base) !== tid || this.owners[base + 1] !== pid) return false;
    return livenessAlive(this.buffer, slot);
  }
}

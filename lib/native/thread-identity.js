// Thread and process identity and liveness (src/native/thread_identity.h):
// which kernel thread this is, and whether a thread or process recorded
// earlier still exists.

import { checkInteger } from '../validate.js';
import { loadedAddon } from './addon.js';

// Checked here, not left to the addon: isThreadAlive() answers without it,
// and isProcessAlive() never calls it.
const checkId = (value, name) => checkInteger(value, name, 1, 0x7fffffff, 'a positive 32-bit integer');

/** The kernel thread id of the calling thread, or 0 without the addon. */
export function currentThreadId() {
  return loadedAddon === null ? 0 : loadedAddon.currentThreadId();
}

/**
 * Whether thread `tid` of process `pid` still exists. Without the addon the
 * answer is unknown and this returns null.
 */
export function isThreadAlive(pid, tid) {
  checkId(pid, 'pid');
  checkId(tid, 'tid');
  return loadedAddon === null ? null : loadedAddon.isThreadAlive(pid, tid);
}

/**
 * Whether process `pid` still exists (signal 0 probes without sending).
 * EPERM means it exists but belongs to another user.
 */
export function isProcessAlive(pid) {
  checkId(pid, 'pid');
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code !== 'ESRCH';
  }
}

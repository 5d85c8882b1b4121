// Loads the native addon: a prebuilt binary from prebuilds/<platform>-<arch>/
// first, then the local build in build/Release (both through node-gyp-build).
// When neither loads, the in-memory cache still works; the features that need
// the addon throw ERR_NATIVE_UNAVAILABLE with the reason recorded here.
//
// Every wrapper below checks its arguments, so the C++ side sees only
// validated values.

import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ArenaCacheError, codes, describe } from './errors.js';

const require = createRequire(import.meta.url);
const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const EXPECTED_ABI = 1;

function load() {
  if (process.env.ARENACACHE_NATIVE === 'off') {
    return { addon: null, reason: 'disabled by the environment variable ARENACACHE_NATIVE=off' };
  }
  let addon;
  try {
    addon = require('node-gyp-build')(packageRoot);
  } catch (error) {
    return {
      addon: null,
      reason:
        `no prebuilt binary for ${process.platform}-${process.arch} and no local build ` +
        `(${error.message.split('\n')[0]}); run "npm rebuild arenacache", which needs ` +
        'python3, make and a C++ compiler',
    };
  }
  if (addon.abiVersion !== EXPECTED_ABI) {
    return {
      addon: null,
      reason: `the native build is stale (abi ${addon.abiVersion}, expected ${EXPECTED_ABI}); run "npm rebuild arenacache"`,
    };
  }
  return { addon, reason: null };
}

const { addon, reason } = load();

/** True when the native addon loaded. */
export const nativeAvailable = addon !== null;

/** Why the addon did not load, or null. */
export const nativeUnavailableReason = reason;

/**
 * Throws ERR_NATIVE_UNAVAILABLE unless the addon loaded.
 * @param {string} feature what the caller wanted, for the message
 */
export function requireNative(feature) {
  if (addon === null) {
    throw new ArenaCacheError(
      codes.ERR_NATIVE_UNAVAILABLE,
      `${feature} needs the arenacache native addon, which is unavailable: ${reason}`,
    );
  }
  return addon;
}

function checkId(name, value) {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number (got ${describe(value)})`);
  if (!Number.isInteger(value) || value <= 0 || value > 0x7fffffff) {
    throw new RangeError(`${name} must be a positive 32-bit integer (got ${describe(value)})`);
  }
}

/** The kernel thread id of the calling thread, or 0 without the addon. */
export function currentThreadId() {
  return addon === null ? 0 : addon.currentThreadId();
}

/**
 * Whether thread `tid` of process `pid` still exists. Without the addon the
 * answer is unknown and this returns null.
 */
export function isThreadAlive(pid, tid) {
  checkId('pid', pid);
  checkId('tid', tid);
  return addon === null ? null : addon.isThreadAlive(pid, tid);
}

/**
 * Whether process `pid` still exists (signal 0 probes without sending).
 * EPERM means it exists but belongs to another user.
 */
export function isProcessAlive(pid) {
  checkId('pid', pid);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code !== 'ESRCH';
  }
}

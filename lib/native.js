// Loads the native addon: a prebuilt binary from prebuilds/<platform>-<arch>/
// for this Node ABI first (chosen by node-gyp-build's rules), then the local
// build in build/Release. (node-gyp-build's own loader tries the local build
// first; a package that ships prebuilds wants them used.)
// When neither loads, the in-memory cache still works; the features that need
// the addon throw ERR_NATIVE_UNAVAILABLE with the reason recorded here.
//
// Every wrapper below checks its arguments, so the C++ side sees only
// validated values.

import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArenaCacheError, codes, describe } from './errors.js';

const require = createRequire(import.meta.url);
const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const EXPECTED_ABI = 3;

const BUILD_HINT = 'run "npm rebuild arenacache", which needs python3, make and a C++ compiler';

/** The prebuild in prebuilds/<platform>-<arch>/ that fits this Node (its ABI), or null. */
function findPrebuild() {
  const gypBuild = require('node-gyp-build');
  const folders = readdirOrEmpty(path.join(packageRoot, 'prebuilds')).map(gypBuild.parseTuple);
  const folder = folders.filter(gypBuild.matchTuple(process.platform, process.arch)).sort(gypBuild.compareTuples)[0];
  if (folder === undefined) return null;
  const directory = path.join(packageRoot, 'prebuilds', folder.name);
  const files = readdirOrEmpty(directory).map(gypBuild.parseTags).filter(Boolean);
  const best = files.filter(gypBuild.matchTags('node', process.versions.modules)).sort(gypBuild.compareTags('node'))[0];
  return best === undefined ? null : path.join(directory, best.file);
}

function readdirOrEmpty(directory) {
  try {
    return readdirSync(directory);
  } catch {
    return [];
  }
}

// A prebuilt binary first (what a published package ships), then the local
// build that `npm install` made; each failure is remembered for the reason.
function load() {
  if (process.env.ARENACACHE_NATIVE === 'off') {
    return { addon: null, reason: 'disabled by the environment variable ARENACACHE_NATIVE=off' };
  }
  const candidates = [findPrebuild(), path.join(packageRoot, 'build', 'Release', 'arenacache.node')];
  const failures = [];
  for (const binary of candidates) {
    if (binary === null || !existsSync(binary)) continue;
    let addon;
    try {
      addon = require(binary);
    } catch (error) {
      failures.push(`${binary} did not load (${error.message.split('\n')[0]})`);
      continue;
    }
    if (addon.abiVersion !== EXPECTED_ABI) {
      failures.push(`${binary} is stale (abi ${addon.abiVersion}, expected ${EXPECTED_ABI})`);
      continue;
    }
    return { addon, reason: null, binary };
  }
  if (failures.length > 0) return { addon: null, reason: `${failures.join('; ')}; ${BUILD_HINT}` };
  return {
    addon: null,
    reason:
      `no prebuilt binary for ${process.platform}-${process.arch} (Node ABI ${process.versions.modules}) ` +
      `in prebuilds/ and no local build in build/Release; ${BUILD_HINT}`,
  };
}

const { addon, reason, binary = null } = load();

/** The path of the addon binary that loaded (a prebuild or build/Release), or null. */
export const nativeBinary = binary;

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

/**
 * Reads the whole file at `path` with its stats before and after the read,
 * in one trip to the thread pool (node:fs/promises needs five or six):
 * Promise<{ before, data, after }>, the stats as plain objects with the
 * number fields of node:fs Stats, errors as node:fs words them. Null without
 * the addon (callers then use node:fs).
 * @type {((path: string) => Promise<{ before: object, data: Buffer, after: object }>) | null}
 */
export const loadFile =
  addon === null
    ? null
    : (path) => {
        if (typeof path !== 'string') throw new TypeError(`path must be a string (got ${describe(path)})`);
        // The C++ side takes a C string: a NUL would cut the path short.
        if (path.includes('\0')) throw new RangeError(`path must not contain NUL characters (got ${describe(path)})`);
        return addon.loadFile(path);
      };

function checkFd(fd) {
  if (!Number.isInteger(fd) || fd < 0 || fd > 0x7fffffff) throw new RangeError(`fd must be a file descriptor (got ${describe(fd)})`);
}

function checkWholeView(name, view) {
  if (!(view instanceof Uint8Array) || !(view.buffer instanceof SharedArrayBuffer)) {
    throw new TypeError(`${name} must be a Uint8Array over a SharedArrayBuffer (got ${describe(view)})`);
  }
  if (view.byteOffset !== 0 || view.byteLength !== view.buffer.byteLength) {
    throw new RangeError(`${name} must cover its whole SharedArrayBuffer`);
  }
}

function checkWord(array, index) {
  if (!(array instanceof Int32Array) || !(array.buffer instanceof SharedArrayBuffer)) {
    throw new TypeError(`array must be an Int32Array over a SharedArrayBuffer (got ${describe(array)})`);
  }
  if (!Number.isInteger(index) || index < 0 || index >= array.length) {
    throw new RangeError(`index must be an integer from 0 to ${array.length - 1} (got ${describe(index)})`);
  }
}

// File-backed arenas (see src/native/mapped_file.h). Each call needs the
// addon; `feature` names what the user asked for in the error otherwise.

/** Opens `path` read-write without following a symlink; creates it with `createMode` when > 0. */
export function fileOpen(path, createMode, feature) {
  if (typeof path !== 'string' || path.length === 0 || path.includes('\0')) {
    throw new TypeError(`path must be a non-empty string without NUL bytes (got ${describe(path)})`);
  }
  if (!Number.isInteger(createMode) || createMode < 0 || createMode > 0o7777) {
    throw new RangeError(`createMode must be 0 or a file mode up to 0o7777 (got ${describe(createMode)})`);
  }
  const [fd, created] = requireNative(feature).fileOpen(path, createMode);
  return { fd, created };
}

/** { size, uid, euid, mode, regular, dev, ino } of an open file. */
export function fileStat(fd) {
  checkFd(fd);
  return requireNative('fileStat()').fileStat(fd);
}

export const LOCK_NONE = 0;
export const LOCK_SHARED = 1;
export const LOCK_EXCLUSIVE = 2;

/** Sets the whole-file OFD lock; false when it is held elsewhere and `wait` is false. */
export function fileLock(fd, kind, wait) {
  checkFd(fd);
  if (kind !== LOCK_NONE && kind !== LOCK_SHARED && kind !== LOCK_EXCLUSIVE) throw new RangeError(`kind must be 0, 1 or 2 (got ${describe(kind)})`);
  return requireNative('fileLock()').fileLock(fd, kind, wait === true);
}

/** Sets the file's length to `size` bytes and allocates all of them. */
export function fileResize(fd, size) {
  checkFd(fd);
  if (!Number.isSafeInteger(size) || size < 0) throw new RangeError(`size must be a non-negative integer (got ${describe(size)})`);
  requireNative('fileResize()').fileResize(fd, size);
}

export const POPULATE_NONE = 0;
export const POPULATE_READ = 1;
export const POPULATE_WRITE = 2;

/** Maps `size` bytes of the file as a SharedArrayBuffer (prefaulting as `populate` says); the mapping then owns `fd`. */
export function fileMap(fd, size, populate) {
  checkFd(fd);
  if (!Number.isSafeInteger(size) || size <= 0) throw new RangeError(`size must be a positive integer (got ${describe(size)})`);
  if (populate !== POPULATE_NONE && populate !== POPULATE_READ && populate !== POPULATE_WRITE) {
    throw new RangeError(`populate must be 0, 1 or 2 (got ${describe(populate)})`);
  }
  return requireNative('fileMap()').fileMap(fd, size, populate);
}

export function fileClose(fd) {
  checkFd(fd);
  requireNative('fileClose()').fileClose(fd);
}

/** Counts one more user of a mapped buffer; false for an in-memory buffer (or without the addon). */
export function mappingRetain(buffer) {
  if (addon === null) return false;
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  return addon.mappingRetain(view);
}

/** One user fewer; at zero the file is unmapped. Returns the users left, -1 for an in-memory buffer. */
export function mappingRelease(buffer) {
  if (addon === null) return -1;
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  return addon.mappingRelease(view);
}

/** Writes a mapped buffer back to its file (msync + fdatasync, off the event loop). */
export function mappingFlush(buffer) {
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  return requireNative('flush()').mappingFlush(view);
}

/** Atomics.wait for a word of a mapped file, across processes. */
export function futexWait(array, index, value, timeoutMs) {
  checkWord(array, index);
  return addon.futexWait(array, index, value | 0, timeoutMs);
}

/** Atomics.notify for a word of a mapped file, across processes. */
export function futexWake(array, index, count = Infinity) {
  checkWord(array, index);
  return addon.futexWake(array, index, count);
}

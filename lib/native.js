// Loads the native addon: a prebuilt binary from prebuilds/<platform>-<arch>/
// for this Node ABI first (chosen by node-gyp-build's rules), then the local
// build in build/Release. (node-gyp-build's own loader tries the local build
// first; a package that ships prebuilds wants them used.)
// When neither loads, the in-memory cache still works; the features that need
// the addon throw ERR_NATIVE_UNAVAILABLE with the reason recorded here.
//
// Every wrapper below checks its arguments, so the C++ side sees only
// validated values. The addon checks them again (src/native/arguments.h)
// for callers of the raw binary; these checks give the messages users see.

import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArenaCacheError, codes, describe } from './errors.js';

const require = createRequire(import.meta.url);
const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const EXPECTED_ABI = 8;

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

// Files beneath a root directory (src/native/root_files.h): what CacheFS
// does to a directory it serves, each call on a path relative to the root's
// open descriptor, resolved beneath it so that no symbolic link (or one
// swapped in meanwhile) leads outside. Results and errors are node:fs's for
// the same call by path; a path leading outside fails with code
// ERR_PATH_OUTSIDE_ROOT and the relative path in `relative`.

export const ROOT_OPEN = 1;
export const ROOT_STAT = 2;
export const ROOT_READDIR = 3;
export const ROOT_MKDIR = 4;
export const ROOT_UNLINK = 5;
export const ROOT_RENAME = 6;
export const ROOT_RM = 7;
export const ROOT_LOAD = 8;
export const ROOT_STORE = 9;
export const ROOT_REWRITE = 10;

/** ROOT_MKDIR and ROOT_RM flags. */
export const ROOT_RECURSIVE = 1;
export const ROOT_FORCE = 2;

/** A path relative to the root: no leading "/", no NUL, no ".." component ("" is the root). */
function checkRelative(name, value) {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string (got ${describe(value)})`);
  if (value.startsWith('/') || value.includes('\0') || value.split('/').includes('..')) {
    throw new RangeError(`${name} must be a path relative to the root, without ".." or NUL (got ${describe(value)})`);
  }
}

function checkRootCall(op, rootFd, rootPath, path, dest, flags, mode, data) {
  if (!Number.isInteger(op) || op < ROOT_OPEN || op > ROOT_REWRITE) throw new RangeError(`op must be one of the ROOT_* operations (got ${describe(op)})`);
  checkFd(rootFd);
  if (typeof rootPath !== 'string' || !rootPath.startsWith('/') || rootPath.includes('\0')) {
    throw new TypeError(`rootPath must be an absolute path without NUL bytes (got ${describe(rootPath)})`);
  }
  checkRelative('path', path);
  checkRelative('dest', dest);
  if (!Number.isInteger(flags) || flags < 0 || flags > 0x7fffffff) throw new RangeError(`flags must be a non-negative 32-bit integer (got ${describe(flags)})`);
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) throw new RangeError(`mode must be a file mode from 0 to 0o7777 (got ${describe(mode)})`);
  if ((op === ROOT_STORE || op === ROOT_REWRITE) && !(data instanceof Uint8Array)) throw new TypeError(`data must be a Buffer or Uint8Array (got ${describe(data)})`);
}

/**
 * One operation beneath the root directory open as `rootFd` (its real path
 * `rootPath`, for messages and absolute links), synchronously: the result
 * (descriptor, stats, names, first directory made, { before, data, after })
 * or a thrown node:fs-shaped error.
 * @param {number} op ROOT_*
 * @param {number} rootFd
 * @param {string} rootPath
 * @param {string} path relative to the root ("" for the root)
 * @param {string} dest ROOT_RENAME's target, else ""
 * @param {number} flags open(2) flags for ROOT_OPEN and ROOT_STORE; ROOT_RECURSIVE | ROOT_FORCE for ROOT_MKDIR and ROOT_RM
 * @param {number} mode the mode of a file or directory made
 * @param {Uint8Array} [data] what ROOT_STORE and ROOT_REWRITE write
 */
export function rootFilesSync(op, rootFd, rootPath, path, dest, flags, mode, data) {
  checkRootCall(op, rootFd, rootPath, path, dest, flags, mode, data);
  return requireNative('CacheFS over a directory').rootFilesSync(op, rootFd, rootPath, path, dest, flags, mode, data);
}

/**
 * Closes a descriptor that ROOT_OPEN gave this thread (EBADF for any other);
 * those still open when a worker thread exits are closed with it.
 */
export function closeRootDescriptor(fd) {
  checkFd(fd);
  requireNative('CacheFS over a directory').closeDescriptor(fd);
}

/** rootFilesSync() on the thread pool: a Promise of the same result. */
export function rootFiles(op, rootFd, rootPath, path, dest, flags, mode, data) {
  checkRootCall(op, rootFd, rootPath, path, dest, flags, mode, data);
  return requireNative('CacheFS over a directory').rootFiles(op, rootFd, rootPath, path, dest, flags, mode, data);
}

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

/**
 * An Int32Array over this process's count of mapped arena files that were
 * truncated from outside and faulted (see lib/arena/truncation.js).
 */
export function mappingFaults() {
  return new Int32Array(requireNative('mappingFaults()').mappingFaults());
}

/** Whether the mapped `buffer` faulted past the end of its truncated file. */
export function mappingTruncated(buffer) {
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  return requireNative('mappingTruncated()').mappingTruncated(view);
}

/** The view of a mapped `buffer` and a thread `slot`, checked for the liveness functions. */
function livenessArguments(buffer, slot) {
  const view = new Uint8Array(buffer);
  checkWholeView('buffer', view);
  if (typeof slot !== 'number') throw new TypeError(`slot must be a number (got ${describe(slot)})`);
  if (!Number.isInteger(slot) || slot < 0 || slot > 65535) throw new RangeError(`slot must be an integer from 0 to 65535 (got ${describe(slot)})`);
  return view;
}

/** This thread takes the liveness lock of thread slot `slot` of the mapped `buffer`'s file; false when another thread holds it. */
export function livenessHold(buffer, slot) {
  return requireNative('livenessHold()').livenessHold(livenessArguments(buffer, slot), slot);
}

/** Gives back this thread's liveness lock of `slot` (false: it held none). */
export function livenessRelease(buffer, slot) {
  return requireNative('livenessRelease()').livenessRelease(livenessArguments(buffer, slot), slot);
}

/** Whether some thread, of any process in any PID namespace, holds the liveness lock of `slot`. */
export function livenessAlive(buffer, slot) {
  return requireNative('livenessAlive()').livenessAlive(livenessArguments(buffer, slot), slot);
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

// Workspace snapshots: the tree scan, the file-job engine, the renames and
// the filesystem probes they need (see src/native/tree_scan.h,
// file_jobs.h, dir_exchange.h and fs_sync.h). Their errors are shaped like
// node:fs's: code, errno, syscall, path (and dest).

const isPath = (value) => typeof value === 'string' && value.length > 0 && !value.includes('\0');

function checkPath(name, value) {
  if (!isPath(value)) {
    throw new TypeError(`${name} must be a non-empty string without NUL bytes (got ${describe(value)})`);
  }
}

/**
 * describe(), with the length of an array or typed array (what a column check complains about).
 * @param {unknown} value
 */
function describeColumn(value) {
  return ArrayBuffer.isView(value) ? `a ${value.constructor.name} of length ${/** @type {NodeJS.TypedArray} */ (value).length}` : describe(value);
}

/**
 * Every entry below the directory `root` (root itself not included), with
 * its lstat, never following a symbolic link. Canonical order: depth-first
 * pre-order, the children of each directory sorted by the bytes of their
 * names (so 'a', 'a/b', 'a-b'). Names in `exclude` are skipped at the top
 * level only. An entry removed during the scan is left out; any other
 * failure rejects with a node:fs-shaped error naming the full path.
 * @param {string} root
 * @param {string[]} [exclude] top-level names to skip, e.g. ['.arenacache']
 * @returns {Promise<{ paths: string[], types: Uint8Array, modes: Uint32Array, sizes: Float64Array,
 *   devs: BigUint64Array, inos: BigUint64Array, atimeSec: Float64Array, atimeNsec: Uint32Array,
 *   mtimeSec: Float64Array, mtimeNsec: Uint32Array, ctimeSec: Float64Array, ctimeNsec: Uint32Array,
 *   targets: string[], digest: string, vanished: string[] }>} paths relative with '/'; types 1 file, 2 directory,
 *   3 symlink, 4 other; targets the symlinks' (readlink), '' for the rest; digest a SHA-256 (hex)
 *   over every entry's path, type, mode, size, dev, ino, mtime, ctime and target; vanished the
 *   directories listed but gone before they could be read (their contents are missing)
 */
export function scanTree(root, exclude = []) {
  checkPath('root', root);
  if (!Array.isArray(exclude)) throw new TypeError(`exclude must be an array of names (got ${describe(exclude)})`);
  for (let i = 0; i < exclude.length; i++) {
    const name = exclude[i];
    if (typeof name !== 'string' || name.length === 0 || name.includes('\0') || name.includes('/')) {
      throw new TypeError(`exclude[${i}] must be a file name: a non-empty string without '/' or NUL bytes (got ${describe(name)})`);
    }
  }
  return requireNative('scanTree()')
    .scanTree(root, exclude.slice())
    .then((scan) => {
      // Names come across as one string each for paths and targets (one
      // string per entry cost more than the scan): NUL never occurs in a name.
      const count = scan.types.length;
      if (typeof scan.paths === 'string') scan.paths = count === 0 ? [] : scan.paths.split('\0');
      if (typeof scan.targets === 'string') scan.targets = count === 0 ? [] : scan.targets.split('\0');
      return scan;
    });
}

export const JOB_CLONE = 1;
export const JOB_PACK = 2;
export const JOB_EXTRACT = 3;
export const JOB_HASH = 4;

export const ENGINE_REFLINK = 1;
export const ENGINE_COPY_FILE_RANGE = 2;
export const ENGINE_COPY = 3;
export const ENGINE_PACK = 4;

export const FLAG_UNSTABLE = 1;
export const FLAG_MISMATCH = 2;
export const FLAG_SHORT = 4;

/** @type {[string, Float64ArrayConstructor | Uint32ArrayConstructor][]} */
const NUMBER_COLUMNS = [
  ['offsets', Float64Array],
  ['lengths', Float64Array],
  ['modes', Uint32Array],
  ['atimeSec', Float64Array],
  ['atimeNsec', Uint32Array],
  ['mtimeSec', Float64Array],
  ['mtimeNsec', Uint32Array],
];

function checkColumn(name, column, type, n, what) {
  const ok = type === Array ? Array.isArray(column) : column instanceof type;
  if (!ok) throw new TypeError(`jobs.${name} must be ${what} (got ${describeColumn(column)})`);
  if (column.length !== n) throw new RangeError(`jobs.${name} must be ${what} (got ${describeColumn(column)})`);
}

function checkJobTime(name, seconds, nanoseconds, i) {
  if (!Number.isSafeInteger(seconds[i])) throw new RangeError(`jobs.${name}Sec[${i}] must be an integer (got ${describe(seconds[i])})`);
  if (nanoseconds[i] > 999_999_999) {
    throw new RangeError(`jobs.${name}Nsec[${i}] must be an integer from 0 to 999999999 (got ${nanoseconds[i]})`);
  }
}

/** The job columns, checked, in a fresh object (so no getter can change them after the check). */
function checkJobs(jobs, checkExpected) {
  if (jobs === null || typeof jobs !== 'object') throw new TypeError(`jobs must be an object of job columns (got ${describe(jobs)})`);
  const { ops } = jobs;
  if (!(ops instanceof Uint8Array)) throw new TypeError(`jobs.ops must be a Uint8Array (got ${describeColumn(ops)})`);
  const n = ops.length;
  const checked = { ops };
  for (const name of ['srcs', 'dsts']) {
    checkColumn(name, jobs[name], Array, n, `an array of ${n} strings`);
    checked[name] = jobs[name].slice();
  }
  for (const [name, type] of NUMBER_COLUMNS) {
    checkColumn(name, jobs[name], type, n, `a ${type.name} of ${n} numbers`);
    checked[name] = jobs[name];
  }
  if (jobs.expected !== undefined || checkExpected) {
    const what = `a Buffer of ${32 * n} bytes (32 per job)`;
    if (!(jobs.expected instanceof Uint8Array)) throw new TypeError(`jobs.expected must be ${what} (got ${describeColumn(jobs.expected)})`);
    if (jobs.expected.length !== 32 * n) throw new RangeError(`jobs.expected must be ${what} (got ${describeColumn(jobs.expected)})`);
    checked.expected = jobs.expected;
  }
  const { srcs, dsts, offsets, lengths } = checked;
  for (let i = 0; i < n; i++) {
    const op = ops[i];
    if (op < JOB_CLONE || op > JOB_HASH) {
      throw new RangeError(`jobs.ops[${i}] must be 1 (clone), 2 (pack), 3 (extract) or 4 (hash) (got ${op})`);
    }
    // The names are built only for a message: per job they would cost more than the check.
    if (!isPath(srcs[i])) checkPath(`jobs.srcs[${i}]`, srcs[i]);
    if (op === JOB_CLONE || op === JOB_EXTRACT) {
      if (!isPath(dsts[i])) checkPath(`jobs.dsts[${i}]`, dsts[i]);
      checkJobTime('atime', checked.atimeSec, checked.atimeNsec, i);
      checkJobTime('mtime', checked.mtimeSec, checked.mtimeNsec, i);
    } else if (typeof dsts[i] !== 'string' || dsts[i].includes('\0')) {
      throw new TypeError(`jobs.dsts[${i}] must be a string without NUL bytes (got ${describe(dsts[i])})`);
    }
    if (op === JOB_EXTRACT || op === JOB_HASH) {
      if (!Number.isSafeInteger(offsets[i]) || offsets[i] < 0) {
        throw new RangeError(`jobs.offsets[${i}] must be a non-negative integer (got ${describe(offsets[i])})`);
      }
      // HASH takes a negative length for "the whole file".
      if (!Number.isSafeInteger(lengths[i]) || (op === JOB_EXTRACT && lengths[i] < 0)) {
        const what = op === JOB_EXTRACT ? 'a non-negative integer' : 'an integer (negative: the whole file)';
        throw new RangeError(`jobs.lengths[${i}] must be ${what} (got ${describe(lengths[i])})`);
      }
    }
  }
  return checked;
}

function checkIntegerOption(options, name, min, max, fallback) {
  const value = options[name] === undefined ? fallback : options[name];
  if (!Number.isInteger(value) || value < min || value > max) {
    const ErrorType = typeof value === 'number' ? RangeError : TypeError;
    throw new ErrorType(`options.${name} must be an integer from ${min} to ${max} (got ${describe(value)})`);
  }
  return value;
}

function checkBooleanOption(options, name) {
  const value = options[name] === undefined ? false : options[name];
  if (typeof value !== 'boolean') throw new TypeError(`options.${name} must be a boolean (got ${describe(value)})`);
  return value;
}

// With options.sourceRoot, the sources of clone, pack and hash jobs are
// paths relative to it, opened beneath it without following any link.
function checkSourceRoot(options, checked) {
  const root = options.sourceRoot === undefined ? '' : options.sourceRoot;
  if (typeof root !== 'string' || root.includes('\0')) throw new TypeError(`options.sourceRoot must be a string without NUL bytes (got ${describe(root)})`);
  if (root === '') return root;
  checked.srcs.forEach((src, i) => {
    if (checked.ops[i] !== JOB_EXTRACT && (src === '' || src.startsWith('/'))) {
      throw new RangeError(`jobs.srcs[${i}] must be a path relative to options.sourceRoot (got ${describe(src)})`);
    }
  });
  return root;
}

/**
 * Runs file jobs (clone, pack, extract, hash; all columns of one entry per
 * job) on `options.threads` threads of their own. A job that fails records
 * errnos/codes/syscalls[i] and the others go on; only a failure of the run
 * itself (the pack cannot be opened, no thread starts) rejects, with a
 * node:fs-shaped error.
 * @param {{ ops: Uint8Array, srcs: string[], dsts: string[], offsets: Float64Array, lengths: Float64Array,
 *   modes: Uint32Array, atimeSec: Float64Array, atimeNsec: Uint32Array, mtimeSec: Float64Array,
 *   mtimeNsec: Uint32Array, expected?: Uint8Array }} jobs expected: 32 bytes per job, needed with
 *   options.checkExpected
 * @param {{ threads?: number, reflink?: boolean, copyFileRange?: boolean, hash?: boolean,
 *   checkExpected?: boolean, packPath?: string, packOffset?: number, retries?: number,
 *   sourceRoot?: string }} [options] sourceRoot: srcs of clone, pack and hash jobs are relative to
 *   it and opened beneath it, following no symbolic link (ELOOP/EXDEV otherwise)
 * @param {(doneJobs: number, totalJobs: number, doneBytes: number) => void} [onProgress] at most
 *   every 50 ms, and once at the end before the promise resolves; what it throws is ignored
 * @returns {Promise<{ engines: Uint8Array, flags: Uint8Array, sizes: Float64Array, offsets: Float64Array,
 *   hashes: Buffer, errnos: Int32Array, codes: string[], syscalls: string[], errorOnDst: Uint8Array,
 *   fallbackErrnos: Int32Array, devs: BigUint64Array, inos: BigUint64Array, mtimeSec: Float64Array,
 *   mtimeNsec: Uint32Array, ctimeSec: Float64Array, ctimeNsec: Uint32Array, packEnd: number,
 *   bytes: number }>} errorOnDst[i] is 1 when the failed call was on dsts[i] (or the pack), 0 on srcs[i]
 */
export function runFileJobs(jobs, options = {}, onProgress = undefined) {
  if (options === null || typeof options !== 'object') throw new TypeError(`options must be an object (got ${describe(options)})`);
  const checkExpected = checkBooleanOption(options, 'checkExpected');
  const checked = checkJobs(jobs, checkExpected);
  const packPath = options.packPath === undefined ? '' : options.packPath;
  if (typeof packPath !== 'string' || packPath.includes('\0')) {
    throw new TypeError(`options.packPath must be a string without NUL bytes (got ${describe(packPath)})`);
  }
  if (packPath === '' && checked.ops.includes(JOB_PACK)) {
    throw new TypeError(`options.packPath must be a non-empty string without NUL bytes when jobs include op 2 (pack) (got "")`);
  }
  const packOffset = options.packOffset === undefined ? 0 : options.packOffset;
  if (!Number.isSafeInteger(packOffset) || packOffset < 0) {
    throw new RangeError(`options.packOffset must be a safe non-negative integer (got ${describe(packOffset)})`);
  }
  const checkedOptions = {
    threads: checkIntegerOption(options, 'threads', 1, 64, 2),
    reflink: checkBooleanOption(options, 'reflink'),
    copyFileRange: checkBooleanOption(options, 'copyFileRange'),
    hash: checkBooleanOption(options, 'hash'),
    checkExpected,
    packPath,
    packOffset,
    retries: checkIntegerOption(options, 'retries', 0, 10, 2),
    sourceRoot: checkSourceRoot(options, checked),
  };
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new TypeError(`onProgress must be a function (got ${describe(onProgress)})`);
  }
  return requireNative('runFileJobs()').runFileJobs(checked, checkedOptions, onProgress);
}

/**
 * Swaps the paths `a` and `b` atomically (renameat2 RENAME_EXCHANGE). Throws
 * a node:fs-shaped error (syscall 'renameat2', path a, dest b); EINVAL,
 * ENOSYS or EOPNOTSUPP mean the filesystem or kernel cannot exchange.
 */
export function exchangePaths(a, b) {
  checkPath('a', a);
  checkPath('b', b);
  requireNative('exchangePaths()').exchangePaths(a, b);
}

/**
 * Renames `a` to `b` unless `b` exists: true when renamed, false when `b`
 * exists (renameat2 RENAME_NOREPLACE, or link + unlink where that is not
 * supported). Other failures throw node:fs-shaped errors.
 */
export function renameNoReplace(a, b) {
  checkPath('a', a);
  checkPath('b', b);
  return requireNative('renameNoReplace()').renameNoReplace(a, b);
}

/**
 * Whether files in `dir` can be reflinked (FICLONE between two probe files
 * made and removed there): { supported, code }, code the errno name when
 * not. Throws a node:fs-shaped error when the probe files cannot be made.
 */
export function probeReflink(dir) {
  checkPath('dir', dir);
  return requireNative('probeReflink()').probeReflink(dir);
}

/** syncfs(2) on the filesystem holding the directory `path`, off the event loop: Promise<void>. */
export function syncFilesystem(path) {
  checkPath('path', path);
  return requireNative('syncFilesystem()').syncFilesystem(path);
}

// The clone engine as the workspace uses it: columnar job lists for the
// native runner (src/native/file_jobs.cc), the per-run choice of engine, and
// building a tree (directories, files, links, then directory modes and
// times, deepest first) from a list of entries.
import { chmodSync, lutimesSync, mkdirSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { errnoName, systemError } from '../fs-compat/fs-errors.js';
import { requireNative } from '../native/addon.js';
import { probeReflink } from '../native/dir-exchange.js';
import { runFileJobs } from '../native/file-jobs.js';
import * as treeScan from '../native/tree-scan.js';

export const ENGINE_NAMES = [null, 'reflink', 'copy_file_range', 'copy', 'pack'];

/** The engines an operation may be asked for (see chooseEngine). */
const ENGINE_CHOICES = ['auto', 'reflink', 'copy'];

/** Throws a RangeError unless `engine` is one of the engine choices. */
export function checkEngine(engine, name) {
  if (!ENGINE_CHOICES.includes(engine)) throw new RangeError(`${name} must be 'auto', 'reflink' or 'copy' (got ${describe(engine)})`);
}

/**
 * Progress of a snapshot operation's file jobs: `phase` names the operation
 * ('snapshot', 'verify', ...), `done` of `total` jobs, `bytes` so far.
 * @typedef {(progress: { phase: string, done: number, total: number, bytes: number }) => void} OnProgress
 */

/** A list of file jobs built row by row and handed to the native runner as columns. */
export class JobList {
  constructor() {
    this.ops = [];
    this.srcs = [];
    this.dsts = [];
    this.offsets = [];
    this.lengths = [];
    this.modes = [];
    this.times = [];
    this.expected = [];
  }

  get length() {
    return this.ops.length;
  }

  /**
   * Adds a job; `time` is [sec, nsec] (atime and mtime alike), `expected` a hex SHA-256 or undefined.
   * Returns the job's index.
   * @param {number} op JOB_CLONE, JOB_PACK, JOB_EXTRACT or JOB_HASH
   * @param {string} src
   * @param {string} [dst]
   * @param {{ offset?: number, length?: number, mode?: number, time?: number[], expected?: string }} [options]
   * @returns {number}
   */
  push(op, src, dst = '', { offset = 0, length = -1, mode = 0o600, time = [0, 0], expected } = {}) {
    this.ops.push(op);
    this.srcs.push(src);
    this.dsts.push(dst);
    this.offsets.push(offset);
    this.lengths.push(length);
    this.modes.push(mode);
    this.times.push(time);
    this.expected.push(expected);
    return this.ops.length - 1;
  }

  columns() {
    const n = this.ops.length;
    const seconds = Float64Array.from(this.times, (t) => t[0]);
    const nanoseconds = Uint32Array.from(this.times, (t) => t[1]);
    const expected = Buffer.alloc(32 * n);
    this.expected.forEach((hex, i) => hex !== undefined && expected.write(hex, 32 * i, 'hex'));
    return {
      ops: Uint8Array.from(this.ops),
      srcs: this.srcs,
      dsts: this.dsts,
      offsets: Float64Array.from(this.offsets),
      lengths: Float64Array.from(this.lengths),
      modes: Uint32Array.from(this.modes),
      atimeSec: seconds,
      atimeNsec: nanoseconds,
      mtimeSec: seconds,
      mtimeNsec: nanoseconds,
      expected,
    };
  }

  /**
   * Runs the jobs; resolves to the native results (see lib/native/file-jobs.js
   * runFileJobs), or null when there are none. `onProgress` (or null) gets { phase, done, total, bytes }.
   * @param {Parameters<typeof runFileJobs>[1]} options
   * @param {OnProgress | null} [onProgress]
   * @param {string} [phase]
   */
  run(options, onProgress = null, phase = '') {
    const report = onProgress && ((done, total, bytes) => onProgress({ phase, done, total, bytes }));
    if (this.length === 0) {
      report?.(0, 0, 0);
      return Promise.resolve(null);
    }
    return runFileJobs(this.columns(), options, report ?? undefined).catch((cause) => {
      // The run itself failed (the source root or the pack could not be opened, no thread started).
      throw osError(`${phase || 'file jobs'} failed: ${cause.message}`, cause, cause.path);
    });
  }
}

/** The hex SHA-256 of job `i`'s content. */
export const hashOf = (results, i) => results.hashes.toString('hex', 32 * i, 32 * i + 32);

/** The failure of job `i` as { code, errno, syscall }, or null. */
export const failureOf = (results, i) =>
  results.errnos[i] === 0 ? null : { code: results.codes[i], errno: results.errnos[i], syscall: results.syscalls[i] };

/**
 * How files will be cloned from `sourceDir` into `targetDir`: a strict probe
 * of FICLONE on the target filesystem (kept apart from the per-file
 * fallback, so one file's failure never turns reflink off for the run, and
 * never hides that it works). engine 'reflink' insists on it; 'copy' never
 * shares extents (copy_file_range may, on XFS and Btrfs).
 */
export function chooseEngine(engine, sourceDir, targetDir) {
  requireNative('workspace snapshots');
  let reflinkSupported = false;
  if (engine !== 'copy') {
    const probe = probeReflink(targetDir);
    const sameFilesystem = statSync(sourceDir).dev === statSync(targetDir).dev;
    reflinkSupported = probe.supported && sameFilesystem;
    const probeCode = probe.supported ? (sameFilesystem ? null : 'EXDEV') : probe.code;
    if (engine === 'reflink' && !reflinkSupported) {
      throw new ArenaCacheError(
        codes.ERR_REFLINK_UNSUPPORTED,
        `engine 'reflink' needs a filesystem that clones extents (XFS with reflink=1, Btrfs) holding both ${sourceDir} and ${targetDir}; FICLONE failed with ${probeCode}`,
      );
    }
  }
  return { requested: engine, reflinkSupported, runOptions: { reflink: reflinkSupported, copyFileRange: engine !== 'copy' } };
}

/**
 * Tallies the engines the native runner used: counts per engine, the
 * weakest clone engine used (never claiming reflink if any file was
 * copied), and `degraded` when reflink worked in the probe but some file
 * still fell back, with the first few of those files and why.
 */
export class EngineTally {
  constructor(choice) {
    this.choice = choice;
    this.counts = { reflink: 0, copy_file_range: 0, copy: 0, pack: 0, reused: 0 };
    this.fallbacks = [];
    this.fallbackCount = 0;
  }

  add(results, i, where) {
    const engine = ENGINE_NAMES[results.engines[i]];
    this.counts[engine]++;
    if (this.choice.reflinkSupported && engine !== 'reflink' && engine !== 'pack') {
      this.fallbackCount++;
      if (this.fallbacks.length < 20) this.fallbacks.push({ path: where, engine, code: fallbackCode(results.fallbackErrnos[i]) });
    }
    return engine;
  }

  summary() {
    let used = 'none';
    for (const engine of ['reflink', 'copy_file_range', 'copy']) if (this.counts[engine] > 0) used = engine;
    if (used === 'none' && this.counts.pack > 0) used = 'pack';
    return {
      requested: this.choice.requested,
      used,
      reflinkSupported: this.choice.reflinkSupported,
      degraded: this.fallbackCount > 0,
      counts: { ...this.counts },
      fallbacks: this.fallbacks,
    };
  }
}

/** Why a file fell back from reflink: its errno's name, or null for none (0). */
function fallbackCode(errno) {
  return errno === 0 ? null : errnoName(errno);
}

/**
 * A file that could not be read or written: errno positive.
 * @typedef {{ path: string, code: string, errno: number, syscall: string }} JobFailure
 */


/**
 * ERR_SNAPSHOT_IO for files that could not be read or written: `failures`
 * are [{ path, code, errno, syscall }]; the first one's OS error is the cause.
 */
export function ioError(what, failures, verb = 'failed') {
  const [first] = failures;
  /** @type {ArenaCacheError & { failures?: JobFailure[] }} */
  const error = new ArenaCacheError(codes.ERR_SNAPSHOT_IO, `${what}: ${failures.length} file(s) ${verb}, first ${first.path} (${first.code} in ${first.syscall})`, {
    cause: systemError(first.code, first.errno, first.syscall, first.path),
  });
  error.failures = failures;
  return error;
}

// What the scan meets when an entry it has just listed (by lstat) is
// replaced before it is read: a directory by a link or a file (ENOTDIR,
// ELOOP, or EXDEV from the walk beneath the root), a link by something else
// (EINVAL from readlink).
const REPLACED_CODES = new Set(['ENOTDIR', 'ELOOP', 'EXDEV', 'EINVAL']);

/**
 * treeScan.scanTree(root, exclude), failing with ERR_SNAPSHOT_IO (the OS
 * error as its cause, the path relative to `root` in the message and in
 * error.failures, or whole if it is root) where the tree cannot be read, as a job failure does,
 * rather than with the scan's node:fs-shaped error.
 */
export async function scanTree(what, root, exclude) {
  try {
    return await treeScan.scanTree(root, exclude);
  } catch (cause) {
    if (typeof cause?.syscall !== 'string') throw cause;
    const where = typeof cause.path === 'string' ? path.relative(root, cause.path) || cause.path : root;
    const replaced = where !== cause.path && !where.startsWith('..') && REPLACED_CODES.has(cause.code);
    throw osError(`${what}: could not read ${where} (${cause.code} in ${cause.syscall})${replaced ? '; it was replaced while the tree was being read' : ''}`, cause, where);
  }
}

/** ERR_SNAPSHOT_IO for one node:fs-shaped error (`cause`) at `where`; anything else (a TypeError of a bad argument) is rethrown as it is. */
function osError(message, cause, where) {
  if (typeof cause?.syscall !== 'string' || typeof cause.code !== 'string') return cause;
  /** @type {ArenaCacheError & { failures?: JobFailure[] }} */
  const error = new ArenaCacheError(codes.ERR_SNAPSHOT_IO, message, { cause });
  error.failures = [{ path: where, code: cause.code, errno: -cause.errno, syscall: cause.syscall }];
  return error;
}

/**
 * Throws ERR_SNAPSHOT_IO for a name that did not come through as UTF-8: the
 * scan decodes names as UTF-8, so such a name would be stored as another
 * (and two of them could collide).
 */
export function checkNames(paths, operation) {
  const bad = paths.find((where) => where.includes('\uFFFD'));
  if (bad !== undefined) {
    throw new ArenaCacheError(codes.ERR_SNAPSHOT_IO, `cannot ${operation} ${JSON.stringify(bad)}: file names must be valid UTF-8 (without U+FFFD)`);
  }
}

/**
 * Builds the tree `entries` describes inside the empty directory `root`.
 * Each entry is { path, type: 'd'|'f'|'l', mode, time: [sec, nsec], target }
 * and, for files, `job(list, destination)` adds the job that makes it.
 * Directories are made writable first and given their own mode and time
 * last, deepest first, so that making their contents does not change them;
 * `top` ({ mode, time }) is the root's own, set last of all. Resolves to the
 * native results and the job index of every file entry.
 */
export async function buildTree(root, entries, { top, runOptions, onProgress, phase }) {
  const jobs = new JobList();
  const jobOf = new Map();
  const directories = [];
  const links = [];
  for (const entry of entries) {
    const destination = path.join(root, entry.path);
    if (entry.type === 'd') {
      mkdirSync(destination, { mode: 0o700 });
      directories.push([destination, entry]);
    } else if (entry.type === 'l') {
      symlinkSync(entry.target, destination);
      links.push([destination, entry]);
    } else {
      jobOf.set(entry, entry.job(jobs, destination));
    }
  }
  const results = await jobs.run(runOptions, onProgress, phase);
  for (const [destination, entry] of links) lutimesSync(destination, ...times(entry.time));
  directories.unshift([root, top]); // last: its contents are all made
  for (let i = directories.length - 1; i >= 0; i--) {
    const [destination, entry] = directories[i];
    chmodSync(destination, entry.mode);
    utimesSync(destination, ...times(entry.time));
  }
  return { results, jobOf };
}

/** @type {(time: number[]) => [number, number]} [sec, nsec] as the seconds utimes takes, for atime and mtime */
const times = ([sec, nsec]) => {
  const value = sec + nsec / 1e9;
  return [value, value];
};

// The file-job engine of workspace snapshots (src/native/file_jobs.h):
// clones, packs, extractions and hashes of many files in one call, on
// threads of its own, jobs and results as columns. A failure of the run
// itself is shaped like node:fs's errors: code, errno, syscall and path.

import { describe } from '../errors.js';
import { requireNative } from './addon.js';
import { checkBoolean, checkFunction, checkPath, isPath } from '../validate.js';

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

/**
 * describe(), with the length of an array or typed array (what a column check complains about).
 * @param {unknown} value
 */
function describeColumn(value) {
  return ArrayBuffer.isView(value) ? `a ${value.constructor.name} of length ${/** @type {NodeJS.TypedArray} */ (value).length}` : describe(value);
}

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
    if (!isPath(srcs[i])) checkPath(srcs[i], `jobs.srcs[${i}]`);
    if (op === JOB_CLONE || op === JOB_EXTRACT) {
      if (!isPath(dsts[i])) checkPath(dsts[i], `jobs.dsts[${i}]`);
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
  checkBoolean(value, `options.${name}`);
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
  if (onProgress !== undefined) checkFunction(onProgress, 'onProgress');
  return requireNative('runFileJobs()').runFileJobs(checked, checkedOptions, onProgress);
}

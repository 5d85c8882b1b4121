// Warming: reading files into the cache ahead of use, in the background.
//
// A WarmJob reads its files through the CacheFS (so they land in the shared
// cache exactly as a readFile() would put them), at most `concurrency` at a
// time, and reports each one as a 'progress' event. A file that cannot be
// read (gone, a directory, outside the root) is a 'failed' event, not the
// end of the job. An AbortSignal cancels the files not yet started.
// `job.finished` resolves with the summary once every file is done.

import { EventEmitter } from 'node:events';
import * as fsp from 'node:fs/promises';
import { minimatch } from 'minimatch';
import { describe } from '../errors.js';
import { checkInteger, checkObject, rejectUnknown } from '../validate.js';

export const WARM_DEFAULTS = Object.freeze({
  /** Files read at the same time. */
  concurrency: 4,
  /** Cancels the files not yet started. */
  signal: undefined,
});

/** Validated { concurrency, signal } for the warming calls (`extra`: the caller's own option names). */
export function warmOptions(options, extra = {}) {
  if (options === undefined) return { ...WARM_DEFAULTS };
  checkObject(options, 'options');
  rejectUnknown(options, { ...WARM_DEFAULTS, ...extra }, 'options');
  const concurrency = options.concurrency ?? WARM_DEFAULTS.concurrency;
  if (typeof concurrency !== 'number') throw new TypeError(`options.concurrency must be a number (got ${describe(concurrency)})`);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 256) {
    throw new RangeError(`options.concurrency must be an integer from 1 to 256 (got ${describe(concurrency)})`);
  }
  const signal = options.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError(`options.signal must be an AbortSignal (got ${describe(signal)})`);
  return { concurrency, signal };
}

/** warmOptions() of CacheFS#warmDir(), with its `recursive` and `pattern`. */
export function warmDirOptions(options) {
  const { recursive = false, pattern } = options ?? {};
  const settings = warmOptions(options, { recursive: false, pattern: undefined });
  if (typeof recursive !== 'boolean') throw new TypeError(`options.recursive must be a boolean (got ${describe(recursive)})`);
  if (pattern !== undefined && typeof pattern !== 'string') throw new TypeError(`options.pattern must be a glob string such as '**/*.css' (got ${describe(pattern)})`);
  return { ...settings, recursive, pattern };
}

/** warmOptions() of CacheFS#warmFromStats(), with its `limit`. */
export function warmFromStatsOptions(options) {
  const settings = warmOptions(options, { limit: 1000 });
  const limit = options?.limit ?? 1000;
  checkInteger(limit, 'options.limit', 1, 10_000_000, 'an integer from 1 to 10000000');
  return { ...settings, limit };
}

/**
 * The files of directory `dirKey` (with `recursive`, of its subdirectories
 * too) whose path relative to it matches `pattern` if one is given, listed
 * through `files` (a CacheFS), in name order.
 * @param {{ readdir(path: string): Promise<string[]>, stat(path: string): Promise<{ isFile(): boolean, isDirectory(): boolean }> }} files
 * @param {string} dirKey
 * @param {boolean} recursive
 * @param {string | undefined} pattern
 */
export async function listFiles(files, dirKey, recursive, pattern) {
  const found = [];
  const walk = async (key) => {
    for (const name of (await files.readdir(key)).sort()) {
      const child = key === '' ? name : `${key}/${name}`;
      const stats = await files.stat(child);
      if (stats.isDirectory()) {
        if (recursive) await walk(child);
      } else if (stats.isFile()) {
        const relative = dirKey === '' ? child : child.slice(dirKey.length + 1);
        if (pattern === undefined || minimatch(relative, pattern, { dot: true })) found.push(child);
      }
    }
  };
  await walk(dirKey);
  return found;
}

/** The paths named in the text file `listFile`: one a line, without empty lines and lines starting with #. */
export async function readPathList(listFile) {
  const text = await fsp.readFile(listFile, 'utf8');
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

export class WarmJob extends EventEmitter {
  /**
   * @param {(path: string) => Buffer | Promise<Buffer>} read reads one file into the cache (a cache hit: at once)
   * @param {Promise<string[]> | string[]} paths
   * @param {{ concurrency: number, signal?: AbortSignal }} options
   */
  constructor(read, paths, { concurrency, signal }) {
    super();
    this.summary = { total: 0, warmed: 0, failed: 0, skipped: 0, bytes: 0, cancelled: false };
    /** Resolves with the summary when every file is warmed, failed or skipped. */
    this.finished = this.#run(read, paths, concurrency, signal);
    // The job reports through events; an unobserved finished promise must not reject.
    this.finished.catch(() => {});
  }

  async #run(read, paths, concurrency, signal) {
    // Let the caller attach listeners before the first event.
    await null;
    const list = await paths;
    const summary = this.summary;
    summary.total = list.length;
    let next = 0;
    const worker = async () => {
      while (next < list.length) {
        if (signal?.aborted) {
          summary.cancelled = true;
          summary.skipped += list.length - next;
          next = list.length;
          return;
        }
        const path = list[next++];
        try {
          const bytes = await read(path);
          summary.warmed++;
          summary.bytes += bytes.length;
          this.emit('progress', { path, bytes: bytes.length, done: summary.warmed + summary.failed, total: summary.total });
        } catch (error) {
          summary.failed++;
          this.emit('failed', { path, error, done: summary.warmed + summary.failed, total: summary.total });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, worker));
    return { ...summary };
  }
}

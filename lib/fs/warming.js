// Warming: reading files into the cache ahead of use, in the background.
//
// A WarmJob reads its files through the CacheFS (so they land in the shared
// cache exactly as a readFile() would put them), at most `concurrency` at a
// time, and reports each one as a 'progress' event. A file that cannot be
// read (gone, a directory, outside the root) is a 'failed' event, not the
// end of the job. An AbortSignal cancels the files not yet started.
// `job.finished` resolves with the summary once every file is done.

import { EventEmitter } from 'node:events';
import { describe } from '../errors.js';
import { checkObject, rejectUnknown } from '../cache/options.js';

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

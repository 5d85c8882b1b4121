// Flushing for CacheFS write-back: writing a root's dirty files from the
// block store (write-back.js) to disk, and when that happens.
//
// In write-back mode a background flush runs every flushIntervalMs, and a
// last one at process exit unless close() came first (close() stops them,
// then flushes itself). Any CacheFS with the store flushes on demand too:
// flush(), and before an operation that touches a dirty file on disk. A file
// that cannot be written stays dirty for the next flush; each failure is a
// 'flushError' event, or without a listener one process warning per path
// until it is written.

import * as fs from 'node:fs';
import { ArenaCacheError, codes } from '../errors.js';
import { cancelAtExit, runAtExit } from './exit-work.js';

function flushFailed(failures) {
  const shown = failures
    .slice(0, 3)
    .map(({ path: p, error }) => `${p} (${error.code ?? error.message})`)
    .join(', ');
  const more = failures.length > 3 ? ` and ${failures.length - 3} more` : '';
  /** @type {ArenaCacheError & { failures?: { path: string, error: NodeJS.ErrnoException }[] }} */
  const error = new ArenaCacheError(
    codes.ERR_FLUSH_FAILED,
    `${failures.length} dirty file(s) could not be written to disk and stay dirty, to be retried: ${shown}${more}`,
    { cause: failures[0].error },
  );
  error.failures = failures;
  return error;
}

export class Flusher {
  #writeBack;
  #events;
  #counters;
  #flushed;
  #timer = null;
  /** The running background flush, or null. */
  #running = null;
  #exitWork = null;
  /** Paths whose failed flush was reported by a process warning (no 'flushError' listener): once each until it succeeds. */
  #warned = new Set();

  /**
   * @param {import('./write-back.js').WriteBack} writeBack the root's dirty files
   * @param {object} options
   * @param {boolean} options.background whether to flush every `intervalMs` and at process exit (write-back mode)
   * @param {number} options.intervalMs 0: no background flush but the one at exit
   * @param {import('node:events').EventEmitter} options.events emits the 'flushError' events (the CacheFS)
   * @param {{ flushErrors: number }} options.counters the CacheFS's counters
   * @param {(key: string, stats: object, content: Buffer) => void} options.flushed runs under the file's lock once `key` is written, with the disk's stats: caches what was written
   */
  constructor(writeBack, { background, intervalMs, events, counters, flushed }) {
    this.#writeBack = writeBack;
    this.#events = events;
    this.#counters = counters;
    this.#flushed = flushed;
    if (background && intervalMs > 0) {
      this.#timer = setInterval(() => this.#backgroundFlush(), intervalMs);
      this.#timer.unref();
    }
    if (background) {
      this.#exitWork = () => this.#atExit();
      runAtExit(this.#exitWork);
    }
  }

  /**
   * Flushes `keys` (by default every dirty file of the root), one at a time;
   * resolves to how many were dirty. Those that fail stay dirty, are
   * reported, and reject the call with ERR_FLUSH_FAILED once the others are done.
   * @param {string[]} [keys]
   */
  async flush(keys = this.#writeBack.dirtyKeys()) {
    let flushed = 0;
    const failures = [];
    for (const key of keys) {
      try {
        if (this.flushKey(key)) flushed++;
        this.#warned.delete(key);
      } catch (error) {
        failures.push({ path: key, error });
        this.#reportFlushError(key, error);
      }
      // One file at a time is written synchronously (under its lock): let other work run in between.
      await new Promise(setImmediate);
    }
    if (failures.length > 0) throw flushFailed(failures);
    return flushed;
  }

  /** Writes `key` to disk if it is dirty (synchronously, under its lock) and caches what was written; returns whether it was dirty. */
  flushKey(key) {
    const writeBack = this.#writeBack;
    if (!writeBack.anyDirty()) return false;
    // The backing writes beneath the root: a symbolic link put in the way since cannot lead the write out.
    return writeBack.flush(key, (stats, content) => this.#flushed(key, stats, content));
  }

  /** Flushes dirty `key` and every dirty file under it (before a structure change moves or removes them on disk). */
  flushUnder(key) {
    const writeBack = this.#writeBack;
    if (!writeBack.anyDirty()) return;
    this.flushKey(key);
    const prefix = key === '' ? '' : `${key}/`;
    for (const dirty of writeBack.dirtyKeys()) if (dirty.startsWith(prefix)) this.flushKey(dirty);
  }

  /**
   * Ends the background flushes (the timer, the one at exit) and waits for
   * one that is running: what close() does first, before its own flush.
   */
  async stop() {
    clearInterval(this.#timer);
    cancelAtExit(this.#exitWork);
    if (this.#running !== null) await this.#running;
  }

  #reportFlushError(key, error) {
    this.#counters.flushErrors++;
    if (this.#events.listenerCount('flushError') > 0) {
      this.#events.emit('flushError', { path: key, error });
    } else if (!this.#warned.has(key)) {
      this.#warned.add(key);
      process.emitWarning(`CacheFS could not write ${key} to disk (${error.message}); it stays dirty and is retried`, { code: 'ARENACACHE_FLUSH_FAILED' });
    }
  }

  #backgroundFlush() {
    if (this.#running !== null || !this.#writeBack.anyDirty()) return;
    // Failures were reported as they happened ('flushError'); the files stay dirty for the next round.
    this.#running = this.flush()
      .catch(() => {})
      .finally(() => {
        this.#running = null;
      });
  }

  /** At process exit: only synchronous work runs now. */
  #atExit() {
    for (const key of this.#writeBack.dirtyKeys()) {
      try {
        this.flushKey(key);
      } catch (error) {
        this.#counters.flushErrors++;
        fs.writeSync(2, `arenacache: CacheFS could not write ${key} to disk at exit (${error.message}); it stays dirty in the block store\n`);
      }
    }
  }
}

// Per-path read counts of a CacheFS, persisted so that the next run can warm
// the files the last one read most (CacheFS#warmFromStats).
//
// The file is JSON: { version, root, savedAt, files: [[path, reads], ...] },
// most-read first, written to a temporary name and renamed, so a reader
// never sees half of it.

import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { ArenaCacheError, codes } from '../errors.js';

const VERSION = 1;

function temporaryName(path) {
  return `${path}.${randomBytes(8).toString('hex')}.tmp`;
}

/** `access`, the access statistics of a CacheFS; ERR_ACCESS_STATS for `method` when it has none (null). */
export function requireAccessStats(access, method) {
  if (access === null) {
    throw new ArenaCacheError(codes.ERR_ACCESS_STATS, `${method}() needs access statistics: give new CacheFS() options.accessStatsPath`);
  }
  return access;
}

export class AccessStats {
  #path;
  #root;
  #limit;
  #counts = new Map();

  /**
   * @param {string} path the statistics file
   * @param {string} root the CacheFS root (recorded, and checked on load)
   * @param {number} limit paths kept, most-read first
   */
  constructor(path, root, limit) {
    this.#path = path;
    this.#root = root;
    this.#limit = limit;
  }

  get path() {
    return this.#path;
  }

  record(key) {
    const counts = this.#counts;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    // Bounded: past twice the limit, keep the most-read half.
    if (counts.size > 2 * this.#limit) this.#counts = new Map(this.#top());
  }

  #top() {
    return [...this.#counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, this.#limit);
  }

  #text() {
    return `${JSON.stringify({ version: VERSION, root: this.#root, savedAt: new Date().toISOString(), files: this.#top() })}\n`;
  }

  // The temporary file has a random name and is made new ('wx': O_EXCL, which
  // never follows a link), so a link planted where it will be cannot lead the
  // write elsewhere; the rename replaces a link at the path itself, never
  // writing through it. 0o600: which files were read is this user's business.
  async save() {
    const temporary = temporaryName(this.#path);
    try {
      await fsp.writeFile(temporary, this.#text(), { flag: 'wx', mode: 0o600 });
      await fsp.rename(temporary, this.#path);
    } catch (error) {
      await fsp.rm(temporary, { force: true });
      throw error;
    }
  }

  saveSync() {
    const temporary = temporaryName(this.#path);
    try {
      fs.writeFileSync(temporary, this.#text(), { flag: 'wx', mode: 0o600 });
      fs.renameSync(temporary, this.#path);
    } catch (error) {
      fs.rmSync(temporary, { force: true });
      throw error;
    }
  }

  /** saveSync() at process exit: a failure is told on stderr, where nothing else can report it. */
  saveAtExit() {
    try {
      this.saveSync();
    } catch (error) {
      fs.writeSync(2, `arenacache: CacheFS could not save its access statistics at exit (${error.message})\n`);
    }
  }

  /**
   * The most-read paths of the run that saved `path` (at most `limit`);
   * none when there is no such file yet.
   */
  static async load(path, root, limit) {
    let text;
    try {
      text = await fsp.readFile(path, 'utf8');
    } catch (cause) {
      if (cause.code === 'ENOENT') return [];
      throw new ArenaCacheError(codes.ERR_ACCESS_STATS, `access statistics ${path} could not be read: ${cause.message}`, { cause });
    }
    let saved;
    try {
      saved = JSON.parse(text);
    } catch (cause) {
      throw new ArenaCacheError(codes.ERR_ACCESS_STATS, `access statistics ${path} are not valid JSON: ${cause.message}`, { cause });
    }
    if (saved?.version !== VERSION || !Array.isArray(saved.files) || !saved.files.every((entry) => Array.isArray(entry) && typeof entry[0] === 'string')) {
      throw new ArenaCacheError(codes.ERR_ACCESS_STATS, `access statistics ${path} are not in the format of this version (version ${VERSION}, files: [[path, reads]])`);
    }
    if (saved.root !== root) {
      throw new ArenaCacheError(codes.ERR_ACCESS_STATS, `access statistics ${path} were saved for root ${saved.root}, not ${root}`);
    }
    return saved.files.slice(0, limit).map(([p]) => p);
  }
}

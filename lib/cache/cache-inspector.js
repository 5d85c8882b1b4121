// CacheInspector: SharedCache.inspect(path), a cache file read without
// being opened as a cache. What `arenacache cache stats|keys|verify` use.
//
// SharedCache.open() makes the caller one more process using the file:
// when no other process has it open, the opener's recovery runs first (it
// repairs what verify() would report, and writes to the file), it claims a
// thread slot, and every get counts and raises frequencies. The inspector
// does none of that (see arena/common/file.js inspectArenaFile and
// arena/entries/inspector.js): the file is opened O_RDONLY and mapped
// PROT_READ, no lock is taken, no byte is written. What it reports is the
// file as it found it: verify() the damage itself, stats() the counters of
// the threads that used it (`threads`: those alive now, never the
// inspector), keys() and entries() what the shards hold.
//
// Values need no codec: strings and Buffers are stored as they are; a
// value of the default codec is decoded with the file's own structures;
// one of another codec is handed back as its encoded bytes with the
// codec's name, unless options.codec names that codec (then decoded).

import { ArenaCacheError, codes, describe } from '../errors.js';
import { checkObject, rejectUnknown } from '../validate.js';
import { ArenaInspector } from '../arena/entries/inspector.js';
import { MAGIC } from '../arena/common/layout.js';
import { inspectArenaFile } from '../arena/common/file.js';
import { checkArenaPath } from '../arena/common/file-backing.js';
import { KEY_STRING, VALUE_CODEC, VALUE_NUMBER, VALUE_UTF8 } from '../arena/entries/record.js';
import { mappingRelease } from '../native/mapped-file.js';
import { cacheStats } from './cache-stats.js';
import { lastOpen } from '../arena/entries/restart.js';
import { bindCodec, checkCodec, msgpackCodec } from './codec.js';

const FEATURE = 'SharedCache.inspect()';

/** The cache arena as SharedCache.inspect() reads it (see openArenaFile's ArenaKind). */
const INSPECTED_CACHE = Object.freeze({
  magic: MAGIC,
  inspect: (buffer, options) => new ArenaInspector(buffer, options),
});

/** Validated options of SharedCache.inspect(path, options). */
function resolveInspectOptions(options) {
  if (options === undefined) return { codec: undefined };
  checkObject(options, 'options');
  rejectUnknown(options, { codec: undefined }, 'options');
  return { codec: options.codec === undefined ? undefined : checkCodec(options.codec, 'options.codec') };
}

function closedError() {
  return new ArenaCacheError(codes.ERR_CACHE_CLOSED, 'the inspector is closed: close() was called on it');
}

/**
 * A shard that could not be read: its index and why (its lock held by a
 * live thread, or writers changing it under every read).
 * @typedef {{ shard: number, reason: string }} Unchecked
 */

/**
 * An entry as entries() gives it: the key (a string, or a Buffer), and the
 * value as stored, decoded where it can be: `valueKind` 'string' (a
 * string), 'number' (a number), 'buffer' (a Buffer), 'codec' (decoded by
 * the codec) or 'encoded' (a Buffer of the bytes `codec` encoded, which
 * this process cannot decode; `error` says why when the codec threw).
 * @typedef {{ key: string | Buffer, valueKind: 'string' | 'number' | 'buffer' | 'codec' | 'encoded', value: unknown, codec?: string, error?: string }} InspectedEntry
 */

export class CacheInspector {
  #arena;
  #decoder;
  #closed = false;

  /**
   * Use SharedCache.inspect(path, options).
   * @param {string} path
   * @param {{ codec?: object }} [options] `codec`: the file's codec, to decode its values (its name must match)
   */
  constructor(path, options) {
    checkArenaPath(path);
    const { codec } = resolveInspectOptions(options);
    const arena = inspectArenaFile(path, { kind: INSPECTED_CACHE, feature: FEATURE });
    try {
      const stored = arena.header.codecName;
      if (codec !== undefined && codec.name !== stored) {
        throw new ArenaCacheError(
          codes.ERR_CODEC_MISMATCH,
          `the cache was created with the codec "${stored}" but inspect() was given "${codec.name}"; pass the same codec in options.codec, or none`,
        );
      }
      // The default codec reads its structures from the file (read-only: only encoding adds to them).
      if (stored === msgpackCodec.name) this.#decoder = bindCodec(msgpackCodec, arena.buffer, arena.header);
      else this.#decoder = codec ?? null;
    } catch (error) {
      mappingRelease(arena.buffer);
      throw error;
    }
    this.#arena = arena;
    /** The file's path, as given. */
    this.path = path;
  }

  /** The name of the codec the file's values were encoded with. */
  get codecName() {
    return this.#arena.header.codecName;
  }

  /** Whether the file's values of codec `codecName` are decoded (the default codec, or options.codec). */
  get decodes() {
    return this.#decoder !== null;
  }

  /**
   * The counters of every thread that used the file, summed, and its sizes:
   * the fields of SharedCache#stats(). `threads` counts the threads alive
   * now (the inspector is none of them); the invalidation counters, kept
   * per process, are 0.
   */
  stats() {
    this.#check();
    return cacheStats(this.#arena.header, this.#arena.stats(), null, lastOpen(this.#arena.buffer, this.#arena.pendingChecks()));
  }

  /**
   * The arena's invariants, checked as found: `problems` lists damage
   * (SharedCache#verify()'s lines, and a lock left held by a thread that
   * has exited), `unchecked` the shards that stayed busy (their lock held
   * by a live thread, or changed by writers under every read) for
   * INSPECT_SHARD_MS: busy is not damage. `ok` is true when no problem was
   * found in what was checked.
   * @returns {{ ok: boolean, problems: string[], unchecked: Unchecked[] }}
   */
  verify() {
    this.#check();
    const { problems, unchecked } = this.#arena.verify();
    return { ok: problems.length === 0, problems, unchecked };
  }

  /**
   * The keys of the live entries, shard by shard (each read at one
   * instant), and the shards that could not be read.
   * @returns {{ keys: Array<string | Buffer>, unchecked: Unchecked[] }}
   */
  keys() {
    const { entries, unchecked } = this.#read(false);
    return { keys: entries.map((entry) => entry.key), unchecked };
  }

  /**
   * The live entries with their values (see InspectedEntry), shard by
   * shard, and the shards that could not be read.
   * @returns {{ entries: InspectedEntry[], unchecked: Unchecked[] }}
   */
  entries() {
    return this.#read(true);
  }

  /** Unmaps the file. Idempotent. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    mappingRelease(this.#arena.buffer);
  }

  [Symbol.dispose]() {
    this.close();
  }

  #check() {
    if (this.#closed) throw closedError();
  }

  #read(withValues) {
    this.#check();
    const arena = this.#arena;
    /** @type {any[]} */
    const entries = [];
    /** @type {Unchecked[]} */
    const unchecked = [];
    for (let index = 0; index < arena.shards.length; index++) {
      const found = arena.shardEntries(index, withValues);
      if (found.unchecked !== undefined) unchecked.push({ shard: index, reason: found.unchecked });
      else if (found.damaged) unchecked.push({ shard: index, reason: 'a record points outside its region (run verify)' });
      for (const entry of found.entries) {
        const key = entry.keyKind === KEY_STRING ? Buffer.from(entry.key.buffer).toString('utf8') : Buffer.from(entry.key.buffer);
        entries.push(withValues ? { key, ...this.#value(entry) } : { key });
      }
    }
    return { entries, unchecked };
  }

  /** A stored value for display: { valueKind, value, codec? } (see InspectedEntry). */
  #value(entry) {
    if (entry.valueKind === VALUE_UTF8) return { valueKind: 'string', value: entry.value };
    if (entry.valueKind === VALUE_NUMBER) return { valueKind: 'number', value: entry.value };
    if (entry.valueKind !== VALUE_CODEC) return { valueKind: 'buffer', value: entry.value };
    const encoded = { valueKind: 'encoded', value: entry.value, codec: this.codecName };
    if (this.#decoder === null) return encoded;
    try {
      const value = this.#decoder.decode(entry.value);
      // undefined from the default codec: the structures it was encoded with are gone (see codec.js).
      return value === undefined && this.codecName === msgpackCodec.name ? encoded : { valueKind: 'codec', value };
    } catch (cause) {
      // Shown as its bytes, with the reason: one value the codec refuses does not hide the others.
      return { ...encoded, error: `the ${this.codecName} codec could not decode it: ${cause?.message ?? describe(cause)}` };
    }
  }
}

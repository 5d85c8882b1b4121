// SharedCache options: one object of defaults and the checks that turn bad
// options into errors that name the option and what was expected.

import { getHeapStatistics } from 'node:v8';
import { describe } from '../errors.js';
import { checkBoolean, checkInteger, checkObject, rejectUnknown, withDefaults } from '../validate.js';
import { DEFAULT_LOCK_WAIT_MS, MAX_KEY_BYTES_LIMIT, MAX_LOCK_WAIT_MS, MAX_MEMORY_BYTES, MAX_SHARDS, MIN_MEMORY_BYTES, POLICY_NAMES } from '../arena/common/layout.js';
import { checkArenaFileMode, FILE_OPTION_DEFAULTS, MEMORY_BYTES_RANGE, splitFileOptions } from '../arena/common/file-options.js';
import { checkCodec, msgpackCodec } from './codec.js';

/** Most entries a near cache may keep: also the default, the byte limit bounding it. */
export const MAX_NEAR_CACHE = 2 ** 24;
/** The largest options.nearCacheBytes. */
export const MAX_NEAR_CACHE_BYTES = 2 ** 40;
/** The share of the thread's V8 heap limit a near cache takes at most by default (see nearCacheBytesFor). */
export const NEAR_CACHE_HEAP_SHARE = 8;

/** Every option of `new SharedCache(options)` with its default. */
export const DEFAULTS = Object.freeze({
  /** Bytes of shared memory for the whole cache; left out: 64 MiB, or room for `max` entries (see defaultMemoryBytes). SharedCache.open() needs it only to create a file. */
  memoryBytes: undefined,
  /** Most entries to hold; 0 means bounded by memory only. */
  max: 0,
  /** Which entries leave first when the cache is full: 'hybrid', 'lru', 'lfu' or 'ttl'. */
  policy: 'hybrid',
  /** Default time to live in ms for entries set without one; 0 means forever. */
  ttl: 0,
  /** Default ms after an entry's ttl during which fetch() serves it stale while one loader refreshes it; 0 means none. */
  staleWhileRevalidate: 0,
  /** Expiry checks reuse the time for this many ms (0: read the clock every time). */
  ttlResolution: 1,
  /** How often one thread sweeps expired entries away, in ms (0: never). */
  sweepIntervalMs: 1000,
  /** Entries one sweep examines (it holds one shard's lock at a time). */
  sweepChecks: 1024,
  /** How long fetch() waits for another thread's loader before loading itself (ms). */
  fetchTimeoutMs: 10_000,
  /** Longest key in UTF-8 bytes. */
  maxKeyBytes: 4096,
  /** Number of shards (a power of two); 0 chooses from memoryBytes. */
  shards: 0,
  /** A lock held longer than this is presumed abandoned (ms). */
  lockLeaseMs: 1000,
  /** Longest a call waits for a shard lock a live thread holds (ms): past it a get misses and a write throws ERR_ARENA_BUSY. */
  lockWaitMs: DEFAULT_LOCK_WAIT_MS,
  /** How values other than Buffers and strings are stored. */
  codec: msgpackCodec,
  /** Most entries this instance (this thread) keeps as ready values for gets of string keys; 0 turns the near cache off. */
  nearCache: MAX_NEAR_CACHE,
  /** Most bytes (estimated) of those ready values; 0 turns the near cache off; left out: see nearCacheBytesFor. */
  nearCacheBytes: undefined,
});

export const ATTACH_DEFAULTS = Object.freeze({
  codec: msgpackCodec,
  nearCache: MAX_NEAR_CACHE,
  nearCacheBytes: undefined,
});

/**
 * The byte limit of an instance's near cache: `option` when given, else
 * the smaller of the arena's `memoryBytes` (a thread need not keep more
 * than the cache holds) and 1/NEAR_CACHE_HEAP_SHARE of this thread's V8
 * heap limit (which a Worker's resourceLimits lower), so that the default
 * never threatens the heap. Measured (docs/shared-cache.md#the-near-cache):
 * reads over a skewed 100,000 keys reach 0.8 of lru-cache only when the
 * near cache holds nearly every key read, and a tenth less halves the rate.
 */
export function nearCacheBytesFor(option, memoryBytes) {
  if (option !== undefined) return option;
  return Math.min(memoryBytes, Math.floor(getHeapStatistics().heap_size_limit / NEAR_CACHE_HEAP_SHARE));
}

/** Largest ttl: about 285,000 years, far beyond any clock, still exact in float64. */
export const MAX_TTL = 2 ** 53 - 2 ** 43;
/** How messages state MAX_TTL: Number.MAX_SAFE_INTEGER, a common "forever", is just above it. */
export const MAX_TTL_WORDS = `${MAX_TTL} (2^53 - 2^43, about 285,000 years)`;

/** A duration in ms from 0 to MAX_TTL; `zero` says what 0 means. */
function checkDuration(value, name, zero) {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number of milliseconds (got ${describe(value)})`);
  if (!(value >= 0 && value <= MAX_TTL)) {
    throw new RangeError(`${name} must be a number of milliseconds from 0 to ${MAX_TTL_WORDS}, 0 meaning ${zero} (got ${describe(value)})`);
  }
}

/** Validates a ttl in ms (option or per-entry). */
export function checkTtl(value, name) {
  checkDuration(value, name, 'no expiry');
}

/** Validates a stale window in ms (option or per-entry). */
export function checkStaleWindow(value, name) {
  checkDuration(value, name, 'no stale window');
}

/**
 * memoryBytes when the options leave it out (the constructor only; a new
 * arena file needs it given). Without `max`: 64 MiB, memcached's default
 * memory limit, and virtual until written (a SharedArrayBuffer's pages cost
 * nothing until touched). With `max`: room for `max` entries of 1 KiB
 * (key, value and record together), from 1 MiB to 1 GiB, so that
 * `new SharedCache({ max: 500 })`, an lru-cache user's first line, makes a
 * cache whose entry limit is what bounds it for ordinary values.
 */
export const DEFAULT_MEMORY_BYTES = 64 * 2 ** 20;
/** The bytes per entry defaultMemoryBytes() assumes for `max` entries. */
export const MEMORY_BYTES_PER_MAX_ENTRY = 1024;
const MIB_BYTES = 2 ** 20;

/** The memoryBytes a cache gets without the option (see DEFAULT_MEMORY_BYTES). */
export function defaultMemoryBytes(max) {
  if (max === 0) return DEFAULT_MEMORY_BYTES;
  const bytes = Math.ceil((max * MEMORY_BYTES_PER_MAX_ENTRY) / MIB_BYTES) * MIB_BYTES;
  return Math.min(1024 * MIB_BYTES, Math.max(MIN_MEMORY_BYTES, bytes));
}

/** Validated options for `new SharedCache(options)`, defaults filled in. */
export function resolveOptions(options = {}) {
  const resolved = withDefaults(options, DEFAULTS, 'options');
  checkInteger(resolved.max, 'options.max', 0, 2 ** 32, { from: '0 (no limit)', to: '2^32' });
  if (resolved.memoryBytes === undefined) resolved.memoryBytes = defaultMemoryBytes(resolved.max);
  checkInteger(resolved.memoryBytes, 'options.memoryBytes', MIN_MEMORY_BYTES, MAX_MEMORY_BYTES, MEMORY_BYTES_RANGE);
  checkTtl(resolved.ttl, 'options.ttl');
  checkStaleWindow(resolved.staleWhileRevalidate, 'options.staleWhileRevalidate');
  if (typeof resolved.policy !== 'string') {
    throw new TypeError(`options.policy must be a string, one of ${POLICY_NAMES.map((p) => `'${p}'`).join(', ')} (got ${describe(resolved.policy)})`);
  }
  if (!POLICY_NAMES.includes(resolved.policy)) {
    throw new RangeError(`options.policy must be one of ${POLICY_NAMES.map((p) => `'${p}'`).join(', ')} (got ${describe(resolved.policy)})`);
  }
  checkInteger(resolved.ttlResolution, 'options.ttlResolution', 0, 60_000, { unit: 'milliseconds' });
  checkInteger(resolved.sweepIntervalMs, 'options.sweepIntervalMs', 0, 86_400_000, { from: '0 (no sweeping)', unit: 'milliseconds' });
  checkInteger(resolved.sweepChecks, 'options.sweepChecks', 1, 1_000_000);
  checkInteger(resolved.fetchTimeoutMs, 'options.fetchTimeoutMs', 1, 86_400_000, { unit: 'milliseconds' });
  checkInteger(resolved.maxKeyBytes, 'options.maxKeyBytes', 1, MAX_KEY_BYTES_LIMIT);
  checkInteger(resolved.shards, 'options.shards', 0, MAX_SHARDS, `0 (automatic) or a power of two up to ${MAX_SHARDS}`);
  if ((resolved.shards & (resolved.shards - 1)) !== 0) {
    throw new RangeError(`options.shards must be 0 (automatic) or a power of two up to ${MAX_SHARDS} (got ${resolved.shards})`);
  }
  checkInteger(resolved.lockLeaseMs, 'options.lockLeaseMs', 1, 600_000, { unit: 'milliseconds' });
  checkInteger(resolved.lockWaitMs, 'options.lockWaitMs', 1, MAX_LOCK_WAIT_MS, { unit: 'milliseconds' });
  checkCodec(resolved.codec, 'options.codec');
  checkNearCache(resolved.nearCache);
  checkNearCacheBytes(resolved.nearCacheBytes);
  return resolved;
}

function checkNearCache(value) {
  checkInteger(value, 'options.nearCache', 0, MAX_NEAR_CACHE, { from: '0 (off)', unit: 'entries' });
}

function checkNearCacheBytes(value) {
  if (value !== undefined) checkInteger(value, 'options.nearCacheBytes', 0, MAX_NEAR_CACHE_BYTES, { from: '0 (off)', to: '2^40', unit: 'bytes' });
}

/** Validated options for `SharedCache.attach(handle, options)`. */
export function resolveAttachOptions(options) {
  if (options === undefined) return { ...ATTACH_DEFAULTS };
  checkObject(options, 'options');
  rejectUnknown(options, ATTACH_DEFAULTS, 'options');
  const resolved = { ...ATTACH_DEFAULTS };
  if (options.codec !== undefined) resolved.codec = checkCodec(options.codec, 'options.codec');
  if (options.nearCache !== undefined) {
    checkNearCache(options.nearCache);
    resolved.nearCache = options.nearCache;
  }
  if (options.nearCacheBytes !== undefined) {
    checkNearCacheBytes(options.nearCacheBytes);
    resolved.nearCacheBytes = options.nearCacheBytes;
  }
  return resolved;
}

/** The options of `SharedCache.open(path, options)` beyond those of the constructor. */
export const OPEN_DEFAULTS = Object.freeze({
  ...DEFAULTS,
  ...FILE_OPTION_DEFAULTS,
  /**
   * Every record of a new file carries a checksum, checked when a sole
   * opener recovers the file and by verify(): a record damaged on disk (a
   * machine crash, flipped bytes) is dropped, never served.
   */
  checksums: true,
  /**
   * The sole opener checks every shard of the file, as it does after a
   * machine crash, even when the file was closed cleanly or its last users
   * only exited on this boot (see docs/shared-cache.md, "Restarts"): for a
   * file that something other than arenacache may have changed while
   * nobody had it open.
   */
  verifyOnOpen: false,
});

/** How the options an existing arena file must agree with are stored in its header: a field name, or a function of the header. */
const HEADER_NAMES = Object.freeze({
  memoryBytes: 'memoryBytes',
  max: 'max',
  policy: 'policyName',
  ttl: 'defaultTtl',
  staleWhileRevalidate: 'defaultStaleMs',
  ttlResolution: 'ttlResolution',
  sweepIntervalMs: 'sweepIntervalMs',
  sweepChecks: 'sweepChecks',
  fetchTimeoutMs: 'fetchTimeoutMs',
  maxKeyBytes: 'maxKeyBytes',
  shards: 'shardCount',
  lockLeaseMs: 'lockLeaseMs',
  lockWaitMs: 'lockWaitMs',
  checksums: (header) => header.recordChecksums === 1,
});

/**
 * Validated options for `SharedCache.open(path, options)`: `create` holds the
 * resolved cache options when memoryBytes was given (the file may be
 * created), else null; `given` the cache options set explicitly, which an
 * existing file must agree with (see mismatchedOption).
 */
export function resolveOpenOptions(options) {
  // What a user looking for a read-only open writes: point them at inspect().
  for (const name of ['readOnly', 'readonly']) {
    if (options !== null && typeof options === 'object' && Object.hasOwn(options, name)) {
      throw new TypeError(`options.${name} is not a known option of SharedCache.open(); to read a cache file without recovering, locking or writing it, use SharedCache.inspect(path)`);
    }
  }
  const { reset, mode, populate, defined } = splitFileOptions(options, OPEN_DEFAULTS);
  const { checksums = OPEN_DEFAULTS.checksums, verifyOnOpen = OPEN_DEFAULTS.verifyOnOpen, ...cacheOptions } = defined;
  checkBoolean(checksums, 'options.checksums');
  checkBoolean(verifyOnOpen, 'options.verifyOnOpen');
  // Without memoryBytes the other options are checked all the same.
  const resolved = { ...resolveOptions({ memoryBytes: MIN_MEMORY_BYTES, ...cacheOptions }), checksums };
  delete defined.verifyOnOpen;
  return { create: defined.memoryBytes === undefined ? null : resolved, resolved, given: defined, reset, mode, populate, verifyOnOpen };
}

/**
 * The first explicitly given option that differs from the arena `header`
 * read from a file, as { name, given, stored }, or null.
 */
export function mismatchedOption(given, header) {
  for (const [name, field] of Object.entries(HEADER_NAMES)) {
    if (!Object.hasOwn(given, name)) continue;
    if (name === 'shards' && given.shards === 0) continue;
    const stored = typeof field === 'function' ? field(header) : header[field];
    if (given[name] !== stored) return { name, given: given[name], stored };
  }
  return null;
}

export { checkArenaFileMode, MEMORY_BYTES_RANGE, splitFileOptions };

// The memory layout of an arena: where every region lives inside the one
// shared buffer, and the self-describing header that lets another thread (or,
// with a mapped file, another process) attach without guessing.
//
//   [header 4 KiB][thread stats][fetch flights][shard meta][dictionaries]
//   [ghost tables (hybrid policy)][slot-group write counts][codec structures]
//   [data regions]
//
// The header stores the parameters the layout was computed from *and* the
// offsets computed from them. Attaching recomputes the offsets from the
// parameters and refuses a buffer whose stored offsets disagree, so a
// corrupted or foreign header is caught before anything reads through it.

import { ArenaCacheError, codes } from '../../errors.js';

export const MAGIC = 0x434e5241; // "ARNC" in little-endian byte order
/** The magic of a block arena (arena/blocks/block-layout.js): named here so that file.js tells the two kinds apart. */
export const BLOCKS_MAGIC = 0x424e5241; // "ARNB"
// 3: the codec structure region (structures.js), which values of the default
// codec refer to; a write stamp in every record's header; keys padded to 8
// bytes so that values start 8-byte aligned (record.js); the slot groups'
// write counts (see slotGroupsPerShard).
export const LAYOUT_VERSION = 6;
/**
 * Version 4 added records with a stale time (record.js, HAS_STALE), which
 * version 3 code would misread. Version 3 files are still opened: the sole
 * opener of one marks it version 4 (see Arena.recoverAfterRestart); while
 * it stays at 3, processes of an older arenacache may have it open, and
 * entries are written without stale times.
 */
export const OLDEST_LAYOUT_VERSION = 3;
/**
 * Version 5 added the restart record (H32_CLEAN_MARK onwards, see
 * entries/restart.js): a clean mark that version 4 code would neither
 * clear on opening nor understand, so that a file it wrote to after a clean
 * close would be trusted unchecked. The sole opener of an older file marks
 * it version 5 (see Arena.recoverAfterRestart), after which older code refuses it.
 */
export const RESTART_RECORD_VERSION = 5;
/**
 * Version 6 added number values (record.js VALUE_NUMBER), which version 5
 * code would hand to its codec, and the undo journal of an increment in
 * place (shard-meta.js M_UNDO_AT), which its rebuild would not read. While
 * an older file stays below 6 (older processes may have it open), numbers
 * are stored through the codec and incr() reads and compares-and-sets.
 */
export const NUMBER_VALUES_VERSION = 6;
export const HEADER_BYTES = 4096;

export const MIB = 1024 * 1024;
export const MIN_MEMORY_BYTES = MIB;
export const MAX_MEMORY_BYTES = 1024 * 1024 * MIB; // 1 TiB
export const MAX_SHARDS = 4096;
export const MAX_KEY_BYTES_LIMIT = 0xffff; // the key length is a 16-bit field
export const MAX_CODEC_NAME_BYTES = 64;
/**
 * How long a call waits for a shard lock that a live thread holds before it
 * gives up (options.lockWaitMs; see shard-lock.js). Legitimate holdings
 * last microseconds, and up to tens of milliseconds when the holder is
 * descheduled or collects garbage or verify() checks a large shard
 * (docs/how-it-works.md gives the measurement): 500 ms keeps a wide margin
 * over those while a stopped holder costs each waiting thread one half
 * second per holding, not forever.
 */
export const DEFAULT_LOCK_WAIT_MS = 500;
export const MAX_LOCK_WAIT_MS = 3_600_000;

/** Each shard's meta block: one 128-byte line of its own (no false sharing). */
export const SHARD_META_BYTES = 128;
/** Each thread's counter block: 32 float64 words (word 0 holds the owner). */
export const THREAD_SLOT_BYTES = 256;
/** One in-flight fetch: state, key hashes, owner, outcome. */
export const FLIGHT_SLOT_BYTES = 64;
/** The error a failed loader leaves for the waiters of other threads. */
export const FLIGHT_ERROR_BYTES = 512;
export const GHOST_SLOT_BYTES = 4;
/** Words at the start of a shard's ghost area that hold the hybrid policy's state (entries/ghost-table.js). */
export const GHOST_STATE_WORDS = 4;
/** hybrid: the small ring's share of a shard's data region. */
const SMALL_RING_FRACTION = 0.1;
export const DICTIONARY_SLOT_BYTES = 8;
/** Dictionary load bound: linear probing stays short below it. */
export const MAX_LOAD = 0.75;
/** Without `max`, the dictionary is sized for entries of this average size. */
export const ASSUMED_ENTRY_BYTES = 128;
/** Smallest data region a shard may have. */
export const MIN_REGION_BYTES = 16 * 1024;
/** Offsets inside a region stay below 2^31 so they are small integers in V8. */
export const MAX_REGION_BYTES = 2 ** 31 - 4096;
/**
 * The codec structure region (see structures.js) gets 1/64 of memoryBytes,
 * between 16 and 256 KiB. A structure (an object shape's key names) takes
 * 30-150 bytes, so that is room for a few hundred shapes in the smallest
 * cache and a few thousand from 16 MiB on: applications cache tens to
 * hundreds of shapes, and a cache given more memory tends to serve more
 * kinds of values. Past it, values are encoded self-describing. It never
 * costs more than 1/64 of the memory (and, in a mapped file, only the pages
 * written).
 */
const STRUCTURES_MIN_BYTES = 16 * 1024;
const STRUCTURES_MAX_BYTES = 256 * 1024;
export function structureRegionBytes(memoryBytes) {
  return Math.min(STRUCTURES_MAX_BYTES, Math.max(STRUCTURES_MIN_BYTES, Math.floor(memoryBytes / 64 / 4096) * 4096));
}
/**
 * Each shard's dictionary slots fall into groups of consecutive slots, each
 * with a float64 write count that advances whenever one of its slots, or the
 * record a slot points at, changes (see RecordStamp). A near-cache hit checks
 * only its group's count: the finer the groups, the fewer hits a write to
 * another key sends to the slot and the record. 256 groups per shard make a
 * write disturb one key in 16,384 of a 64-shard cache; the counts take at
 * most a sixteenth of the dictionary's bytes (2 KiB per shard), so they stay
 * in the CPU cache where the dictionary does not.
 */
const MAX_SLOT_GROUPS = 256;
export function slotGroupsPerShard(slotsPerShard) {
  return Math.min(MAX_SLOT_GROUPS, Math.max(1, pow2Floor(slotsPerShard / 16)));
}
/** Auto sharding aims for regions of this size (concurrency vs largest value). */
const TARGET_REGION_BYTES = 4 * MIB;
const AUTO_MAX_SHARDS = 64;
/** With `max`, automatic sharding keeps at least this many entries per shard (policy quality). */
const MIN_ENTRIES_PER_SHARD = 128;
/**
 * A large cache gets more shards than AUTO_MAX_SHARDS, up to
 * AUTO_MAX_SHARDS_LARGE, to keep its expected entries per shard (`max`, else
 * one per ASSUMED_ENTRY_BYTES) at most this many: a writer killed inside a
 * shard's lock costs the next opener that shard's rebuild, about 0.4 µs an
 * entry warm and twice that in a fresh process (docs/shared-cache.md,
 * Restarts). More, smaller shards cost sets nothing measurable at 10 million
 * entries with 128 shards; at 256 shards, sets of a cache of 3 million
 * entries took 10% longer (more shard lines and slot-group counts to keep
 * in the CPU cache), so the bound is no tighter than a restart needs.
 */
const RESTART_ENTRIES_PER_SHARD = 131072;
const AUTO_MAX_SHARDS_LARGE = 1024;

// Header fields: four u32 words, then float64 fields from byte 16 in this
// order (float64 index 2 onwards), then the codec name. One list serves
// writing and reading, so the two cannot drift apart.
export const H32_MAGIC = 0;
export const H32_VERSION = 1;
export const H32_HEADER_BYTES = 2;
export const H32_CHECKSUM = 3;
const FIRST_FIELD = 2;
/** Eviction policies by the id stored in the header (see policies.js). */
export const POLICY_NAMES = Object.freeze(['hybrid', 'lru', 'lfu', 'ttl']);
export const POLICY_HYBRID = 1;
export function policyId(name) {
  return POLICY_NAMES.indexOf(name) + 1;
}
const HEADER_FIELDS = Object.freeze([
  'memoryBytes',
  'policy',
  'shardCount',
  'slotsPerShard',
  'regionBytes',
  'maxKeyBytes',
  'maxEntriesPerShard',
  'hashSeed',
  'threadSlots',
  'statsOffset',
  'metaOffset',
  'tablesOffset',
  'dataOffset',
  'defaultTtl',
  'lockLeaseMs',
  'createdAt',
  'arenaId',
  'max',
  'flightSlots',
  'flightsOffset',
  'flightErrorsOffset',
  'ghostSlotsPerShard',
  'ghostsOffset',
  'smallRingBytes',
  'ttlResolution',
  'sweepIntervalMs',
  'sweepChecks',
  'fetchTimeoutMs',
  'structuresOffset',
  'structuresBytes',
  'writeCountsOffset',
  // 1: every record carries a checksum (see recordChecksum). Files from
  // before the field have 0 here and are read as they are, without.
  'recordChecksums',
  // The default options.staleWhileRevalidate (ms); 0 in files from before it.
  'defaultStaleMs',
  // How long a call waits for a lock a live thread holds (ms, see
  // shard-lock.js); 0 in files from before it, which then wait DEFAULT_LOCK_WAIT_MS.
  'lockWaitMs',
]);
/** Float64 index of a header field (for tools and tests that inspect headers). */
export function headerFieldIndex(name) {
  return FIRST_FIELD + HEADER_FIELDS.indexOf(name);
}

/** The fields computeLayout() derives: stored, and checked on attach. */
const DERIVED_FIELDS = Object.freeze([
  'statsOffset',
  'flightsOffset',
  'flightErrorsOffset',
  'metaOffset',
  'tablesOffset',
  'ghostsOffset',
  'writeCountsOffset',
  'structuresOffset',
  'structuresBytes',
  'dataOffset',
  'regionBytes',
  'smallRingBytes',
]);
const CODEC_NAME_LENGTH_BYTE = 384; // u32 length, then the UTF-8 name
const CODEC_NAME_BYTE = 388;
/** The checksum covers these header bytes (everything immutable). */
const CHECKSUM_FROM = 16;
const CHECKSUM_TO = 452;
if (16 + HEADER_FIELDS.length * 8 > CODEC_NAME_LENGTH_BYTE) throw new Error('arena header fields overlap the codec name');
// Mutable header words (after the checksummed part).
/** Int32 index of the counter handing out ids to threads without a kernel tid. */
export const H32_ANON_THREAD_COUNTER = 512 / 4;
/** The sweeper lease: owner pid, owner tid, and (float64) when it expires. */
export const H32_SWEEPER_PID = 516 / 4;
export const H32_SWEEPER_TID = 520 / 4;
export const H64_SWEEPER_LEASE_UNTIL = 528 / 8;
/** The next shard the sweeper visits. */
export const H32_SWEEP_SHARD = 536 / 4;
/**
 * The restart record (see entries/restart.js). CLEAN_MARK holds
 * CLEAN_MARK_WORD once the last process closed the file cleanly (written
 * back first: its memory reached the file before the mark did), and 0 from
 * the moment the next sole opener starts. The boot id, device and inode
 * the file was last opened under say whether its pages can have been
 * through a machine crash or a copy since. Then how the last open went:
 * what it found (see restart.js), shards repaired, entries lost, shards
 * checked, when (epoch ms) and how long it took (ms).
 */
export const H32_CLEAN_MARK = 544 / 4;
export const CLEAN_MARK_WORD = 0x4e4c4c43; // "CLLN"
export const H8_OPENED_BOOT = 548;
export const BOOT_ID_BYTES = 16;
export const H64_OPENED_DEV = 568 / 8;
export const H64_OPENED_INO = 576 / 8;
export const H32_LAST_OPEN = 584 / 4;
export const H32_LAST_OPEN_REPAIRED = 588 / 4;
export const H32_LAST_OPEN_LOST = 592 / 4;
export const H32_LAST_OPEN_CHECKED = 596 / 4;
export const H64_LAST_OPEN_AT = 600 / 8;
export const H64_LAST_OPEN_MS = 608 / 8;
/**
 * With `max`, each shard's entry count as of the end of its last write, one
 * int32 per shard for the first PUBLISHED_COUNT_SHARDS shards (see
 * Shard.totalEntries): an insert sums 64 bytes per 16 shards that change
 * only when a shard's count does, not every shard's meta line.
 */
export const H32_SHARD_COUNTS = 1024 / 4;
export const PUBLISHED_COUNT_SHARDS = (HEADER_BYTES - 1024) / 4;

function pow2Floor(n) {
  return n < 1 ? 0 : 2 ** Math.floor(Math.log2(n));
}

function align(n, to) {
  return Math.ceil(n / to) * to;
}

/**
 * Resolves the automatic choices (shards, dictionary size, thread slots) for
 * validated options. Throws RangeError when the options cannot share the
 * memory sensibly, naming the option to change.
 */
export function planLayout({ memoryBytes, shards, max, maxKeyBytes, policy }) {
  let shardCount = shards;
  if (shardCount === 0) {
    shardCount = Math.min(AUTO_MAX_SHARDS, Math.max(1, pow2Floor(memoryBytes / TARGET_REGION_BYTES)));
    // With `max`, enough entries per shard keep each shard's policy close to
    // a global one.
    if (max > 0) shardCount = Math.max(1, Math.min(shardCount, pow2Floor(max / MIN_ENTRIES_PER_SHARD)));
    const expectedEntries = max > 0 ? max : memoryBytes / ASSUMED_ENTRY_BYTES;
    while (expectedEntries / shardCount > RESTART_ENTRIES_PER_SHARD && shardCount < AUTO_MAX_SHARDS_LARGE && memoryBytes / (2 * shardCount) >= TARGET_REGION_BYTES) {
      shardCount *= 2;
    }
    while (memoryBytes / shardCount > MAX_REGION_BYTES) shardCount *= 2;
  } else if (max > 0 && max < shardCount) {
    throw new RangeError(`options.max (${max}) must be at least options.shards (${shardCount}): each shard holds max / shards entries`);
  }
  const threadSlots = Math.min(256, Math.max(16, pow2Floor(memoryBytes / (64 * 1024))));
  const flightSlots = Math.min(1024, Math.max(16, pow2Floor(memoryBytes / (256 * 1024))));
  // With `max`, the cache as a whole holds at most max entries (see
  // Shard.store); keys do not spread exactly evenly, so each shard's own
  // bound leaves room for four standard deviations above its fair share.
  const fairShare = max / shardCount;
  const entriesPerShard =
    max > 0 ? Math.ceil(fairShare + 4 * Math.sqrt(fairShare) + 8) : Math.ceil(memoryBytes / shardCount / ASSUMED_ENTRY_BYTES);
  const slotsPerShard = Math.max(8, Math.ceil(entriesPerShard / MAX_LOAD) + 1);
  const maxEntriesPerShard = max > 0 ? entriesPerShard : Math.floor(slotsPerShard * MAX_LOAD);
  // hybrid remembers about as many evicted keys as the shard holds, after
  // its state words; with `max`, where it adapts its small ring, of each of
  // its two rings (see entries/ghost-table.js). Where that area would not
  // fit (the limits below), smaller ones down to the size the ghost table
  // had before the two tables (one slot an entry), which GhostTable splits
  // into two smaller tables: every configuration that planned before plans.
  const ghostSizes =
    policy !== POLICY_HYBRID ? [0] : max > 0 ? [GHOST_STATE_WORDS + 2 * maxEntriesPerShard, GHOST_STATE_WORDS + maxEntriesPerShard, maxEntriesPerShard] : [GHOST_STATE_WORDS + maxEntriesPerShard, maxEntriesPerShard];
  let failure = null;
  for (const ghostSlotsPerShard of ghostSizes) {
    const tableBytes = shardCount * (slotsPerShard * DICTIONARY_SLOT_BYTES + ghostSlotsPerShard * GHOST_SLOT_BYTES);
    if (tableBytes > memoryBytes / 2) {
      failure = new RangeError(
        `options.max (${max}) needs a dictionary of ${tableBytes} bytes, more than half of options.memoryBytes (${memoryBytes}); lower max or raise memoryBytes`,
      );
      continue;
    }
    const layout = computeLayout({ memoryBytes, policy, shardCount, slotsPerShard, maxEntriesPerShard, ghostSlotsPerShard, threadSlots, flightSlots, maxKeyBytes });
    if (layout.regionBytes < MIN_REGION_BYTES) {
      failure = new RangeError(
        `options.shards (${shardCount}) leaves each shard ${layout.regionBytes} bytes of data, less than ${MIN_REGION_BYTES}; ` +
          'use fewer shards or raise options.memoryBytes',
      );
      continue;
    }
    if (layout.regionBytes > MAX_REGION_BYTES) {
      throw new RangeError(
        `options.shards (${shardCount}) gives each shard ${layout.regionBytes} bytes of data, more than ${MAX_REGION_BYTES}; use more shards`,
      );
    }
    return layout;
  }
  throw failure;
}

/**
 * Offsets from the layout parameters (memoryBytes, policy, shardCount,
 * slotsPerShard, maxEntriesPerShard, ghostSlotsPerShard, threadSlots,
 * flightSlots, maxKeyBytes); the same function serves create and attach.
 */
export function computeLayout(params) {
  const { memoryBytes, policy, shardCount, slotsPerShard, ghostSlotsPerShard, threadSlots, flightSlots } = params;
  const statsOffset = HEADER_BYTES;
  const flightsOffset = statsOffset + threadSlots * THREAD_SLOT_BYTES;
  const flightErrorsOffset = flightsOffset + flightSlots * FLIGHT_SLOT_BYTES;
  const metaOffset = flightErrorsOffset + flightSlots * FLIGHT_ERROR_BYTES;
  const tablesOffset = metaOffset + shardCount * SHARD_META_BYTES;
  const ghostsOffset = tablesOffset + shardCount * slotsPerShard * DICTIONARY_SLOT_BYTES;
  const writeCountsOffset = align(ghostsOffset + shardCount * ghostSlotsPerShard * GHOST_SLOT_BYTES, 64);
  const structuresOffset = align(writeCountsOffset + shardCount * slotGroupsPerShard(slotsPerShard) * 8, 64);
  const structuresBytes = structureRegionBytes(memoryBytes);
  const dataOffset = structuresOffset + structuresBytes;
  const regionBytes = Math.max(0, Math.floor((memoryBytes - dataOffset) / shardCount / 64) * 64);
  const smallRingBytes = policy === POLICY_HYBRID ? Math.floor((regionBytes * SMALL_RING_FRACTION) / 64) * 64 : 0;
  return {
    ...params,
    statsOffset,
    flightsOffset,
    flightErrorsOffset,
    metaOffset,
    tablesOffset,
    ghostsOffset,
    writeCountsOffset,
    structuresOffset,
    structuresBytes,
    dataOffset,
    regionBytes,
    smallRingBytes,
  };
}

/** FNV-1a of a header's immutable bytes (stored in its word 3). */
export function headerChecksum(bytes) {
  let h = 0x811c9dc5;
  for (let i = CHECKSUM_FROM; i < CHECKSUM_TO; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  return h >>> 0;
}

/**
 * Writes a fresh header into `buffer` (zeroed memory).
 * @param {SharedArrayBuffer} buffer
 * @param {ReturnType<typeof computeLayout>} layout
 * @param {{ defaultTtl: number, lockLeaseMs: number, max: number, codecName: string, ttlResolution: number,
 *   sweepIntervalMs: number, sweepChecks: number, fetchTimeoutMs: number, recordChecksums?: boolean,
 *   defaultStaleMs?: number, lockWaitMs?: number }} settings
 */
export function writeHeader(buffer, layout, settings) {
  const h32 = new Uint32Array(buffer, 0, HEADER_BYTES / 4);
  const h64 = new Float64Array(buffer, 0, HEADER_BYTES / 8);
  const bytes = new Uint8Array(buffer, 0, HEADER_BYTES);
  const random = new Uint32Array(3);
  crypto.getRandomValues(random);
  const fields = {
    ...layout,
    hashSeed: random[0],
    defaultTtl: settings.defaultTtl,
    lockLeaseMs: settings.lockLeaseMs,
    createdAt: Date.now(),
    arenaId: (random[1] & 0x1fffff) * 2 ** 32 + random[2],
    max: settings.max,
    ttlResolution: settings.ttlResolution,
    sweepIntervalMs: settings.sweepIntervalMs,
    sweepChecks: settings.sweepChecks,
    fetchTimeoutMs: settings.fetchTimeoutMs,
    recordChecksums: settings.recordChecksums ? 1 : 0,
    defaultStaleMs: settings.defaultStaleMs ?? 0,
    lockWaitMs: settings.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS,
  };
  HEADER_FIELDS.forEach((name, i) => {
    h64[FIRST_FIELD + i] = fields[name];
  });
  const name = new TextEncoder().encode(settings.codecName);
  h32[CODEC_NAME_LENGTH_BYTE / 4] = name.length;
  bytes.set(name, CODEC_NAME_BYTE);
  h32[H32_HEADER_BYTES] = HEADER_BYTES;
  h32[H32_VERSION] = LAYOUT_VERSION;
  h32[H32_CHECKSUM] = headerChecksum(bytes);
  // The magic goes last: a buffer is an arena only once everything else is in place.
  Atomics.store(new Int32Array(buffer, 0, 1), 0, MAGIC | 0);
}

function fail(code, message) {
  return new ArenaCacheError(code, message);
}

/**
 * Validates what every arena header (the cache's, the block store's) starts
 * with: its magic, layout version and header size, that the buffer holds the
 * whole header, and the checksum of its immutable part. Throws the
 * ArenaCacheError that says which is wrong.
 */
export function checkHeaderStart(buffer, magic, version, oldestVersion = version) {
  const size = buffer.byteLength;
  if (size < 16) {
    throw fail(codes.ERR_ARENA_NOT_ARENA, `buffer is not an arena: ${size} bytes is too small to hold an arena header`);
  }
  const first = new Uint32Array(buffer, 0, 4);
  if (first[H32_MAGIC] !== magic) {
    throw fail(
      codes.ERR_ARENA_NOT_ARENA,
      `buffer is not an arena: magic is 0x${first[H32_MAGIC].toString(16).padStart(8, '0')}, expected 0x${magic.toString(16)}`,
    );
  }
  if (!(first[H32_VERSION] >= oldestVersion && first[H32_VERSION] <= version)) {
    const readable = oldestVersion === version ? `version ${version}` : `versions ${oldestVersion} to ${version}`;
    throw fail(codes.ERR_ARENA_VERSION, `arena layout version ${first[H32_VERSION]} is not supported; this arenacache reads ${readable}`);
  }
  if (first[H32_HEADER_BYTES] !== HEADER_BYTES) {
    throw fail(codes.ERR_ARENA_CORRUPT, `arena header size is ${first[H32_HEADER_BYTES]}, expected ${HEADER_BYTES}`);
  }
  if (size < HEADER_BYTES) {
    throw fail(codes.ERR_ARENA_TRUNCATED, `arena is truncated: ${size} bytes cannot hold its ${HEADER_BYTES}-byte header`);
  }
  if (first[H32_CHECKSUM] !== headerChecksum(new Uint8Array(buffer, 0, HEADER_BYTES))) {
    throw fail(codes.ERR_ARENA_CORRUPT, 'arena header checksum does not match: the header was overwritten or damaged');
  }
}

/**
 * Reads and validates the header of `buffer`. Never guesses: any field that
 * disagrees with the others is an ArenaCacheError with a specific code.
 */
export function readHeader(buffer) {
  checkHeaderStart(buffer, MAGIC, LAYOUT_VERSION, OLDEST_LAYOUT_VERSION);
  const size = buffer.byteLength;
  const h32 = new Uint32Array(buffer, 0, HEADER_BYTES / 4);
  const h64 = new Float64Array(buffer, 0, HEADER_BYTES / 8);
  const bytes = new Uint8Array(buffer, 0, HEADER_BYTES);
  const stored = {};
  HEADER_FIELDS.forEach((name, i) => {
    stored[name] = h64[FIRST_FIELD + i];
  });
  if (size < stored.memoryBytes) {
    throw fail(codes.ERR_ARENA_TRUNCATED, `arena is truncated: its header describes ${stored.memoryBytes} bytes but the buffer has ${size}`);
  }
  const sane =
    Number.isInteger(stored.shardCount) &&
    stored.shardCount >= 1 &&
    stored.shardCount <= MAX_SHARDS &&
    (stored.shardCount & (stored.shardCount - 1)) === 0 &&
    Number.isInteger(stored.slotsPerShard) &&
    stored.maxEntriesPerShard < stored.slotsPerShard &&
    stored.maxEntriesPerShard >= 1 &&
    Number.isInteger(stored.threadSlots) &&
    stored.threadSlots >= 1 &&
    Number.isInteger(stored.maxKeyBytes) &&
    stored.maxKeyBytes >= 1 &&
    stored.maxKeyBytes <= MAX_KEY_BYTES_LIMIT &&
    Number.isInteger(stored.policy) &&
    stored.policy >= 1 &&
    stored.policy <= POLICY_NAMES.length &&
    Number.isInteger(stored.flightSlots) &&
    stored.flightSlots >= 1 &&
    Number.isInteger(stored.ghostSlotsPerShard) &&
    stored.ghostSlotsPerShard >= 0 &&
    (stored.recordChecksums === 0 || stored.recordChecksums === 1) &&
    Number.isFinite(stored.defaultStaleMs) &&
    stored.defaultStaleMs >= 0 &&
    Number.isInteger(stored.lockWaitMs) &&
    stored.lockWaitMs >= 0 &&
    stored.lockWaitMs <= MAX_LOCK_WAIT_MS;
  const layout = sane ? computeLayout(stored) : null;
  if (
    layout === null ||
    DERIVED_FIELDS.some((name) => layout[name] !== stored[name]) ||
    layout.regionBytes < MIN_REGION_BYTES ||
    layout.regionBytes > MAX_REGION_BYTES
  ) {
    throw fail(codes.ERR_ARENA_CORRUPT, 'arena header is inconsistent: its stored offsets do not follow from its stored sizes');
  }
  const nameLength = h32[CODEC_NAME_LENGTH_BYTE / 4];
  if (nameLength > MAX_CODEC_NAME_BYTES) {
    throw fail(codes.ERR_ARENA_CORRUPT, `arena header names a codec of ${nameLength} bytes, more than ${MAX_CODEC_NAME_BYTES}`);
  }
  return {
    ...stored,
    lockWaitMs: stored.lockWaitMs === 0 ? DEFAULT_LOCK_WAIT_MS : stored.lockWaitMs,
    layoutVersion: h32[H32_VERSION],
    policyName: POLICY_NAMES[stored.policy - 1],
    codecName: new TextDecoder().decode(bytes.slice(CODEC_NAME_BYTE, CODEC_NAME_BYTE + nameLength)),
  };
}

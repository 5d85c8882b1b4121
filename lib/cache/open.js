// How a SharedCache gets its arena: a new one in a SharedArrayBuffer (the
// constructor), one in a mapped file (SharedCache.open()), or one another
// thread made (SharedCache.attach()). Each gives the constructor the same
// parts, { arena, codec, path, mapped, outbox, nearCache, nearCacheBytes },
// with the options checked against what the arena was created with.

import { ArenaCacheError, codes } from '../errors.js';
import { Arena } from '../arena/entries/arena.js';
import { bootId, clearCleanMark, judgeRestart, recordOpen, RESTART_CHECK_BUDGET_MS } from '../arena/entries/restart.js';
import { MAGIC, planLayout, policyId } from '../arena/common/layout.js';
import { openArenaFile } from '../arena/common/file.js';
import { attachBuffer, checkArenaPath, mismatchError, releaseMappedArena } from '../arena/common/file-backing.js';
import { requireNative } from '../native/addon.js';
import { abandonAllFlights } from './flights.js';
import { readHandle } from './handle.js';
import { Outbox } from './outbox.js';
import { mismatchedOption, resolveAttachOptions, resolveOpenOptions, resolveOptions } from './options.js';

/** The key under which open() and attach() hand the constructor the parts of an existing arena. */
export const kAttach = Symbol('attach');

/**
 * The cache arena as a kind of file content (see openArenaFile): how a new
 * one is written into a mapped file, an existing one attached, and one left
 * by exited processes recovered, fetch's flight table with it (flights.js
 * lives beside fetch, above the arena). BlockStore has a kind of its own.
 */
export const CACHE_ARENA = Object.freeze({
  magic: MAGIC,
  create(buffer, { layout, settings }, options, file) {
    const arena = Arena.initialize(buffer, layout, settings, options);
    recordOpen(buffer, { how: 'created', repaired: 0, lost: 0, checked: 0, at: Date.now(), ms: performance.now() - file.startedAt }, file, bootId());
    return arena;
  },
  attach: (buffer, options) => Arena.attach(buffer, options),
  // An opener that is not alone clears a mark the last closer left (see restart.js).
  join: (arena, file) => clearCleanMark(arena.buffer, file),
  // What a restart must check, and the record of it, are restart.js's.
  recover(arena, { rebuildLocked, file, verifyOnOpen = false }) {
    const at = Date.now();
    const boot = bootId();
    const found = judgeRestart(arena.buffer, file, boot, arena.header.layoutVersion);
    const how = verifyOnOpen ? 'checked' : found;
    // Asked for, every shard is checked inside open(); otherwise open()
    // checks for RESTART_CHECK_BUDGET_MS and leaves the rest to each shard's first use.
    const checkBudgetMs = verifyOnOpen ? Infinity : RESTART_CHECK_BUDGET_MS;
    const result = arena.recoverAfterRestart({ rebuildLocked, trustPages: how !== 'checked', checkBudgetMs });
    abandonAllFlights(arena.buffer, arena.header);
    recordOpen(arena.buffer, { how, ...result, at, ms: performance.now() - file.startedAt }, file, boot);
    return result.repaired;
  },
});

/** The settings the arena header keeps, from resolved options. */
function settingsOf(resolved) {
  return {
    defaultTtl: resolved.ttl,
    lockLeaseMs: resolved.lockLeaseMs,
    lockWaitMs: resolved.lockWaitMs,
    max: resolved.max,
    codecName: resolved.codec.name,
    ttlResolution: resolved.ttlResolution,
    sweepIntervalMs: resolved.sweepIntervalMs,
    sweepChecks: resolved.sweepChecks,
    fetchTimeoutMs: resolved.fetchTimeoutMs,
    recordChecksums: resolved.checksums === true,
    defaultStaleMs: resolved.staleWhileRevalidate,
  };
}

function codecMismatch(stored, given, method) {
  return new ArenaCacheError(
    codes.ERR_CODEC_MISMATCH,
    `the cache was created with the codec "${stored}" but ${method} was given "${given}"; pass the same codec in options.codec`,
  );
}

/**
 * The parts of a cache in a new SharedArrayBuffer (new SharedCache(options)).
 * @param {import('./options.js').DEFAULTS} options
 */
export function createParts(options) {
  const resolved = resolveOptions(options);
  const layout = planLayout({ ...resolved, policy: policyId(resolved.policy) });
  const arena = Arena.create(layout, settingsOf(resolved));
  return { arena, codec: resolved.codec, path: null, mapped: false, outbox: Outbox.create(), nearCache: resolved.nearCache, nearCacheBytes: resolved.nearCacheBytes };
}

/**
 * SharedCache.attach(): `construct(parts)` for the arena `handle` names, in
 * this process's mapping of its file when it has one (a mapped file counts
 * its users in this process; see close()).
 * @template T
 * @param {import('./handle.js').CacheHandle} handle
 * @param {{ codec?: object } | undefined} options
 * @param {(parts: object) => T} construct
 * @returns {T}
 */
export function attachParts(handle, options, construct) {
  const { buffer, path, outbox } = readHandle(handle);
  const resolved = resolveAttachOptions(options);
  return attachBuffer(buffer, (attachOptions, mapped) => {
    const arena = Arena.attach(buffer, attachOptions);
    if (arena.header.codecName !== resolved.codec.name) throw codecMismatch(arena.header.codecName, resolved.codec.name, 'attach()');
    return construct({
      arena,
      codec: resolved.codec,
      path: mapped ? path : null,
      mapped,
      // A bare buffer has no outbox: that instance's writes are not published.
      outbox: outbox === null ? null : new Outbox(outbox),
      nearCache: resolved.nearCache,
      nearCacheBytes: resolved.nearCacheBytes,
    });
  });
}

/**
 * SharedCache.open(): `construct(parts)` for the arena in the file at `path`,
 * created when it does not exist and options.memoryBytes is given; the
 * options given must match what an existing file was created with.
 * @template T
 * @param {string} path
 * @param {import('./options.js').OPEN_DEFAULTS | undefined} options
 * @param {(parts: object) => T} construct
 * @returns {T}
 */
export function openParts(path, options, construct) {
  checkArenaPath(path);
  const { create, resolved, given, reset, mode, populate, verifyOnOpen } = resolveOpenOptions(options);
  requireNative('SharedCache.open()');
  const plan =
    create === null
      ? null
      : () => ({ memoryBytes: create.memoryBytes, layout: planLayout({ ...create, policy: policyId(create.policy) }), settings: settingsOf(create) });
  const { arena, created } = openArenaFile(path, { plan, reset, mode, populate, kind: CACHE_ARENA, recovery: { verifyOnOpen } });
  try {
    if (!created) {
      const mismatch = mismatchedOption(given, arena.header);
      if (mismatch !== null) throw mismatchError(`arena file ${path}`, mismatch.name, mismatch.stored, mismatch.given);
      if (arena.header.codecName !== resolved.codec.name) throw codecMismatch(arena.header.codecName, resolved.codec.name, 'open()');
    }
    return construct({ arena, codec: resolved.codec, path, mapped: true, outbox: Outbox.create(), nearCache: resolved.nearCache, nearCacheBytes: resolved.nearCacheBytes });
  } catch (error) {
    releaseMappedArena(arena);
    throw error;
  }
}

// What cache.stats() reports: the counters every thread keeps in the arena,
// summed, the arena's sizes, and the InvalidationBus counters this process
// keeps in its outbox, under the names docs/shared-cache.md lists.

import { COUNTERS, DROP_REASONS, dropCounter } from './outbox.js';

/** The invalidation counters of stats(), from the outbox's (zero without one), and the drops summed. */
function invalidationStats(outbox) {
  const counters = outbox === null ? Object.fromEntries(COUNTERS.map((name) => [name, 0])) : outbox.snapshot();
  let dropped = 0;
  for (const reason of DROP_REASONS) dropped += counters[dropCounter(reason)];
  return { ...counters, invalidationsDropped: dropped };
}

/**
 * The stats() object.
 * @param {object} header the arena header (policy, sizes, limits)
 * @param {{ totals: object, entries: number, liveBytes: number, usedBytes: number, smallEntries: number, smallShare: number }} arenaStats arena.stats()
 * @param {import('./outbox.js').Outbox | null} outbox this instance's outbox, null without one
 * @param {object | null} lastOpen how the file's last creating or recovering open went (restart.js lastOpen()), null in memory
 */
export function cacheStats(header, arenaStats, outbox, lastOpen = null) {
  const { totals, entries, liveBytes, usedBytes, smallEntries, smallShare } = arenaStats;
  const gets = totals.hits + totals.nearHits + totals.misses;
  return {
    policy: header.policyName,
    gets,
    hits: totals.hits + totals.nearHits,
    nearHits: totals.nearHits,
    misses: totals.misses,
    hitRatio: gets === 0 ? 0 : (totals.hits + totals.nearHits) / gets,
    sets: totals.sets,
    deletes: totals.deletes,
    increments: totals.increments,
    conditionalWrites: totals.conditionalWrites,
    conditionalMisses: totals.conditionalMisses,
    evictions: totals.evictions + totals.evictionsMax,
    evictionsMemory: totals.evictions,
    evictionsMax: totals.evictionsMax,
    expirations: totals.expirations,
    sweeps: totals.sweeps,
    sweptEntries: totals.sweptEntries,
    entries,
    smallEntries,
    smallShare,
    liveBytes,
    usedBytes,
    dataBytes: header.regionBytes * header.shardCount,
    memoryBytes: header.memoryBytes,
    maxEntries: header.max > 0 ? header.max : header.maxEntriesPerShard * header.shardCount,
    maxEntryBytes: header.regionBytes - header.smallRingBytes,
    shards: header.shardCount,
    threads: totals.threads,
    relocations: totals.relocations,
    promotions: totals.promotions,
    fetches: totals.fetches,
    fetchLoads: totals.fetchLoads,
    fetchWaits: totals.fetchWaits,
    fetchTimeouts: totals.fetchTimeouts,
    fetchErrors: totals.fetchErrors,
    fetchStale: totals.fetchStale,
    fetchUncached: totals.fetchUncached,
    readRetries: totals.readRetries,
    lockWaits: totals.lockWaits,
    lockTimeouts: totals.lockTimeouts,
    lockRecoveries: totals.lockRecoveries,
    shardRepairs: totals.shardRepairs,
    lostEntries: totals.lostEntries,
    checksumFailures: totals.checksumFailures,
    threadSlotRepairs: totals.threadSlotRepairs,
    lastOpen,
    ...invalidationStats(outbox),
  };
}

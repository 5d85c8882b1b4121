// What a RedisTier instance counts, and its Prometheus metrics. The counts
// are this instance's (one thread's): a machine's figures are the sum over
// its processes and threads, which is what prom-client's default
// aggregation of a cluster's registries does.

import { registerStatsMetrics } from '../cache/metrics.js';

/** The counters of one RedisTier instance, all starting at 0. */
export function newCounts() {
  return {
    gets: 0,
    localHits: 0,
    localMisses: 0,
    staleIfError: 0,
    staleWhileRevalidate: 0,
    redisReads: 0,
    redisHits: 0,
    redisMisses: 0,
    redisWrites: 0,
    redisDeletes: 0,
    redisErrors: 0,
    redisTimeouts: 0,
    reconnects: 0,
    loads: 0,
    lockWaits: 0,
  };
}

/** stats() of a tier: its counts by tier, and its holder's. */
export function tierStats(counts, holder, now) {
  const held = holder.counts;
  return {
    gets: counts.gets,
    local: { hits: counts.localHits, misses: counts.localMisses, staleIfError: counts.staleIfError, staleWhileRevalidate: counts.staleWhileRevalidate },
    redis: {
      reads: counts.redisReads,
      hits: counts.redisHits,
      misses: counts.redisMisses,
      writes: counts.redisWrites,
      deletes: counts.redisDeletes,
      errors: counts.redisErrors,
      timeouts: counts.redisTimeouts,
      reconnects: counts.reconnects,
    },
    loads: counts.loads,
    lockWaits: counts.lockWaits,
    holder: {
      holding: holder.holding,
      claims: held.claims,
      lostClaims: held.lostClaims,
      generationBumps: held.generationBumps,
      invalidations: held.invalidations,
      trackerLosses: held.trackerLosses,
      generation: holder.generation(),
      leaseRemainingMs: Math.max(0, holder.leaseUntil() - now),
    },
  };
}

// [name, type, help, value from stats(), label names of a split metric]
const TIER_METRICS = [
  ['gets_total', 'counter', 'Lookups by get(), getMany() and fetch().', (s) => s.gets],
  [
    'hits_total',
    'counter',
    'Lookups answered with a value, by the tier that held it: local (the machine\'s shared cache) or redis.',
    (s) => [
      [{ source: 'local' }, s.local.hits],
      [{ source: 'redis' }, s.redis.hits],
    ],
    ['source'],
  ],
  ['misses_total', 'counter', 'Lookups that found no value in either tier.', (s) => s.redis.misses],
  [
    'stale_served_total',
    'counter',
    'Values served past their freshness, by reason: while_revalidate (one refresh running) or if_error (Redis or the loader failed).',
    (s) => [
      [{ reason: 'while_revalidate' }, s.local.staleWhileRevalidate],
      [{ reason: 'if_error' }, s.local.staleIfError],
    ],
    ['reason'],
  ],
  ['redis_reads_total', 'counter', 'Values read from Redis (a local miss, or a local value no lease vouched for).', (s) => s.redis.reads],
  [
    'redis_writes_total',
    'counter',
    'Writes sent to Redis, by kind: set or delete.',
    (s) => [
      [{ kind: 'set' }, s.redis.writes],
      [{ kind: 'delete' }, s.redis.deletes],
    ],
    ['kind'],
  ],
  [
    'redis_errors_total',
    'counter',
    'Redis calls that failed, by code: ERR_REDIS_TIMEOUT or ERR_REDIS_UNAVAILABLE.',
    (s) => [
      [{ code: 'ERR_REDIS_TIMEOUT' }, s.redis.timeouts],
      [{ code: 'ERR_REDIS_UNAVAILABLE' }, s.redis.errors],
    ],
    ['code'],
  ],
  ['reconnects_total', 'counter', 'Reconnections of the Redis client.', (s) => s.redis.reconnects],
  ['loads_total', 'counter', 'Loader runs of fetch() in this instance.', (s) => s.loads],
  ['lock_waits_total', 'counter', 'fetch() loads that waited for another machine\'s loader (its lock in Redis).', (s) => s.lockWaits],
  ['invalidations_total', 'counter', 'Keys invalidated by Redis and applied by this instance while it held the tracking role.', (s) => s.holder.invalidations],
  ['generation_bumps_total', 'counter', 'Times this instance dropped every local copy at once (armed tracking, a flush, a lost tracking connection, clear()).', (s) => s.holder.generationBumps],
  ['tracker_losses_total', 'counter', 'Tracking connections lost while this instance held the role.', (s) => s.holder.trackerLosses],
  ['holding', 'gauge', '1 while this instance holds the machine\'s tracking connections.', (s) => (s.holder.holding ? 1 : 0)],
];

const TIER_SCHEMA = Object.freeze({ metrics: TIER_METRICS, label: 'tier', prefix: 'arenacache_redis_', what: 'RedisTier' });

/** Registers `tier` (stats(), closed) in a prom-client registry; returns a function that unregisters it. */
export function registerTierMetrics(tier, registry, options) {
  return registerStatsMetrics(tier, registry, options, TIER_SCHEMA);
}

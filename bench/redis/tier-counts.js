// Where a RedisTier answered gets from, for the Redis benchmark and demo:
// tier.stats() once the library has it ({ local: { hits }, redis: { reads } }),
// else the older tier.counts ({ localHits, redisReads }).

/** { localHits, redisReads, lockWaits } of `tier` so far (lockWaits: fetches that waited for another host's load; 0 before stats()). */
export function tierCounts(tier) {
  if (typeof tier.stats === 'function') {
    const stats = tier.stats();
    return { localHits: stats.local.hits, redisReads: stats.redis.reads, lockWaits: stats.lockWaits ?? 0 };
  }
  return { localHits: tier.counts.localHits, redisReads: tier.counts.redisReads, lockWaits: 0 };
}

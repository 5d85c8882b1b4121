// Where a RedisTier answered gets from, for the Redis benchmark and demo:
// tier.stats() once the library has it ({ local: { hits }, redis: { reads } }),
// else the older tier.counts ({ localHits, redisReads }).

/** { localHits, redisReads } of `tier` so far. */
export function tierCounts(tier) {
  if (typeof tier.stats === 'function') {
    const stats = tier.stats();
    return { localHits: stats.local.hits, redisReads: stats.redis.reads };
  }
  return { localHits: tier.counts.localHits, redisReads: tier.counts.redisReads };
}

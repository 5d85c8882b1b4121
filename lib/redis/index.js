// arenacache/redis: a machine-wide client-side cache for Redis and Redis
// Cluster (docs/redis-tier.md). The tier is the class; the holder and the
// trackers behind it are internal.
export { RedisTier, TIER_DEFAULTS } from './tier.js';

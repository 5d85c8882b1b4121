// Type declarations for 'arenacache/redis' (lib/redis/index.js): a
// machine-wide client-side cache for Redis and Redis Cluster, invalidated by
// Redis itself (docs/redis-tier.md).
//
// ioredis is an optional peer dependency, so its types are not imported:
// the client is described by what the tier uses of it, which an ioredis
// `Redis` and `Cluster` both are (test/types/redis.ts checks it).

import type { MetricsRegistry, RegisterMetricsOptions, SharedCache } from './index.js';

/** An ioredis `Redis` (one server) or `Cluster` client, described by what the tier uses of it. */
export interface IoredisClient {
  readonly options: object;
  pipeline(): unknown;
  getBuffer(key: string): Promise<Buffer | null>;
  on(event: string, listener: (...args: any[]) => void): unknown;
  off(event: string, listener: (...args: any[]) => void): unknown;
}

/** Options of `new RedisTier(options)`. Unknown names are a TypeError. */
export interface RedisTierOptions {
  /** The machine's first tier: a SharedCache, file-backed (`SharedCache.open`) to share it with every process of the machine. The caller owns it. */
  cache: SharedCache<any, any>;
  /** An ioredis `Redis` or `Cluster` client (a cluster must read from masters), connected by the caller and left open by close(). */
  redis: IoredisClient;
  /** Redis keys are `${namespace}:${key}`; tracking hears the prefix `${namespace}:`. One namespace of one cache caches one Redis deployment. */
  namespace: string;
  /** The ioredis Redis class to make the tracking connections with, from the client's options. Default: the client's `duplicate()` (for a Cluster, of each master's connection). */
  Redis?: (new (options: object) => any) | undefined;
  /** The longest one Redis call may take before the tier's call fails with ERR_REDIS_TIMEOUT (ms). Default 500. */
  deadlineMs?: number | undefined;
  /** The ttl of values stored without one (ms; 0: none). Default 0. */
  ttl?: number | undefined;
  /** How long past its ttl a value stays in Redis and may be served stale by fetch() while one refresh runs (ms). Default 0. */
  staleWhileRevalidate?: number | undefined;
  /** Whether a read whose Redis call fails may answer with this machine's copy, unverified or stale. Default true. */
  staleIfError?: boolean | undefined;
  /** How long a fetch() loader may hold its key's lock in Redis, and others wait for it (ms). Default 10000. */
  loadTimeoutMs?: number | undefined;
  /** How long after a round of pings to every tracked server local values are served without asking Redis (ms). Default 300. */
  leaseMs?: number | undefined;
}

/** Options of `tier.fetch(key, loader, options)`. */
export interface RedisTierFetchOptions {
  /** How the loaded value is stored in Redis (ms; 0: no expiry). Default: the tier's `ttl`. */
  ttl?: number | undefined;
  /** Return a value in its stale window at once while one refresh runs. Default true. */
  allowStale?: boolean | undefined;
  /** Load even over a fresh value. Default false. */
  forceRefresh?: boolean | undefined;
  /** When the loader fails and a stale value was found, resolve with it. Default false. */
  allowStaleOnFetchRejection?: boolean | undefined;
  /** One loader in the whole deployment (a lock in Redis), not only one per machine. Default true. */
  acrossHosts?: boolean | undefined;
  /** How long the loader may hold the key's lock, and others wait for it (ms). Default: the tier's `loadTimeoutMs`. */
  loadTimeoutMs?: number | undefined;
}

/** What a fetch() loader is given besides the key. */
export interface RedisTierLoaderContext<Value> {
  /** The stale value a refresh replaces, if any. */
  staleValue: Value | undefined;
}

/** `tier.stats()`: this instance's counts (one thread's), by tier. */
export interface RedisTierStats {
  /** Lookups by get(), getMany() and fetch(). */
  gets: number;
  local: {
    /** Answered from the machine's shared cache, vouched for by the lease. */
    hits: number;
    /** Not answered locally (missing, or no lease): read from Redis. */
    misses: number;
    /** Answered with this machine's copy because Redis failed, or with a stale value because the loader failed. */
    staleIfError: number;
    /** Answered with a stale value while one refresh ran. */
    staleWhileRevalidate: number;
  };
  redis: {
    reads: number;
    hits: number;
    misses: number;
    writes: number;
    deletes: number;
    /** Calls that failed with ERR_REDIS_UNAVAILABLE. */
    errors: number;
    /** Calls that failed with ERR_REDIS_TIMEOUT. */
    timeouts: number;
    /** Reconnections of the client. */
    reconnects: number;
  };
  /** Loader runs in this instance. */
  loads: number;
  /** Loads that waited for another machine's loader. */
  lockWaits: number;
  holder: {
    /** Whether this instance holds the machine's tracking connections. */
    holding: boolean;
    claims: number;
    lostClaims: number;
    generationBumps: number;
    invalidations: number;
    trackerLosses: number;
    /** The generation local entries are keyed by (a bump drops them all). */
    generation: number;
    /** How much longer local values are served without asking Redis (ms; 0: none now). */
    leaseRemainingMs: number;
  };
}

/** The tier's options and their defaults. */
export declare const TIER_DEFAULTS: Readonly<Required<Omit<RedisTierOptions, 'cache' | 'redis' | 'namespace' | 'Redis'>>> & {
  readonly cache: undefined;
  readonly redis: undefined;
  readonly namespace: undefined;
  readonly Redis: undefined;
};

/**
 * A SharedCache in front of Redis: reads served from the machine's shared
 * memory while Redis's tracking vouches for them, writes to Redis. Values
 * travel through Redis as msgpack.
 */
export declare class RedisTier<Value = any> {
  #private;

  /** TypeError or RangeError for bad options; ERR_REDIS_NAMESPACE when the namespace already caches another deployment. */
  constructor(options: RedisTierOptions);

  /** The value of `key`, or undefined. Rejects with ERR_REDIS_TIMEOUT or ERR_REDIS_UNAVAILABLE when Redis must be asked and cannot answer (and staleIfError has nothing to serve). */
  get(key: string, options?: { allowStale?: boolean | undefined }): Promise<Value | undefined>;

  /** The values of `keys`, in order, undefined for each missing key. */
  getMany(keys: string[], options?: { allowStale?: boolean | undefined }): Promise<Array<Value | undefined>>;

  /** The value of `key`, or what `loader` returns (stored in Redis), one loader per key in the deployment. */
  fetch(key: string, loader: (key: string, context: RedisTierLoaderContext<Value>) => Value | Promise<Value>, options?: RedisTierFetchOptions): Promise<Value>;

  /** Stores `value` in Redis, then drops this machine's copy. */
  set(key: string, value: Value, options?: { ttl?: number | undefined }): Promise<void>;

  /** Deletes `key` in Redis, then this machine's copy. */
  delete(key: string): Promise<void>;

  /** Deletes every key of the namespace in Redis and drops this machine's copies. */
  clear(): Promise<void>;

  /** This instance's counts, by tier. */
  stats(): RedisTierStats;

  /** Exposes stats() in a prom-client registry (arenacache_redis_*, label tier=`name`). Returns a function that removes them. */
  registerMetrics(registry: MetricsRegistry, options?: RegisterMetricsOptions): () => void;

  /** Stops tracking here (another process takes over) and closes the tier's own cache instance; the cache and client given stay open. */
  close(): void;

  /** Whether close() was called. */
  get closed(): boolean;
}

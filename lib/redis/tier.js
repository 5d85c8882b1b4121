// RedisTier: a machine's SharedCache in front of Redis (standalone or
// Cluster). Reads are served from the shared cache while the
// TrackingHolder's lease says every invalidation Redis sent has been
// applied; writes go to Redis and drop the local copy (Redis reports every
// write, this one included, to the holder: storing the written value here
// could not tell which of two hosts' writes Redis kept last).
//
// No older value after an invalidation: a miss first puts a placeholder
// under the entry key (add), notes the entry's version, then reads Redis,
// and stores what it read only with compareAndSet on that version. An
// invalidation that arrives after the version was noted deletes the
// placeholder, so the store fails, and one that arrived before it came from
// a write the read already sees (Redis's own "caching in progress" recipe,
// made atomic by the shard lock).
//
// Stale windows live in Redis: a value stored with ttl T is kept there for
// T + staleWhileRevalidate, and a reader that finds less than the window
// left (PTTL) knows it is stale, whichever host wrote it. Values travel
// through Redis as msgpack (msgpackr), so any host and any other client can
// read and write them; in the shared cache they are stored as values.
//
// The tier's writes to the shared cache (entries, the holder's claim, lease
// and generation) go through an instance of its own that no
// InvalidationBus publishes: they are this machine's bookkeeping.

import { randomBytes } from 'node:crypto';
import { pack, unpack } from 'msgpackr';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { kUnpublished } from '../internal-symbols.js';
import { checkBoolean, checkFunction, checkInteger, checkObject, withDefaults } from '../validate.js';
import { checkStaleWindow, checkTtl } from '../cache/options.js';
import { entryKey, stateKeys, TrackingHolder } from './holder.js';
import { checkClient, checkRedisClass, endpointOf, isCluster, trackedServers, within } from './redis-client.js';
import { newCounts, registerTierMetrics, tierStats } from './tier-stats.js';

/** The placeholder of a read in flight: no value the tier stores is this Buffer (a Redis value is decoded msgpack, never a Buffer equal to it). */
const PENDING = Buffer.from('00616372 2070656e 64696e67 00ff00ff'.replace(/ /g, ''), 'hex');

/** `bytes` of `key` decoded; ERR_REDIS_VALUE when they are not msgpack (another client wrote something else). */
function decode(key, bytes) {
  let value;
  try {
    value = unpack(bytes);
  } catch (cause) {
    throw new ArenaCacheError(codes.ERR_REDIS_VALUE, `the value of ${describe(key)} in Redis is not msgpack (${bytes.length} bytes): ${cause.message}`, { cause });
  }
  // 0xC1 is the one byte msgpack never uses; msgpackr hands back a marker object for it.
  if (value?.constructor?.name === 'C1Type') throw new ArenaCacheError(codes.ERR_REDIS_VALUE, `the value of ${describe(key)} in Redis is not msgpack (it holds the unused type 0xC1)`);
  return value;
}

function isPending(value) {
  return value instanceof Uint8Array && Buffer.compare(value, PENDING) === 0;
}

/** How many entry keys a tier remembers (see #entryKey) before it starts again. */
const ENTRY_KEYS_REMEMBERED = 4096;

/** Deletes a lock only while it is still the caller's (KEYS[1] holds ARGV[1]): a lapsed lock another loader took is left alone. */
const RELEASE_LOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** The tier's options and their defaults (docs/redis-tier.md describes each). */
export const TIER_DEFAULTS = Object.freeze({
  /** The machine's first tier: a SharedCache (file-backed for every process of the machine). Required. */
  cache: undefined,
  /** An ioredis Redis or Cluster client, connected by the caller and left open by close(). Required. */
  redis: undefined,
  /** Redis keys are `${namespace}:${key}`; tracking hears the prefix `${namespace}:`. Required. */
  namespace: undefined,
  /** The ioredis Redis class to make the tracking connections with, from the client's options; default: the client's duplicate() (for a Cluster, of each master's connection). */
  Redis: undefined,
  /** The longest one Redis call may take before the tier's call fails with ERR_REDIS_TIMEOUT (ms). */
  deadlineMs: 500,
  /** The ttl of values stored without one (ms; 0: none). */
  ttl: 0,
  /** How long past its ttl a value stays in Redis and may be served stale by fetch() while one refresh runs (ms; 0: none). */
  staleWhileRevalidate: 0,
  /** Whether a read whose Redis call fails may answer with the value this machine holds, unverified or stale. */
  staleIfError: true,
  /** How long a fetch() loader may hold its key's lock in Redis, and how long others wait for it (ms). */
  loadTimeoutMs: 10_000,
  /** How long after a round of pings to every tracked server local values may be served without asking Redis (ms). */
  leaseMs: 300,
});

/** Checks the per-call options of fetch(), over the tier's settings. */
const FETCH_DEFAULTS = Object.freeze({
  ttl: undefined,
  allowStale: true,
  forceRefresh: false,
  allowStaleOnFetchRejection: false,
  acrossHosts: true,
  loadTimeoutMs: undefined,
});

function checkKey(key) {
  if (typeof key !== 'string') throw new TypeError(`key must be a string (got ${describe(key)})`);
}

function checkSettings(settings) {
  if (typeof settings.namespace !== 'string' || settings.namespace === '' || settings.namespace.includes('\u0000')) {
    throw new TypeError(`options.namespace must be a non-empty string without NUL characters (got ${describe(settings.namespace)})`);
  }
  const { cache } = settings;
  if (cache === null || typeof cache !== 'object' || typeof cache.compareAndSet !== 'function' || typeof cache[kUnpublished] !== 'function') {
    throw new TypeError(`options.cache must be a SharedCache (got ${describe(cache)})`);
  }
  checkClient(settings.redis);
  checkRedisClass(settings.Redis);
  checkInteger(settings.deadlineMs, 'options.deadlineMs', 1, 600_000, { unit: 'milliseconds' });
  checkTtl(settings.ttl, 'options.ttl');
  checkStaleWindow(settings.staleWhileRevalidate, 'options.staleWhileRevalidate');
  checkBoolean(settings.staleIfError, 'options.staleIfError');
  checkInteger(settings.loadTimeoutMs, 'options.loadTimeoutMs', 1, 3_600_000, { unit: 'milliseconds' });
  checkInteger(settings.leaseMs, 'options.leaseMs', 1, 60_000, { unit: 'milliseconds' });
}

/** How a value read from Redis with `pttl` ms left (-1: no expiry) is kept locally, given the stale window: null when it is stale. */
function freshness(pttl, staleWindow) {
  if (pttl < 0) return { ttl: 0, staleWhileRevalidate: 0 };
  const fresh = pttl - staleWindow;
  return fresh > 0 ? { ttl: fresh, staleWhileRevalidate: staleWindow } : null;
}

export class RedisTier {
  /** The caller's cache, and the tier's own unpublished instance of it. */
  #given;
  #cache;
  #redis;
  #namespace;
  /** Where the machine's single flights of fetch() live in the cache (see #loadHere). */
  #flightPrefix;
  #settings;
  #holder;
  #counts = newCounts();
  /** Entry keys of the generation #keysGeneration, by key (see #entryKey). */
  #entryKeys = new Map();
  #keysGeneration = -1;
  #unwatch = () => {};
  #closed = false;
  /** Resolves when the client first becomes ready; null once it has been. */
  #firstReady = null;

  /** @param {typeof TIER_DEFAULTS} options */
  constructor(options) {
    checkObject(options, 'options');
    const settings = withDefaults(options, TIER_DEFAULTS, 'options');
    checkSettings(settings);
    const { cache: given, redis, namespace } = settings;
    // One namespace of one machine's cache caches one Redis deployment: a
    // second would be invalidated by the first one's tracking only.
    const cache = given[kUnpublished]();
    const endpoint = endpointOf(redis);
    const { endpointKey, flightPrefix } = stateKeys(namespace);
    cache.add(endpointKey, endpoint);
    const recorded = cache.get(endpointKey);
    if (recorded !== endpoint) {
      cache.close();
      throw new ArenaCacheError(
        codes.ERR_REDIS_NAMESPACE,
        `namespace ${describe(namespace)} of this cache already caches ${recorded}; this client is ${endpoint}: give each Redis deployment a namespace of its own`,
      );
    }
    this.#given = given;
    this.#cache = cache;
    this.#redis = redis;
    this.#namespace = namespace;
    this.#flightPrefix = flightPrefix;
    this.#settings = settings;
    this.#holder = new TrackingHolder({ cache, namespace, pingTimeoutMs: Math.max(settings.deadlineMs, 100), servers: () => trackedServers(redis, settings.Redis, settings.deadlineMs * 4) }).start();
    const reconnecting = () => this.#counts.reconnects++;
    const rearm = () => this.#holder.rearm();
    const ready = () => {
      this.#firstReady = null;
    };
    redis.on('reconnecting', reconnecting);
    // A client still making its first connection: calls wait for it (within
    // their deadline) rather than fail at once, so a tier made right after
    // its client works. Later outages fail fast.
    if (redis.status !== 'ready' && ['wait', 'connecting', 'connect'].includes(redis.status)) {
      this.#firstReady = new Promise((resolve) => redis.once('ready', resolve));
      this.#firstReady.then(ready);
    }
    // Each master of a cluster reports only its own keys: a master more or less is a new set of Trackers.
    if (isCluster(redis)) {
      redis.on('+node', rearm);
      redis.on('-node', rearm);
    }
    this.#unwatch = () => {
      redis.off('reconnecting', reconnecting);
      redis.off('+node', rearm);
      redis.off('-node', rearm);
    };
  }

  /**
   * The value of `key`: the machine's copy while the holder's lease vouches
   * for it, else Redis's (then kept); undefined when Redis has none. With
   * allowStale, a value in its stale window is returned too.
   * @param {string} key
   * @param {{ allowStale?: boolean }} [options]
   */
  async get(key, options) {
    this.#check();
    checkKey(key);
    let allowStale = false;
    if (options !== undefined) {
      allowStale = withDefaults(options, { allowStale: false }, 'options').allowStale;
      checkBoolean(allowStale, 'options.allowStale');
    }
    this.#counts.gets++;
    const entry = this.#entryKey(key);
    const local = this.#localHit(entry);
    if (local !== undefined) return local;
    const read = await this.#read(key, entry);
    if (read === undefined || (read.stale && !read.fallback && !allowStale)) return undefined;
    return read.value;
  }

  /**
   * The values of `keys` (an array of strings), in order, undefined for
   * each key Redis has none of: local copies at once, the others read from
   * Redis concurrently (each under the deadline).
   * @param {string[]} keys
   * @param {{ allowStale?: boolean }} [options]
   */
  async getMany(keys, options) {
    this.#check();
    if (!Array.isArray(keys)) throw new TypeError(`keys must be an array of strings (got ${describe(keys)})`);
    for (const key of keys) checkKey(key);
    return Promise.all(keys.map((key) => this.get(key, options)));
  }

  /**
   * The value of `key`, or, when Redis has none, what `loader(key,
   * { staleValue })` returns, stored in Redis (with `ttl`) and returned.
   * One loader per key at a time in the whole deployment: one per machine
   * (the cache's own fetch() on a side key, which other threads and
   * processes wait on), and, with acrossHosts, one across machines (a lock
   * in Redis, SET NX PX loadTimeoutMs, released by compare-and-delete;
   * other machines read the value it stores, or take the lock when it
   * lapses because its holder died). A stale value (see
   * staleWhileRevalidate) is returned at once while one refresh runs.
   * @param {string} key
   * @param {(key: string, context: { staleValue: unknown }) => unknown} loader
   * @param {Partial<typeof FETCH_DEFAULTS>} [options]
   */
  async fetch(key, loader, options) {
    this.#check();
    checkKey(key);
    checkFunction(loader, 'loader');
    const call = withDefaults(options ?? {}, FETCH_DEFAULTS, 'options');
    call.ttl ??= this.#settings.ttl;
    call.loadTimeoutMs ??= this.#settings.loadTimeoutMs;
    checkTtl(call.ttl, 'options.ttl');
    checkInteger(call.loadTimeoutMs, 'options.loadTimeoutMs', 1, 3_600_000, { unit: 'milliseconds' });
    for (const name of ['allowStale', 'forceRefresh', 'allowStaleOnFetchRejection', 'acrossHosts']) checkBoolean(call[name], `options.${name}`);
    this.#counts.gets++;
    let staleValue;
    if (!call.forceRefresh) {
      const entry = this.#entryKey(key);
      const local = this.#localHit(entry);
      if (local !== undefined) return local;
      let read;
      try {
        read = await this.#read(key, entry);
      } catch (error) {
        // Redis down, nothing here to serve: the loader answers (this
        // machine's loads are still one at a time), and nothing is stored.
        if (error?.code !== codes.ERR_REDIS_UNAVAILABLE && error?.code !== codes.ERR_REDIS_TIMEOUT) throw error;
        return this.#loadHere(key, loader, call, undefined, { store: false });
      }
      if (read !== undefined && (!read.stale || read.fallback)) return read.value;
      if (read !== undefined && call.allowStale) {
        this.#counts.staleWhileRevalidate++;
        this.#loadHere(key, loader, call, read.value, { store: true, refresh: true }).catch(() => {});
        return read.value;
      }
      staleValue = read?.value;
    }
    try {
      return await this.#loadHere(key, loader, call, staleValue, { store: true, force: call.forceRefresh });
    } catch (error) {
      if (call.allowStaleOnFetchRejection && staleValue !== undefined) {
        this.#counts.staleIfError++;
        return staleValue;
      }
      throw error;
    }
  }

  /** Stores `value` in Redis (with `ttl` ms, or the tier's; kept there a stale window longer), then drops the local copy. */
  async set(key, value, options) {
    this.#check();
    checkKey(key);
    const ttl = options === undefined ? this.#settings.ttl : withDefaults(options, { ttl: this.#settings.ttl }, 'options').ttl;
    checkTtl(ttl, 'options.ttl');
    if (value === undefined) throw new TypeError('value must not be undefined (delete() removes a key)');
    await this.#store(key, pack(value), ttl);
  }

  /** Deletes `key` in Redis, then the local copy. */
  async delete(key) {
    this.#check();
    checkKey(key);
    const redisKey = this.#redisKey(key);
    this.#counts.redisDeletes += await this.#call((redis) => redis.del(redisKey));
    this.#dropLocal(key);
  }

  /**
   * Deletes every key of the namespace in Redis (SCAN and UNLINK on every
   * master, under the deadline for each call), then drops this machine's
   * copies at once (a new generation); other machines drop theirs as Redis
   * reports the deletes.
   */
  async clear() {
    this.#check();
    const redis = this.#redis;
    const servers = isCluster(redis) ? redis.nodes('master') : [redis];
    const pattern = `${this.#namespace.replace(/[*?[\]\\]/g, '\\$&')}:*`;
    for (const server of servers) {
      let cursor = '0';
      do {
        const [next, keys] = await this.#call(() => server.scan(cursor, 'MATCH', pattern, 'COUNT', 1000));
        cursor = next;
        if (keys.length > 0) {
          // One UNLINK per key: a cluster refuses one command over keys of several slots.
          this.#counts.redisDeletes += await this.#call(async () => {
            const replies = await server.pipeline(keys.map((each) => ['unlink', each])).exec();
            let deleted = 0;
            for (const [error, count] of replies) {
              if (error) throw error;
              deleted += count;
            }
            return deleted;
          });
        }
      } while (cursor !== '0');
    }
    this.#holder.bump();
  }

  /** This instance's counts by tier, and its holder's (see docs/redis-tier.md#stats-and-metrics). */
  stats() {
    return tierStats(this.#counts, this.#holder, this.#settings.leaseMs, Date.now());
  }

  /**
   * Exposes stats() in a prom-client registry (arenacache_redis_gets_total,
   * ..._hits_total{source}, ...; label tier=`name`), read at scrape time.
   * Returns a function that removes them.
   */
  registerMetrics(registry, options) {
    return registerTierMetrics(this, registry, options);
  }

  /** Stops tracking (another process takes the role over) and closes the tier's own cache instance; the caller's cache and Redis client stay open. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#unwatch();
    this.#holder.close();
    this.#cache.close();
  }

  get closed() {
    return this.#closed;
  }

  /** The local value of `entry` (null: none can be kept) if the lease vouches for it, else undefined. */
  #localHit(entry) {
    if (entry === null) return undefined;
    const local = this.#cache.get(entry);
    if (local === undefined || isPending(local) || Date.now() - this.#holder.vouchedAt() >= this.#settings.leaseMs) return undefined;
    this.#counts.localHits++;
    return local;
  }

  /**
   * Redis's value of `key` as { value, stale }, or undefined; a fresh one is
   * kept in `entry` unless an invalidation came in meanwhile. When Redis
   * cannot answer, this machine's copy (stale or unverified) if allowed.
   */
  async #read(key, entry) {
    const cache = this.#cache;
    const counts = this.#counts;
    counts.localMisses++;
    if (entry === null) {
      // No copy can be kept (a key too long for the cache, or no generation now): Redis answers.
      const [bytes, pttl] = await this.#readRedis(this.#redisKey(key));
      return this.#decoded(key, bytes, pttl);
    }
    // Read before the placeholder takes the key: what stale-if-error serves.
    const kept = cache.get(entry, { allowStale: true });
    const fallback = kept === undefined || isPending(kept) ? undefined : kept;
    cache.add(entry, PENDING, { ttl: this.#settings.deadlineMs });
    // Noted before the read is sent: an invalidation after this changes it.
    const version = cache.info(entry)?.version;
    let bytes;
    let pttl;
    try {
      [bytes, pttl] = await this.#readRedis(this.#redisKey(key));
    } catch (error) {
      if (fallback !== undefined && this.#settings.staleIfError) {
        counts.staleIfError++;
        return { value: fallback, stale: true, fallback: true };
      }
      throw error;
    }
    const read = this.#decoded(key, bytes, pttl);
    if (read === undefined || read.stale || version === undefined) return read;
    try {
      cache.compareAndSet(entry, version, read.value, freshness(pttl, this.#settings.staleWhileRevalidate));
    } catch (error) {
      // A value too large for the cache is served without a copy.
      if (!(error instanceof RangeError)) throw error;
    }
    return read;
  }

  /** { value, stale } of what Redis returned (undefined for no value), counted; ERR_REDIS_VALUE for bytes that are not msgpack. */
  #decoded(key, bytes, pttl) {
    if (bytes === null) {
      this.#counts.redisMisses++;
      return undefined;
    }
    const value = decode(key, bytes);
    this.#counts.redisHits++;
    return { value, stale: freshness(pttl, this.#settings.staleWhileRevalidate) === null };
  }

  /**
   * The loader's value of `key`, one load at a time on this machine (every
   * thread and process of it waits for the one running), and with
   * acrossHosts one in the deployment. `store: false` (Redis down) returns
   * the loader's value without storing it; `refresh` gives up at once when
   * another machine is loading; `force` loads even over a value in Redis.
   */
  async #loadHere(key, loader, call, staleValue, how) {
    // A flight per kind: a refresh (which may load nothing) and a load with Redis down never answer a plain load's callers.
    const kind = how.refresh ? 'refresh' : how.store ? 'load' : 'down';
    const flight = `${this.#flightPrefix}${kind}:${key}`;
    // The flight's value is a one-element array, or an empty one for "nothing loaded" (a refresh left to another machine).
    const run = () => (how.store ? this.#loadOnce(key, loader, call, staleValue, how) : this.#runLoader(key, loader, staleValue).then((value) => [value]));
    // A key too long to name a flight loads in this thread alone.
    if (Buffer.byteLength(flight) > this.#cache.maxKeyBytes) return (await run())[0] ?? staleValue;
    const result = await this.#cache.fetch(flight, run, { ttl: call.loadTimeoutMs });
    this.#cache.delete(flight);
    if (result.length === 0) return staleValue;
    return result[0];
  }

  async #runLoader(key, loader, staleValue) {
    this.#counts.loads++;
    const value = await loader(key, { staleValue });
    if (value === undefined) throw new TypeError(`the loader of ${describe(key)} returned undefined; return null for "no value", or throw`);
    return value;
  }

  /** fetch() on one machine at a time: the value in Redis, or the loader's under the deployment-wide lock. */
  async #loadOnce(key, loader, call, staleValue, { refresh = false, force: forced = false }) {
    let force = forced;
    const redisKey = this.#redisKey(key);
    if (!call.acrossHosts) {
      const value = await this.#runLoader(key, loader, staleValue);
      await this.#store(key, pack(value), call.ttl);
      return [value];
    }
    const lockKey = `${this.#namespace}\u0001lock:${key}`;
    const token = randomBytes(12).toString('hex');
    const until = Date.now() + call.loadTimeoutMs;
    let waited = false;
    // The caller has just read Redis (or forces a load): the first round goes straight to the lock.
    for (let wait = 5, read = false; ; wait = Math.min(50, wait * 2), read = true) {
      if (read) {
        // Another machine's load (or a write) may have landed meanwhile.
        const value = await this.#freshInRedis(redisKey);
        if (value !== undefined) return [value];
      }
      if ((await this.#call((redis) => redis.set(lockKey, token, 'PX', call.loadTimeoutMs, 'NX'))) === 'OK') {
        const release = () => this.#call((redis) => redis.eval(RELEASE_LOCK, 1, lockKey, token)).catch(() => {});
        try {
          // A loader that finished between our read and the lock left its value: no second load.
          const landed = force ? undefined : await this.#freshInRedis(redisKey);
          if (landed !== undefined) return [landed];
          const value = await this.#runLoader(key, loader, staleValue);
          await this.#store(key, pack(value), call.ttl);
          return [value];
        } finally {
          // Not awaited: the value is stored, and the caller need not wait for the lock to go.
          void release();
        }
      }
      // Another machine is loading: a refresh leaves it to that one; a forced load takes its value.
      if (refresh) return [];
      force = false;
      if (!waited) {
        waited = true;
        this.#counts.lockWaits++;
      }
      if (Date.now() > until) {
        throw new ArenaCacheError(codes.ERR_FETCH_TIMEOUT, `fetch(): another machine's loader of ${describe(key)} held its lock for ${call.loadTimeoutMs} ms (options.loadTimeoutMs) without storing a value`);
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** Redis's value of `redisKey` if it is there and fresh, else undefined. */
  async #freshInRedis(redisKey) {
    const [bytes, pttl] = await this.#readRedis(redisKey);
    return bytes !== null && freshness(pttl, this.#settings.staleWhileRevalidate) !== null ? decode(redisKey, bytes) : undefined;
  }

  /** SET in Redis with the ttl plus the stale window (none without a ttl), then the local copy dropped. */
  async #store(key, bytes, ttl) {
    const redisKey = this.#redisKey(key);
    const keepMs = ttl > 0 ? ttl + this.#settings.staleWhileRevalidate : 0;
    await this.#call((redis) => (keepMs > 0 ? redis.set(redisKey, bytes, 'PX', keepMs) : redis.set(redisKey, bytes)));
    this.#counts.redisWrites++;
    this.#dropLocal(key);
  }

  /** [value bytes or null, PTTL] of `redisKey`, in one round trip under the deadline. */
  async #readRedis(redisKey) {
    const reply = await this.#call(async (redis) => {
      const replies = await redis.pipeline().getBuffer(redisKey).pttl(redisKey).exec();
      const failed = replies[0][0] ?? replies[1][0];
      if (failed) throw failed;
      return replies;
    });
    this.#counts.redisReads++;
    return [reply[0][1], reply[1][1]];
  }

  /**
   * The cache key of `key` in the current generation. Remembered for the
   * generation: a hit then looks up a string whose hash V8 already holds,
   * instead of building and hashing a new one (about a third of a hit).
   */
  #entryKey(key) {
    const generation = this.#holder.generation();
    // No generation (none yet, or its key was evicted): no copy is served or kept.
    if (generation === undefined) return null;
    if (generation !== this.#keysGeneration || this.#entryKeys.size >= ENTRY_KEYS_REMEMBERED) {
      this.#entryKeys.clear();
      this.#keysGeneration = generation;
    }
    let entry = this.#entryKeys.get(key);
    if (entry === undefined) {
      entry = entryKey(this.#namespace, generation, key);
      // A key too long for the cache is read through uncached (null).
      if (Buffer.byteLength(entry) > this.#cache.maxKeyBytes) entry = null;
      this.#entryKeys.set(key, entry);
    }
    return entry;
  }

  /** Drops this machine's copy of `key`, if it can have one. */
  #dropLocal(key) {
    const entry = this.#entryKey(key);
    if (entry !== null) this.#cache.delete(entry);
  }

  #redisKey(key) {
    return `${this.#namespace}:${key}`;
  }

  #check() {
    if (this.#closed || this.#given.closed) throw new ArenaCacheError(codes.ERR_CACHE_CLOSED, this.#closed ? 'the RedisTier is closed' : 'the RedisTier\'s cache is closed');
  }

  /** `run(redis)` under the deadline, failures counted by code. */
  async #call(run) {
    try {
      return await within(this.#settings.deadlineMs, async () => {
        if (this.#firstReady !== null) await this.#firstReady;
        return run(this.#redis);
      });
    } catch (error) {
      if (error.code === codes.ERR_REDIS_TIMEOUT) this.#counts.redisTimeouts++;
      else this.#counts.redisErrors++;
      throw error;
    }
  }
}

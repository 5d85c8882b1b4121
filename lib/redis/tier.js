// RedisTier (work in progress for issue 40): a machine's SharedCache in
// front of Redis. Reads are served from the shared cache while the
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
// Values travel through Redis as msgpack (msgpackr), so any host decodes
// them; in the shared cache they are stored as values.

import { randomBytes } from 'node:crypto';
import { pack, unpack } from 'msgpackr';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { entryKey, TrackingHolder } from './holder.js';

/** The placeholder of a read in flight: no value the tier stores is this Buffer (tier values are decoded msgpack). */
const PENDING = Buffer.from('00616372 2070656e 64696e67 00ff00ff'.replace(/ /g, ''), 'hex');

/** ERR_REDIS_UNAVAILABLE for an error of the Redis client (a dropped connection, a refused command). */
function unavailable(cause) {
  if (cause instanceof ArenaCacheError) return cause;
  return new ArenaCacheError(codes.ERR_REDIS_UNAVAILABLE, `the Redis call failed: ${cause?.message ?? cause}`, { cause });
}

/** What names a Redis deployment: the cluster's seed nodes, or the server's address (and database). */
function endpointOf(redis) {
  if (isCluster(redis)) {
    const nodes = (redis.startupNodes ?? []).map((node) => (typeof node === 'object' ? `${node.host ?? '127.0.0.1'}:${node.port ?? 6379}` : String(node)));
    return `cluster ${nodes.sort().join(',')}`;
  }
  const { host = 'localhost', port = 6379, path, db = 0 } = redis.options;
  return path ? `unix ${path} db ${db}` : `redis ${host}:${port} db ${db}`;
}

function isCluster(redis) {
  return typeof redis.nodes === 'function' && redis.isCluster === true;
}

/** The connection options of every server whose changes the tier must hear: a cluster's masters, or the one server. */
async function trackedServers(redis) {
  if (!isCluster(redis)) {
    const { host, port, username, password, tls } = redis.options;
    return [{ host, port, username, password, tls }];
  }
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  const { username, password, tls } = redis.options.redisOptions ?? {};
  return redis.nodes('master').map((node) => ({ host: node.options.host, port: node.options.port, username, password, tls }));
}

function isPending(value) {
  return Buffer.isBuffer(value) && value.equals(PENDING);
}

/** Deletes a lock only while it is still the caller's (KEYS[1] holds ARGV[1]): a lapsed lock another loader took is left alone. */
const RELEASE_LOCK = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/** The tier's settings and their defaults. */
export const TIER_DEFAULTS = Object.freeze({
  /** The longest a Redis call may take before the tier's call fails with ERR_REDIS_TIMEOUT (ms). */
  deadlineMs: 500,
  /** The ttl of values set without one (ms; 0: none). */
  ttl: 0,
  /** Whether a get whose Redis read fails may answer with the value this machine holds, unverified (counted in counts.staleIfError). */
  staleIfError: true,
});

export class RedisTier {
  #cache;
  #redis;
  #namespace;
  #settings;
  #holder;
  #unwatch = () => {};
  /** Where gets were answered, for stats and tests. */
  counts = { localHits: 0, redisReads: 0, staleIfError: 0, reconnects: 0 };

  /**
   * @param {object} options
   * @param {import('../cache/shared-cache.js').SharedCache} options.cache the machine's first tier
   * @param {any} options.redis an ioredis Redis (a standalone server) or Cluster (reads go to masters: a replica may lag an invalidation)
   * @param {any} options.Redis the ioredis Redis class, for the tracking connections
   * @param {string} options.namespace Redis keys are `${namespace}:${key}`
   */
  constructor({ cache, redis, Redis, namespace, ...settings }) {
    if (typeof namespace !== 'string' || namespace === '' || namespace.includes('\u0000')) {
      throw new TypeError(`options.namespace must be a non-empty string without NUL characters (got ${describe(namespace)})`);
    }
    if (cache === null || typeof cache !== 'object' || typeof cache.compareAndSet !== 'function') throw new TypeError(`options.cache must be a SharedCache (got ${describe(cache)})`);
    if (redis === null || typeof redis !== 'object' || typeof redis.pipeline !== 'function' || typeof redis.options !== 'object') {
      throw new TypeError(`options.redis must be an ioredis Redis or Cluster client (got ${describe(redis)})`);
    }
    if (typeof Redis !== 'function') throw new TypeError(`options.Redis must be the ioredis Redis class, for the tracking connections (got ${describe(Redis)})`);
    // One namespace of one machine's cache caches one Redis deployment: a
    // second would be invalidated by the first one's tracking only.
    const endpoint = endpointOf(redis);
    const endpointKey = `\u0000acr:${namespace}:endpoint`;
    cache.add(endpointKey, endpoint);
    const recorded = cache.get(endpointKey);
    if (recorded !== endpoint) {
      throw new ArenaCacheError(
        codes.ERR_REDIS_NAMESPACE,
        `namespace ${describe(namespace)} of this cache already caches ${recorded}; this client is ${endpoint}: give each Redis deployment a namespace of its own`,
      );
    }
    this.#cache = cache;
    this.#redis = redis;
    this.#namespace = namespace;
    this.#settings = { ...TIER_DEFAULTS, ...settings };
    const reconnecting = () => this.counts.reconnects++;
    redis.on('reconnecting', reconnecting);
    if (isCluster(redis) && (redis.options.scaleReads ?? 'master') !== 'master') {
      throw new RangeError(`the cluster's scaleReads must be 'master' (got ${describe(redis.options.scaleReads)}): a replica may answer with a value older than an invalidation already applied`);
    }
    this.#holder = new TrackingHolder({ cache, Redis, namespace, servers: () => trackedServers(redis) }).start();
    this.#unwatch = () => redis.off('reconnecting', reconnecting);
    if (isCluster(redis)) {
      // Each master reports only its own keys: a master more or less is a new set of Trackers.
      const rearm = () => this.#holder.rearm();
      redis.on('+node', rearm);
      redis.on('-node', rearm);
      this.#unwatch = () => {
        redis.off('reconnecting', reconnecting);
        redis.off('+node', rearm);
        redis.off('-node', rearm);
      };
    }
  }

  /** The value of `key`: the shared cache's while its lease holds, else Redis's (then kept). */
  async get(key) {
    const redisKey = this.#redisKey(key);
    const cache = this.#cache;
    const entry = entryKey(this.#namespace, this.#holder.generation(), key);
    const local = cache.get(entry);
    if (local !== undefined && !isPending(local) && Date.now() < this.#holder.leaseUntil()) {
      this.counts.localHits++;
      return local;
    }
    this.counts.redisReads++;
    cache.add(entry, PENDING, { ttl: this.#settings.deadlineMs });
    // Noted before the read is sent: an invalidation after this changes it.
    const version = cache.info(entry)?.version;
    let stored;
    try {
      stored = await this.#call((redis) => redis.pipeline().getBuffer(redisKey).pttl(redisKey).exec());
      if (stored[0][0]) throw unavailable(stored[0][0]);
    } catch (error) {
      // Redis down or slow: the value this machine holds, if allowed, as it is.
      if (local !== undefined && !isPending(local) && this.#settings.staleIfError) {
        this.counts.staleIfError++;
        return local;
      }
      throw error;
    }
    const [[, bytes], [, pttl]] = stored;
    if (bytes === null) return undefined;
    const value = unpack(bytes);
    if (version !== undefined) cache.compareAndSet(entry, version, value, { ttl: pttl > 0 ? pttl : 0 });
    return value;
  }

  /**
   * The value of `key`, or, when Redis has none, what `loader(key)` returns,
   * stored in Redis (with `ttl`) and returned. One loader per key at a time
   * in the whole deployment: one per machine (the cache's own fetch() on a
   * side key, which other threads and processes wait on), and one across
   * machines (a lock in Redis, SET NX PX loadTimeoutMs, released by
   * compare-and-delete; other machines read the value it stores, or take
   * the lock when it lapses because its holder died).
   * @param {string} key
   * @param {(key: string) => unknown} loader
   * @param {{ ttl?: number, loadTimeoutMs?: number }} [options]
   */
  async fetch(key, loader, { ttl = this.#settings.ttl, loadTimeoutMs = 10_000 } = {}) {
    this.#redisKey(key);
    if (typeof loader !== 'function') throw new TypeError(`loader must be a function (got ${describe(loader)})`);
    const cached = await this.get(key);
    if (cached !== undefined) return cached;
    const flight = `\u0000acr:${this.#namespace}:flight:${key}`;
    const value = await this.#cache.fetch(flight, () => this.#loadOnce(key, loader, ttl, loadTimeoutMs), { ttl: loadTimeoutMs });
    this.#cache.delete(flight);
    return value;
  }

  /** fetch() on one machine at a time: the value in Redis, or the loader's under the deployment-wide lock. */
  async #loadOnce(key, loader, ttl, loadTimeoutMs) {
    const redisKey = this.#redisKey(key);
    const lockKey = `${this.#namespace}\u0001lock:${key}`;
    const token = randomBytes(12).toString('hex');
    const until = Date.now() + loadTimeoutMs;
    for (let wait = 5; ; wait = Math.min(50, wait * 2)) {
      const bytes = await this.#call((redis) => redis.getBuffer(redisKey));
      if (bytes !== null) return unpack(bytes);
      if ((await this.#call((redis) => redis.set(lockKey, token, 'PX', loadTimeoutMs, 'NX'))) === 'OK') {
        try {
          const value = await loader(key);
          if (value !== undefined) await this.set(key, value, { ttl });
          return value;
        } finally {
          await this.#call((redis) => redis.eval(RELEASE_LOCK, 1, lockKey, token)).catch(() => {});
        }
      }
      if (Date.now() > until) {
        throw new ArenaCacheError(codes.ERR_FETCH_TIMEOUT, `fetch(): another machine's loader of ${describe(key)} held its lock for ${loadTimeoutMs} ms (options.loadTimeoutMs) without storing a value`);
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  /** Stores `value` in Redis (with `ttl` ms, or the tier's), then drops the local copy. */
  async set(key, value, { ttl = this.#settings.ttl } = {}) {
    const redisKey = this.#redisKey(key);
    const bytes = pack(value);
    await this.#call((redis) => (ttl > 0 ? redis.set(redisKey, bytes, 'PX', ttl) : redis.set(redisKey, bytes)));
    this.#cache.delete(entryKey(this.#namespace, this.#holder.generation(), key));
  }

  /** Deletes `key` in Redis, then the local copy. */
  async delete(key) {
    const redisKey = this.#redisKey(key);
    await this.#call((redis) => redis.del(redisKey));
    this.#cache.delete(entryKey(this.#namespace, this.#holder.generation(), key));
  }

  /**
   * Deletes every key of the namespace in Redis (SCAN and UNLINK on every
   * master, under the deadline for each call), then drops this machine's
   * copies at once (a new generation); other machines drop theirs as Redis
   * reports the deletes.
   */
  async clear() {
    const redis = this.#redis;
    const servers = isCluster(redis) ? redis.nodes('master') : [redis];
    for (const server of servers) {
      let cursor = '0';
      do {
        const [next, keys] = await this.#call(() => server.scan(cursor, 'MATCH', `${this.#namespace}:*`, 'COUNT', 1000));
        cursor = next;
        if (keys.length > 0) await this.#call(() => server.unlink(...keys));
      } while (cursor !== '0');
    }
    this.#holder.bump();
  }

  close() {
    this.#unwatch();
    this.#holder.close();
  }

  #redisKey(key) {
    if (typeof key !== 'string') throw new TypeError(`key must be a string (got ${describe(key)})`);
    return `${this.#namespace}:${key}`;
  }

  /** `run(redis)` under the deadline: ERR_REDIS_TIMEOUT past it, ERR_REDIS_UNAVAILABLE when Redis refuses or cannot be reached. */
  async #call(run) {
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new ArenaCacheError(codes.ERR_REDIS_TIMEOUT, `Redis did not answer within ${this.#settings.deadlineMs} ms (options.deadlineMs)`)),
        this.#settings.deadlineMs,
      );
    });
    try {
      return await Promise.race([
        (async () => {
          try {
            return await run(this.#redis);
          } catch (error) {
            throw unavailable(error);
          }
        })(),
        deadline,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

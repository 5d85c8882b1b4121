// Two tiers for many hosts: arenacache (this machine's shared memory: every
// worker thread, and with SharedCache.open() every process) in front of
// Redis (shared by every host), with an InvalidationBus over the same Redis
// that keeps each host's first tier coherent with the other hosts' writes.
//
// Built from cache-manager 7, Keyv 5, @keyv/redis 5 and arenacache/keyv.
// What cache-manager leaves to its user, and why it is done here:
//
// - Writes go to Redis first, then to the first tier through `cache`, whose
//   writes the bus publishes: every other host drops its copy, and it does
//   so after Redis holds the new value, so a host that reads Redis after the
//   invalidation cannot get the old value back. (cache-manager's own set()
//   writes every tier at once, and the invalidation could overtake the write
//   to Redis: a host reading in between would keep the old value.)
// - Fills (a Redis hit copied into the first tier) go through a second
//   instance on the same arena, attached from the bare buffer, whose writes
//   are NOT published. Were they published, a host filling a key would drop
//   every other host's copy, which would then fill and drop this one's: a
//   key read on two hosts would never stay in either first tier.
// - A fill, or a write's copy in the first tier, is skipped when the bus
//   applied an invalidation of that key while Redis was answering (the Redis
//   value may be the older one).
// - cache-manager's get() reads the tiers in order but never copies a
//   second-tier hit into the first tier (only wrap() does), so get() here
//   does the read-through itself, with the entry's remaining ttl.
// - A write that fails in Redis rejects, and the key is deleted from every
//   first tier (published) and, once Redis answers again, from Redis;
//   otherwise Redis would serve the value from before the write to every
//   host once it is back.

import KeyvRedis from '@keyv/redis';
import { createCache } from 'cache-manager';
import { Keyv } from 'keyv';
import { InvalidationBus, SharedCache } from 'arenacache';
import { KeyvArenaCache } from 'arenacache/keyv';

/** Failed writes remembered for deletion from Redis; beyond this, the namespace is cleared there instead. */
const MAX_UNSYNCED = 10_000;
const REPAIR_INTERVAL_MS = 1000;
/** Invalidated keys remembered while operations are in flight; beyond this, every operation in flight counts as raced. */
const MAX_TRACKED = 10_000;

/**
 * A KeyvRedis whose operations fail when Redis has not answered within
 * `timeoutMs`. node-redis's own command timeout stops counting once the
 * command is written to the socket, so a Redis that stalls (or a network
 * that drops packets without a reset) would hold every miss and every write
 * until the connection breaks, which TCP may take minutes to notice.
 * (clear() is left out: its SCAN takes as long as the namespace is large.)
 */
class KeyvRedisWithDeadline extends KeyvRedis {
  #timeoutMs;

  constructor(connect, options, timeoutMs) {
    super(connect, options);
    this.#timeoutMs = timeoutMs;
  }

  #deadline(operation, command) {
    let timer;
    const expired = new Promise((resolve, reject) => {
      timer = setTimeout(() => {
        const error = Object.assign(new Error(`Redis did not answer ${command} within ${this.#timeoutMs} ms`), { code: 'ETIMEDOUT' });
        this.emit('error', error);
        reject(error);
      }, this.#timeoutMs);
    });
    return Promise.race([operation, expired]).finally(() => clearTimeout(timer));
  }

  get(key) {
    return this.#deadline(super.get(key), 'GET');
  }

  getMany(keys) {
    return this.#deadline(super.getMany(keys), 'MGET');
  }

  has(key) {
    return this.#deadline(super.has(key), 'EXISTS');
  }

  hasMany(keys) {
    return this.#deadline(super.hasMany(keys), 'EXISTS');
  }

  set(key, value, ttl) {
    return this.#deadline(super.set(key, value, ttl), 'SET');
  }

  setMany(entries) {
    return this.#deadline(super.setMany(entries), 'SET');
  }

  delete(key) {
    return this.#deadline(super.delete(key), 'UNLINK');
  }

  deleteMany(keys) {
    return this.#deadline(super.deleteMany(keys), 'UNLINK');
  }
}

/**
 * @param {object} options
 * @param {SharedCache} options.cache this host's first tier (new SharedCache(), SharedCache.open(),
 *   or SharedCache.attach(handle) in a worker); stays yours to close
 * @param {string | Buffer} options.secret the bus secret, the same on every host (at least 16 bytes)
 * @param {string} [options.redisUrl] Redis, for both the second tier and the bus
 * @param {string} [options.busRedisUrl] another Redis for the bus (default: redisUrl)
 * @param {string} [options.namespace] keys are `<namespace>:<key>` in the arena, `<namespace>::<key>` in Redis
 * @param {number} [options.ttl] default ttl in ms for both tiers (cache-manager's `ttl`); none: no expiry
 * @param {string} [options.channel] the bus's pub/sub channel
 * @param {'clear' | 'keep'} [options.onReconnect] the bus's policy after Redis was away
 * @param {number} [options.redisTimeoutMs] a Redis operation (but clear()) or connection attempt fails after this
 * @param {(error: unknown) => void} [options.onError] errors of Redis, the bus and the tiers (each reconnect attempt too)
 * @param {boolean} [options.startBus] false in a worker thread whose cache is attached with
 *   SharedCache.attach(handle): the bus of the thread that started it publishes the worker's writes
 *   (one bus per cache and process)
 */
export async function createTieredCache(options) {
  const {
    cache,
    secret,
    redisUrl = 'redis://127.0.0.1:6379',
    busRedisUrl = redisUrl,
    namespace = 'app',
    ttl: defaultTtl,
    channel,
    onReconnect = 'clear',
    redisTimeoutMs = 1000,
    onError: reportError = () => {},
    startBus = true,
  } = options;
  if (!(cache instanceof SharedCache)) throw new TypeError('options.cache must be a SharedCache');
  const arenaKey = (key) => `${namespace}:${key}`;
  // One failure reaches the store's listener and every Keyv over it: report it once.
  const reported = new WeakSet();
  const onError = (error) => {
    if (error !== null && typeof error === 'object') {
      if (reported.has(error)) return;
      reported.add(error);
    }
    reportError(error);
  };

  // The bus publishes this host's writes under "<namespace>:" (those of
  // every thread attached with cache.handle) and applies the other hosts'.
  let bus = null;
  if (startBus) {
    bus = new InvalidationBus(cache, {
      secret,
      redis: { connection: busRedisUrl, onReconnect, ...(channel === undefined ? {} : { channel }) },
      prefixes: [`${namespace}:`],
    });
    bus.on('error', onError);
    await bus.start();
  }

  // One Redis connection. Without an offline queue, a command while Redis is
  // away fails at once instead of waiting for it to come back; an operation
  // Redis does not answer fails after redisTimeoutMs. The store rejects on
  // failures (throwOnErrors); each Keyv over it decides whether that is a miss.
  const redisStore = new KeyvRedisWithDeadline(
    {
      url: redisUrl,
      disableOfflineQueue: true,
      socket: { connectTimeout: redisTimeoutMs, reconnectStrategy: (retries) => Math.min(50 * 2 ** retries, 1000) },
    },
    { throwOnErrors: true },
    redisTimeoutMs,
  );
  redisStore.on('error', onError);
  const quiet = SharedCache.attach(cache.handle.buffer); // its writes are not published
  try {
    await redisStore.getClient(); // rejects (throwOnConnectError) when Redis cannot be reached
  } catch (error) {
    quiet.close();
    await bus?.close();
    throw error;
  }

  const keyv = (store, keyvOptions) => {
    const instance = new Keyv({ store, namespace, ...keyvOptions });
    instance.on('error', onError);
    return instance;
  };
  // Writes: a failure rejects. Reads and fills: a failure is a miss, a failed fill no fill.
  const firstTier = keyv(new KeyvArenaCache(cache), { throwOnErrors: true });
  const secondTier = keyv(redisStore, { useKeyPrefix: false, throwOnErrors: true });
  const firstTierFill = keyv(new KeyvArenaCache(quiet));
  const secondTierRead = keyv(redisStore, { useKeyPrefix: false });
  // cache-manager over the read tiers: wrap() and ttl() (and get() without the fill).
  const reads = createCache({ stores: [firstTierFill, secondTierRead], ttl: defaultTtl });

  // --- Races with the bus: which keys it invalidated while operations were in flight.
  let epoch = 0;
  let inFlight = 0;
  let clearedAt = 0; // a clear, or a reconnect (onReconnect 'clear')
  let forgottenAt = 0; // the latest epoch dropped from `invalidatedAt`
  const invalidatedAt = new Map(); // arena key -> epoch, oldest first
  bus?.on('received', ({ invalidations }) => {
    if (inFlight === 0) return; // nothing can have raced
    for (const { op, key } of invalidations) {
      epoch++;
      if (op !== 'set' && op !== 'delete') {
        clearedAt = epoch;
        continue;
      }
      invalidatedAt.delete(key);
      invalidatedAt.set(key, epoch);
      if (invalidatedAt.size > MAX_TRACKED) {
        const [oldest, at] = invalidatedAt.entries().next().value;
        invalidatedAt.delete(oldest);
        forgottenAt = at;
      }
    }
  });
  bus?.on('reconnect', () => {
    clearedAt = ++epoch;
  });
  async function guarded(operation) {
    inFlight++;
    const since = epoch;
    const raced = (key) => clearedAt > since || forgottenAt > since || (invalidatedAt.get(arenaKey(key)) ?? 0) > since;
    try {
      return await operation(raced);
    } finally {
      if (--inFlight === 0) invalidatedAt.clear();
    }
  }

  // --- Writes that Redis did not take, to delete there once it answers.
  const unsynced = new Set();
  let unsyncedOverflow = false;
  function redisFailed(keys) {
    for (const key of keys) {
      cache.delete(arenaKey(key)); // here, and published to every host
      if (unsynced.size < MAX_UNSYNCED) unsynced.add(key);
      else unsyncedOverflow = true;
    }
  }
  /** Runs `operation`; false when Redis failed meanwhile (KeyvRedis reports a failed clear only as an event). */
  async function redisSucceeds(operation) {
    let failed = !redisStore.client.isReady;
    const mark = () => {
      failed = true;
    };
    redisStore.on('error', mark);
    try {
      await operation();
    } finally {
      redisStore.off('error', mark);
    }
    return !failed && redisStore.client.isReady;
  }
  let repairing = null;
  async function repair() {
    if (!redisStore.client.isReady) return;
    if (unsyncedOverflow) {
      // Too many keys to remember: the namespace goes, in Redis, then in every first tier.
      if (!(await redisSucceeds(() => secondTier.clear()))) return;
      unsyncedOverflow = false;
      unsynced.clear();
      await firstTier.clear();
      return;
    }
    if (unsynced.size === 0) return;
    const keys = [...unsynced];
    await secondTier.deleteMany(keys);
    for (const key of keys) {
      unsynced.delete(key);
      // Again, now that Redis lost the old value: a host that filled it
      // from Redis meanwhile drops it.
      cache.delete(arenaKey(key));
    }
  }
  function startRepair() {
    repairing ??= repair()
      .catch(onError)
      .finally(() => {
        repairing = null;
      });
    return repairing;
  }
  redisStore.client.on('ready', startRepair);
  const repairTimer = setInterval(startRepair, REPAIR_INTERVAL_MS).unref();

  /** Redis first; then each entry into the first tier (published), or, when raced, its key dropped everywhere. */
  async function write(entries) {
    return guarded(async (raced) => {
      try {
        if (entries.length === 1) await secondTier.set(entries[0].key, entries[0].value, entries[0].ttl);
        else await secondTier.setMany(entries); // one MULTI
      } catch (error) {
        redisFailed(entries.map(({ key }) => key));
        throw error;
      }
      for (const { key, value, ttl } of entries) {
        unsynced.delete(key);
        if (raced(key)) {
          // Another host wrote it meanwhile; which write Redis kept last is unknown here.
          cache.delete(arenaKey(key));
          continue;
        }
        try {
          await firstTier.set(key, value, ttl);
        } catch (error) {
          // Too large for the arena, say: Redis has it, no first tier keeps an older one.
          cache.delete(arenaKey(key));
          onError(error);
        }
      }
    });
  }

  /** Redis first, then every first tier. */
  async function remove(keys) {
    try {
      await secondTier.deleteMany(keys);
    } catch (error) {
      redisFailed(keys);
      throw error;
    }
    for (const key of keys) {
      unsynced.delete(key);
      cache.delete(arenaKey(key));
    }
  }

  return {
    cache,
    /** The InvalidationBus started here, or null (startBus: false). */
    bus,
    /** cache-manager over [first tier (fills, not published), Redis]. */
    reads,

    /**
     * The value from the first tier, else from Redis (then copied into the
     * first tier with the entry's remaining ttl, unless the bus invalidated
     * the key meanwhile), else undefined.
     */
    async get(key) {
      const local = await firstTierFill.get(key);
      if (local !== undefined) return local;
      return guarded(async (raced) => {
        const entry = await secondTierRead.get(key, { raw: true });
        if (entry === undefined) return undefined;
        const remaining = typeof entry.expires === 'number' ? entry.expires - Date.now() : undefined;
        if (remaining !== undefined && remaining <= 0) return undefined;
        // Nothing but promise jobs from here to the store: the bus cannot apply anything in between.
        if (!raced(key)) await firstTierFill.set(key, entry.value, remaining);
        return entry.value;
      });
    },

    /**
     * cache-manager's wrap() over the read tiers: the first tier, else Redis
     * (copied into the first tier with the wrap's ttl, or the default), else
     * `load()`, stored in both (not published).
     */
    wrap: (key, load, wrapTtl) => reads.wrap(key, load, wrapTtl),
    /** Expiry time (ms since the epoch) of the entry, or undefined. */
    ttl: (key) => reads.ttl(key),

    /** Redis, then this host's first tier; the other hosts drop their copy. Rejects when Redis fails. */
    async set(key, value, ttl) {
      await write([{ key, value, ttl: ttl ?? defaultTtl }]);
      return value;
    },
    async mset(list) {
      const entries = list.map(({ key, value, ttl }) => ({ key, value, ttl: ttl ?? defaultTtl }));
      await write(entries);
      return entries;
    },
    async del(key) {
      await remove([key]);
      return true;
    },
    async mdel(keys) {
      await remove(keys);
      return true;
    },
    /** The namespace, in Redis and in every first tier. Rejects when Redis fails (it is cleared there once back). */
    async clear() {
      const ok = await redisSucceeds(() => secondTier.clear());
      await firstTier.clear(); // each key's delete is published
      if (ok) return true;
      unsyncedOverflow = true;
      throw new Error(`Redis did not clear the namespace ${namespace}: it will be cleared there once Redis answers`);
    },

    /** How many keys wait to be deleted from Redis (Infinity: the namespace will be cleared). */
    get unsynced() {
      return unsyncedOverflow ? Infinity : unsynced.size;
    },
    /** Whether the Redis connection of the second tier is up. */
    get redisReady() {
      return redisStore.client.isReady;
    },

    /** Stops the bus and the Redis connection; `cache` stays open (it is yours). */
    async close() {
      clearInterval(repairTimer);
      redisStore.client.off('ready', startRepair);
      await repairing;
      await bus?.close();
      // QUIT when Redis answers; otherwise drop the connection.
      await redisStore.disconnect(!redisStore.client.isReady);
      quiet.close();
    },
  };
}

// The tier's side of the user's ioredis client: which deployment it names,
// which servers must be tracked, the class tracking connections are made
// with, and every call under a deadline.

import { ArenaCacheError, codes, describe } from '../errors.js';

/** Whether `redis` is an ioredis Cluster (else a Redis: one server). */
export function isCluster(redis) {
  return redis.isCluster === true && typeof redis.nodes === 'function';
}

/** Throws a TypeError unless `redis` is an ioredis Redis or Cluster client, a RangeError for a cluster that reads replicas. */
export function checkClient(redis) {
  if (redis === null || typeof redis !== 'object' || typeof redis.pipeline !== 'function' || typeof redis.getBuffer !== 'function' || typeof redis.options !== 'object') {
    throw new TypeError(`options.redis must be an ioredis Redis or Cluster client (got ${describe(redis)}); node-redis clients are not supported (see docs/redis-tier.md)`);
  }
  if (isCluster(redis) && (redis.options.scaleReads ?? 'master') !== 'master') {
    throw new RangeError(`options.redis must read from masters: its scaleReads must be 'master' (got ${describe(redis.options.scaleReads)}); a replica may answer with a value older than an invalidation already applied`);
  }
}

/** Throws a TypeError unless `given` (options.Redis) is left out or a class. */
export function checkRedisClass(given) {
  if (given !== undefined && typeof given !== 'function') throw new TypeError(`options.Redis must be the ioredis Redis class (got ${describe(given)})`);
}

/** What names a Redis deployment: the cluster's seed nodes, or the server's address (and database). */
export function endpointOf(redis) {
  if (isCluster(redis)) {
    const nodes = (redis.startupNodes ?? []).map((node) => (typeof node === 'object' ? `${node.host ?? '127.0.0.1'}:${node.port ?? 6379}` : String(node)));
    return `cluster ${nodes.sort().join(',')}`;
  }
  const { host = 'localhost', port = 6379, path, db = 0 } = redis.options;
  return path ? `unix ${path} db ${db}` : `redis ${host}:${port} db ${db}`;
}

/**
 * Every server whose changes must be heard, as a function that opens a new
 * connection to it with overrides of its options: a cluster's masters
 * (asked each time: they change), or the one server. Connections are the
 * client's duplicates (its host, auth and TLS), or with `Redis` given, made
 * by that class from the same options. A cluster that is not ready within
 * `waitMs` is an ERR_REDIS_UNAVAILABLE.
 */
export async function trackedServers(redis, Redis, waitMs) {
  const opener = (connection) => (overrides) => (Redis === undefined ? connection.duplicate(overrides) : new Redis({ ...connection.options, ...overrides }));
  if (!isCluster(redis)) return [opener(redis)];
  if (redis.status !== 'ready') {
    let timer;
    let onReady;
    try {
      await new Promise((resolve, reject) => {
        onReady = resolve;
        redis.once('ready', resolve);
        timer = setTimeout(() => reject(new ArenaCacheError(codes.ERR_REDIS_UNAVAILABLE, `the Redis Cluster was not ready within ${waitMs} ms`)), waitMs);
      });
    } finally {
      clearTimeout(timer);
      redis.off('ready', onReady);
    }
  }
  return redis.nodes('master').map(opener);
}

/** ERR_REDIS_UNAVAILABLE for an error of the Redis client (a dropped connection, a refused command); our own errors pass. */
export function unavailable(cause) {
  if (cause instanceof ArenaCacheError) return cause;
  return new ArenaCacheError(codes.ERR_REDIS_UNAVAILABLE, `the Redis call failed: ${cause?.message ?? cause}`, { cause });
}

/**
 * `run()` within `deadlineMs`: ERR_REDIS_TIMEOUT past it (a client's own
 * timeouts may stop counting once a command is written, so the tier keeps
 * its own), ERR_REDIS_UNAVAILABLE when Redis refuses or cannot be reached.
 */
export async function within(deadlineMs, run) {
  let timer;
  let grace;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => {
      // Timers run before the poll phase reads sockets: on a busy loop the
      // answer may already be waiting there. It gets that one chance.
      grace = setImmediate(() => reject(new ArenaCacheError(codes.ERR_REDIS_TIMEOUT, `Redis did not answer within ${deadlineMs} ms (options.deadlineMs)`)));
    }, deadlineMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(run).catch((error) => Promise.reject(unavailable(error))), deadline]);
  } finally {
    clearTimeout(timer);
    clearImmediate(grace);
  }
}

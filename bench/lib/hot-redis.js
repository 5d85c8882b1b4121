// The Redis peer of npm run bench:hot: what a service shares a cache through
// today. hot.js starts one redis-server on loopback for the whole run (and
// stops it); each kind's process connects through ioredis, fills it with the
// same keys and values as the other peers, and measures two ways of calling
// it: one await per operation (how a request handler calls it), and
// pipelines of REDIS_PIPELINE operations (one round trip each).

import { spawnSync } from 'node:child_process';
import { constants as osConstants } from 'node:os';
import { Redis } from 'ioredis';
import { pack, unpack } from 'msgpackr';
import { freePort, redisMissing, startRedis } from '../../test/helpers/redis-server.js';

/** Operations per pipeline of the pipelined row, and per timed call of the unpipelined one. */
export const REDIS_PIPELINE = 100;

/**
 * How each kind is stored: objects as msgpack (msgpackr's `pack`: plain
 * maps, no shared structures, which a reader in another process would not
 * have), strings as strings (UTF-8, `get`), Buffers as their bytes
 * (`getBuffer`).
 */
const CODECS = Object.freeze({
  object: { encode: (value) => pack(value), decode: (reply) => (reply === null ? undefined : unpack(reply)), command: 'getBuffer' },
  buffer: { encode: (value) => value, decode: (reply) => reply ?? undefined, command: 'getBuffer' },
  string: { encode: (value) => value, decode: (reply) => reply ?? undefined, command: 'get' },
});

export const REDIS_ENCODING = 'objects msgpack (msgpackr pack: plain maps, no shared structures), strings as UTF-8 strings (get), Buffers as bytes (getBuffer)';

/**
 * Connects to the redis-server on `port`, empties it, and fills it with
 * every key. Returns the timed tasks' bodies and close().
 */
export async function redisPeer({ port, kind, names, values }) {
  const { encode, decode, command } = CODECS[kind];
  const client = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  // A lost connection fails the command that meets it; the event itself needs no second report.
  client.on('error', () => {});
  await client.connect();
  try {
    await client.flushall();
    for (let start = 0; start < names.length; start += 1000) {
      const pipeline = client.pipeline();
      for (let k = start; k < Math.min(names.length, start + 1000); k++) pipeline.set(names[k], encode(values[k]));
      await execOrThrow(pipeline);
    }
  } catch (error) {
    client.disconnect();
    throw error;
  }
  const get = async (key) => decode(await client[command](key));
  const length = names.length;

  /**
   * The bodies of the timed calls over the access sequence `order` (sets
   * where `sets[i]` is 1; null: gets only), REDIS_PIPELINE operations each.
   * `counter.found` counts hits, as the other peers' loops do.
   */
  function tasks(order, sets, counter) {
    let cursor = 0;
    const sequential = async () => {
      let i = cursor;
      for (let n = 0; n < REDIS_PIPELINE; n++) {
        const k = order[i];
        if (sets !== null && sets[i] === 1) await client.set(names[k], encode(values[k]));
        else if ((await get(names[k])) !== undefined) counter.found++;
        if (++i === order.length) i = 0;
      }
      cursor = i;
    };
    const pipelined = async () => {
      let i = cursor;
      const pipeline = client.pipeline();
      for (let n = 0; n < REDIS_PIPELINE; n++) {
        const k = order[i];
        if (sets !== null && sets[i] === 1) pipeline.set(names[k], encode(values[k]));
        else pipeline[command](names[k]);
        if (++i === order.length) i = 0;
      }
      cursor = i;
      for (const reply of await execOrThrow(pipeline)) if (reply !== 'OK' && decode(reply) !== undefined) counter.found++;
    };
    return { sequential, pipelined };
  }

  return {
    get,
    tasks,
    entries: length,
    close: () => client.quit().catch(() => client.disconnect()),
  };
}

/** A pipeline's replies, throwing the first command error (exec() reports them per command). */
async function execOrThrow(pipeline) {
  const results = await pipeline.exec();
  return results.map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}

/**
 * Starts the run's redis-server on a free loopback port, without
 * persistence, killed when this process exits (on an error, SIGINT or
 * SIGTERM too). Resolves to { port, version, stop() }, or to { reason }
 * when it cannot run: the Redis rows are then skipped, with the reason
 * printed, rather than the run failing.
 */
export async function startRedisPeer() {
  if (process.env.BENCH_REDIS === '0') return { reason: 'BENCH_REDIS=0' };
  const missing = redisMissing();
  if (missing !== null) return { reason: missing };
  let server;
  try {
    server = await startRedis(await freePort());
  } catch (error) {
    return { reason: `redis-server did not start: ${error.message}` };
  }
  const version = /v=(\S+)/.exec(spawnSync('redis-server', ['--version'], { encoding: 'utf8' }).stdout)?.[1] ?? 'unknown';
  // kill() sends SIGKILL before its first await: safe in an exit handler.
  const kill = () => void server.kill();
  const onSignal = (signal) => {
    kill();
    process.exit(128 + osConstants.signals[signal]);
  };
  process.once('exit', kill);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    port: server.port,
    version,
    async stop() {
      process.off('exit', kill);
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      await server.kill();
    },
  };
}

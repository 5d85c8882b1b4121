// Options of InvalidationBus, each checked once, with its default in one place.

import { isIP } from 'node:net';
import { describe } from '../errors.js';
import { checkInteger, withDefaults } from '../validate.js';
import { HEADER_BYTES, MAC_BYTES, MAX_UDP_PAYLOAD, secretBytes } from './wire.js';

export const BUS_DEFAULTS = Object.freeze({
  /** Shared by every peer; a string or Buffer of at least 16 bytes. Required. */
  secret: undefined,
  /** The UDP transport's options (see UDP_DEFAULTS); give exactly one of udp and redis. */
  udp: undefined,
  /** The Redis transport's options (see REDIS_DEFAULTS). */
  redis: undefined,
  /** Publish only writes of keys starting with one of these (strings match string keys, Buffers byte keys); null: every write. */
  prefixes: null,
  /** Prefixes of version-marker keys: peers store a marker's new value instead of deleting it, and a peer's value is stored only for these. */
  markers: Object.freeze([]),
  /** Longest wait between a write and its batch going out, in ms (0: send at once). */
  batchIntervalMs: 2,
  /** A batch goes out as soon as it holds this many distinct keys, and no message carries more. */
  batchMaxKeys: 256,
  /** Invalidations of a sender not verified yet (see senders.js) stamped further than this from now are refused, in ms. */
  replayWindowMs: 30_000,
});

export const UDP_DEFAULTS = Object.freeze({
  /** The address to bind to: loopback unless told otherwise. */
  address: '127.0.0.1',
  /** The port to bind to; 0 picks a free one (see bus.address). */
  port: 0,
  /** Where to send: "host:port" strings (IPv6 as "[::1]:7400") or { address, port }. */
  peers: Object.freeze([]),
  /** Largest datagram sent or accepted, in bytes (1200 stays under every path MTU). */
  maxDatagramBytes: 1200,
});

export const REDIS_DEFAULTS = Object.freeze({
  /** A redis:// URL, or ioredis options as an object. */
  connection: 'redis://127.0.0.1:6379',
  /** The pub/sub channel. */
  channel: 'arenacache:invalidation',
  /** After the connection comes back: 'clear' drops the entries invalidations may have missed, 'keep' keeps them (stale until their ttl). */
  onReconnect: 'clear',
  /** Invalidations kept while Redis is unreachable, sent on reconnect; beyond this, peers are told to clear instead. */
  backlogKeys: 10_000,
  /** Largest message sent or accepted, in bytes. */
  maxMessageBytes: 256 * 1024,
});

const SMALLEST_MESSAGE = HEADER_BYTES + MAC_BYTES + 64;

function checkPrefixList(list, name) {
  if (!Array.isArray(list)) throw new TypeError(`${name} must be an array of strings or Buffers (got ${describe(list)})`);
  return list.map((prefix, i) => {
    if (typeof prefix === 'string') {
      if (prefix.length === 0) throw new RangeError(`${name}[${i}] must not be empty`);
      return prefix;
    }
    if (prefix instanceof Uint8Array) {
      if (prefix.length === 0) throw new RangeError(`${name}[${i}] must not be empty`);
      return Buffer.from(prefix);
    }
    throw new TypeError(`${name}[${i}] must be a string or a Buffer (got ${describe(prefix)})`);
  });
}

/** "host:port", "[v6]:port" or { address, port } as { address, port }. */
function parsePeer(peer, name) {
  let address;
  let port;
  if (typeof peer === 'string') {
    const match = /^\[([^\]]+)\]:(\d+)$/.exec(peer) ?? /^([^:]+):(\d+)$/.exec(peer);
    if (match === null) throw new RangeError(`${name} must be "host:port" or "[ipv6]:port" (got ${describe(peer)})`);
    address = match[1];
    port = Number(match[2]);
  } else if (peer !== null && typeof peer === 'object' && !Array.isArray(peer)) {
    ({ address, port } = peer);
    if (typeof address !== 'string' || address.length === 0) throw new TypeError(`${name}.address must be a host name or IP address (got ${describe(address)})`);
  } else {
    throw new TypeError(`${name} must be a "host:port" string or an { address, port } object (got ${describe(peer)})`);
  }
  checkInteger(port, `${name}.port`, 1, 65535);
  return { address, port };
}

export function resolvePeers(peers, name) {
  if (!Array.isArray(peers)) throw new TypeError(`${name} must be an array of "host:port" strings (got ${describe(peers)})`);
  return peers.map((peer, i) => parsePeer(peer, `${name}[${i}]`));
}

function resolveUdp(udp) {
  const resolved = withDefaults(udp, UDP_DEFAULTS, 'options.udp');
  if (typeof resolved.address !== 'string' || isIP(resolved.address) === 0) {
    throw new TypeError(`options.udp.address must be an IP address such as "127.0.0.1" (got ${describe(resolved.address)})`);
  }
  checkInteger(resolved.port, 'options.udp.port', 0, 65535);
  resolved.peers = resolvePeers(resolved.peers, 'options.udp.peers');
  checkInteger(resolved.maxDatagramBytes, 'options.udp.maxDatagramBytes', SMALLEST_MESSAGE, MAX_UDP_PAYLOAD);
  resolved.family = isIP(resolved.address) === 6 ? 'udp6' : 'udp4';
  return resolved;
}

function resolveRedis(redis) {
  const resolved = withDefaults(redis, REDIS_DEFAULTS, 'options.redis');
  const { connection } = resolved;
  if (typeof connection !== 'string' && (connection === null || typeof connection !== 'object' || Array.isArray(connection))) {
    throw new TypeError(`options.redis.connection must be a redis:// URL or an ioredis options object (got ${describe(connection)})`);
  }
  if (typeof resolved.channel !== 'string' || resolved.channel.length === 0) {
    throw new TypeError(`options.redis.channel must be a non-empty string (got ${describe(resolved.channel)})`);
  }
  if (resolved.onReconnect !== 'clear' && resolved.onReconnect !== 'keep') {
    throw new RangeError(`options.redis.onReconnect must be "clear" or "keep" (got ${describe(resolved.onReconnect)})`);
  }
  checkInteger(resolved.backlogKeys, 'options.redis.backlogKeys', 0, 2 ** 31 - 1, { to: null });
  checkInteger(resolved.maxMessageBytes, 'options.redis.maxMessageBytes', SMALLEST_MESSAGE, 512 * 2 ** 20);
  return resolved;
}

/** Validated options for `new InvalidationBus(cache, options)`. */
export function resolveBusOptions(options) {
  if (options === undefined) {
    throw new TypeError('options is required: new InvalidationBus(cache, { secret, udp: { peers } }) or { secret, redis: { connection } }');
  }
  const resolved = withDefaults(options, BUS_DEFAULTS, 'options');
  resolved.secret = secretBytes(resolved.secret, 'options.secret');
  if ((resolved.udp === undefined) === (resolved.redis === undefined)) {
    throw new TypeError('options must have exactly one of udp and redis: the transport invalidations travel by');
  }
  if (resolved.udp !== undefined) resolved.udp = resolveUdp(resolved.udp);
  else resolved.redis = resolveRedis(resolved.redis);
  if (resolved.prefixes !== null) {
    resolved.prefixes = checkPrefixList(resolved.prefixes, 'options.prefixes');
    if (resolved.prefixes.length === 0) throw new RangeError('options.prefixes must not be empty (null publishes every write)');
  }
  resolved.markers = checkPrefixList(resolved.markers, 'options.markers');
  checkInteger(resolved.batchIntervalMs, 'options.batchIntervalMs', 0, 60_000);
  checkInteger(resolved.batchMaxKeys, 'options.batchMaxKeys', 1, 1_000_000);
  checkInteger(resolved.replayWindowMs, 'options.replayWindowMs', 1000, 24 * 3600_000);
  return resolved;
}

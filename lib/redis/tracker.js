// Tracker: one connection to one Redis server (a standalone server, or one
// master of a cluster) that hears of every change to a key under a prefix,
// whoever makes it: Redis's server-assisted client-side caching in
// broadcasting mode. The connection redirects its own invalidations to
// itself and subscribes to them (CLIENT TRACKING ON REDIRECT <its id> BCAST
// PREFIX <prefix>, then SUBSCRIBE __redis__:invalidate), which works in
// RESP2, the protocol ioredis speaks (redis.io, "Client-side caching", two
// connections mode; a client may be its own redirect target).
//
// What it reports:
//   - 'invalidate' (keys: Buffer[]): these keys changed (a write, a delete,
//     an expiry, an eviction);
//   - 'flush': everything may have changed (FLUSHALL or FLUSHDB);
//   - 'lost' (error or null): the connection is gone, once. Redis does not
//     replay what a lost connection missed, and a reconnected one is a new
//     client with a new id, so a Tracker is never reconnected: the caller
//     drops what it may have missed and starts a new one (Redis's documented
//     rule: flush the local cache when the connection is lost).
//
// Coverage starts when start() resolves (the subscription is confirmed):
// Redis drops a message for a redirect target that is not subscribed yet.
// ping() resolves once every message Redis queued for this connection
// before it was sent has been handled: the server answers in order on the
// connection, and queues a broadcast invalidation before it replies to the
// write that caused it.

import { EventEmitter } from 'node:events';

const CHANNEL = '__redis__:invalidate';

export class Tracker extends EventEmitter {
  #client;
  #lost = false;

  /**
   * @param {(overrides: object) => any} open makes an ioredis Redis connection to the server with `overrides` over its options
   * @param {string} prefix the keys to hear of (Redis refuses prefixes of one connection that overlap)
   */
  constructor(open, prefix) {
    super();
    this.prefix = prefix;
    this.#client = open({
      lazyConnect: true,
      // A reconnected connection would be another client, tracking nothing.
      retryStrategy: () => null,
      autoResubscribe: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    this.#client.on('error', () => {});
    this.#client.on('close', () => this.#lose(null));
    this.#client.on('messageBuffer', (channel, message) => {
      if (channel.toString() !== CHANNEL) return;
      if (message === null || (Array.isArray(message) && message.length === 0)) this.emit('flush');
      else this.emit('invalidate', Array.isArray(message) ? message : [message]);
    });
  }

  /** Connects and subscribes; resolves once invalidations are heard. */
  async start() {
    const client = this.#client;
    try {
      await client.connect();
      const id = await client.call('CLIENT', 'ID');
      await client.call('CLIENT', 'TRACKING', 'ON', 'REDIRECT', String(id), 'BCAST', 'PREFIX', this.prefix);
      await client.subscribe(CHANNEL);
    } catch (error) {
      this.#lose(error);
      client.disconnect();
      throw error;
    }
    return this;
  }

  /** Resolves once Redis answered a PING sent now (see the top); rejects if the connection is gone. */
  async ping() {
    await this.#client.ping();
  }

  get lost() {
    return this.#lost;
  }

  close() {
    this.#lost = true;
    this.#client.disconnect();
  }

  #lose(error) {
    if (this.#lost) return;
    this.#lost = true;
    this.emit('lost', error);
  }
}

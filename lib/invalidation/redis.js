// The Redis transport: the same authenticated messages over Redis pub/sub,
// for fleets that run Redis already.
//
// Two connections (a subscriber cannot publish). While Redis is unreachable
// the cache keeps serving: what this process would have sent waits in a
// deduplicated backlog and goes out, freshly stamped, on reconnect (a backlog
// over options.backlogKeys becomes one clear, so nothing is lost). What peers
// sent meanwhile is lost to us; options.onReconnect says what to do about
// the entries that may have missed it (the bus applies it).

import { ArenaCacheError, codes } from '../errors.js';
import { InvalidationBatch } from './batch.js';
import { requireOptional } from '../optional-require.js';
import { entryCount } from './wire.js';

const RECONNECT_MAX_MS = 1000;
/** A PUBLISH that gets no answer (Redis stalled, a half-open connection) fails after this and goes to the backlog. */
const PUBLISH_TIMEOUT_MS = 2000;
/**
 * A backlog goes out as soon as our publisher is back, and once more after
 * this long: pub/sub keeps nothing, so a peer whose subscriber came back
 * later than our publisher would miss the first sending. (A repeat is
 * harmless: deletes are idempotent, markers are read afresh.)
 */
const BACKLOG_RESEND_MS = 2 * RECONNECT_MAX_MS;

export class RedisTransport {
  /** @type {'redis'} */
  name = 'redis';
  #options;
  #bus;
  #publisher = null;
  #subscriber = null;
  #started = false;
  #closing = false;
  /** True from a lost subscriber connection until it is back. */
  #subscriberDown = false;
  #backlog = new InvalidationBatch();
  #backlogOverflowed = false;
  #resendTimer = null;

  constructor(options, bus) {
    this.#options = options;
    this.#bus = bus;
    this.maxBytes = options.maxMessageBytes;
  }

  async start() {
    const Redis = requireOptional('ioredis', codes.ERR_IOREDIS_MISSING, 'The Redis transport');
    const { connection, channel } = this.#options;
    const both = {
      lazyConnect: true,
      // Fail at start; after that, keep trying (the cache serves meanwhile).
      retryStrategy: (times) => (this.#started && !this.#closing ? Math.min(times * 50, RECONNECT_MAX_MS) : null),
    };
    const make = (ours) => (typeof connection === 'string' ? new Redis(connection, { ...both, ...ours }) : new Redis({ ...connection, ...both, ...ours }));
    // A publish while disconnected (or unanswered) fails and goes to the
    // backlog, to be stamped afresh later instead of queued with an old timestamp.
    this.#publisher = make({ enableOfflineQueue: false, autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0, commandTimeout: PUBLISH_TIMEOUT_MS });
    // We subscribe again ourselves after a reconnect (see #resubscribe): ioredis's own resubscription leaves its failure unhandled.
    this.#subscriber = make({ autoResubscribe: false });
    // ioredis reports why a connection failed only as an 'error' event.
    let lastError = null;
    for (const client of [this.#publisher, this.#subscriber]) {
      client.on('error', (error) => {
        lastError = error;
        if (this.#started) this.#bus.transportError(error);
      });
    }
    try {
      await Promise.all([this.#publisher.connect(), this.#subscriber.connect()]);
      await this.#subscriber.subscribe(channel);
    } catch (cause) {
      this.#publisher.disconnect();
      this.#subscriber.disconnect();
      const where = typeof connection === 'string' ? connection : `${connection.host ?? '127.0.0.1'}:${connection.port ?? 6379}`;
      const reason = lastError ?? cause;
      throw new ArenaCacheError(codes.ERR_INVALIDATION_TRANSPORT, `Redis at ${where} could not be reached: ${reason.message}`, { cause: reason });
    }
    this.#subscriber.on('messageBuffer', (from, message) => {
      if (from.toString() === channel) this.#bus.receive(message);
    });
    this.#subscriber.on('close', () => {
      if (!this.#closing) this.#subscriberDown = true;
    });
    this.#subscriber.on('ready', () => {
      if (this.#subscriberDown) this.#resubscribe();
    });
    this.#publisher.on('ready', () => this.#sendBacklog().catch((error) => this.#bus.transportError(error)));
    this.#started = true;
  }

  /**
   * After a reconnect: subscribe, and only once that holds apply the
   * reconnect policy (a clear before it would let entries loaded meanwhile
   * miss invalidations). A failed SUBSCRIBE drops the connection to try again.
   */
  #resubscribe() {
    this.#subscriber.subscribe(this.#options.channel).then(
      () => {
        if (!this.#subscriberDown || this.#closing) return;
        this.#subscriberDown = false;
        this.#bus.reconnected();
      },
      (error) => {
        if (this.#closing) return;
        this.#bus.transportError(error);
        this.#subscriber.disconnect(true);
      },
    );
  }

  /** Publishes the invalidations; what cannot go out now waits in the backlog. */
  async send(invalidations) {
    if (this.#backlog.size > 0 || this.#backlogOverflowed) {
      this.#keep(invalidations);
      // A publish can fail without the connection dropping (an error reply,
      // a timeout): then no 'ready' comes to send the backlog, so try here.
      if (this.#publisher.status === 'ready') await this.#sendBacklog();
      return;
    }
    await this.#publish(invalidations);
  }

  /** Publishes a hello or an answer (see senders.js): every peer hears it; only the bus it addresses acts on it. */
  async sendControl(datagram) {
    await this.#publisher.publish(this.#options.channel, datagram);
  }

  async #publish(invalidations) {
    const messages = this.#bus.encode(invalidations, this.maxBytes);
    // Issued together: one connection keeps their order, and they pipeline.
    // (A fulfilled result's `reason` reads as undefined: results[i] is
    // typed so, as a test of results[i].status does not narrow it.)
    /** @type {(PromiseSettledResult<unknown> & { reason?: unknown })[]} */
    const results = await Promise.allSettled(messages.map((message) => this.#publisher.publish(this.#options.channel, message)));
    if (this.#closing) return;
    const failed = [];
    let error = null;
    let at = 0;
    for (let i = 0; i < messages.length; i++) {
      const count = entryCount(messages[i]);
      if (results[i].status === 'fulfilled') this.#bus.sent(messages[i]);
      else {
        error ??= results[i].reason;
        failed.push(...invalidations.slice(at, at + count));
      }
      at += count;
    }
    if (error === null) return;
    this.#bus.sendFailed(error, this.#options.channel);
    // Later, stamped afresh.
    this.#keep(failed);
  }

  #keep(invalidations) {
    if (this.#backlogOverflowed) return;
    for (const invalidation of invalidations) this.#backlog.add(invalidation);
    if (this.#backlog.size > this.#options.backlogKeys) {
      this.#backlog.take();
      this.#backlogOverflowed = true;
    }
  }

  async #sendBacklog() {
    if (this.#closing || (this.#backlog.size === 0 && !this.#backlogOverflowed)) return;
    // An overflowed backlog was emptied when it overflowed.
    const waiting = this.#backlogOverflowed ? this.#bus.clearAll() : this.#backlog.take();
    this.#backlogOverflowed = false;
    await this.#publish(waiting);
    clearTimeout(this.#resendTimer);
    this.#resendTimer = setTimeout(() => {
      if (!this.#closing) this.#publish(waiting).catch((error) => this.#bus.transportError(error));
    }, BACKLOG_RESEND_MS);
    this.#resendTimer.unref();
  }

  async close() {
    this.#closing = true;
    clearTimeout(this.#resendTimer);
    // No QUIT: while Redis is away it would wait in the subscriber's queue.
    this.#publisher?.disconnect();
    this.#subscriber?.disconnect();
  }
}

// InvalidationBus: keeps the caches of several machines coherent.
//
// Every thread's set/delete/clear on the cache lands in the process's outbox
// (outbox.js); the bus, in the one thread that runs it, drains the outbox,
// batches and deduplicates (batch.js), and sends authenticated messages
// (wire.js) over UDP or Redis. What peers send is checked and applied to the
// shared arena without being published again, so every thread of every
// process attached to the arena sees it.

import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { InvalidationBatch, keyHasPrefix } from './batch.js';
import { dropCounter, OUTBOX_CLEAR, OUTBOX_SET } from '../cache/outbox.js';
import { resolveBusOptions } from './bus-options.js';
import { SenderTable } from './senders.js';
import { ANY_BUS, HEADER_BYTES, MAC_BYTES, encodeControl, encodeDatagrams, entryCount, openDatagram } from './wire.js';
import { UdpTransport } from './udp.js';
import { RedisTransport } from './redis.js';
import { kClock, kInvalidation } from '../internal-symbols.js';
import { KEY_STRING } from '../cache/key-encoder.js';

/** Senders remembered at once (verified; and unverified, see senders.js): a fleet larger than this re-verifies its least active. */
const MAX_SENDERS = 4096;
const MAX_UNVERIFIED = 1024;
/** An unverified sender is asked again to answer (a hello or its answer was lost) at most this often. */
const HELLO_RETRY_MS = 500;
/** An entry's bytes on the wire besides its key (and value): op, kind, key length. */
const ENTRY_HEADER = 6;
/** Messages the pump lets queue up behind the one being sent before it waits. */
const MAX_IN_FLIGHT = 64;

export class InvalidationBus extends EventEmitter {
  #options;
  #port; // the cache's side: outbox, apply(), storedValue()
  #outbox;
  #transport;
  #batch = new InvalidationBatch();
  #senderId = randomBytes(8);
  /** The last sequence number used: every message we send takes the next. */
  #seq = 0;
  /** Who sent what (senders.js). */
  #senders;
  /** performance.now() at start: how long we have run, whatever the wall clock does. */
  #startedAt = 0;
  #state = 'new'; // new, starting, running, closing, closed
  #pump = null;
  #startup = null;
  #claim = 0;
  /** Chunks handed to the transport and not yet sent. */
  #inFlight = 0;
  /**
   * Settles once every chunk handed to the transport so far is sent (or has failed).
   * @type {Promise<unknown>}
   */
  #sending = Promise.resolve();
  /** ms since the epoch: Date.now, unless a test gives another clock (kClock). */
  #now;

  /**
   * Publishes the writes of every thread of this process on `cache`, and
   * applies what peers publish. Call start() next.
   * @param {import('../cache/shared-cache.js').SharedCache} cache
   * @param {import('./bus-options.js').BUS_DEFAULTS} options
   */
  constructor(cache, options) {
    super();
    const port = cache?.[kInvalidation]?.();
    if (port === undefined) throw new TypeError(`cache must be a SharedCache (got ${describe(cache)})`);
    const resolved = resolveBusOptions(options);
    if (port.outbox === null) {
      throw new ArenaCacheError(
        codes.ERR_INVALIDATION_UNSUPPORTED,
        'this cache was attached from a bare SharedArrayBuffer and has no outbox; attach with SharedCache.attach(cache.handle) to publish invalidations',
      );
    }
    this.#options = resolved;
    this.#now = options[kClock] ?? Date.now;
    this.#port = port;
    this.#outbox = port.outbox;
    this.#senders = new SenderTable({ windowMs: resolved.replayWindowMs, maxSenders: MAX_SENDERS, maxUnverified: MAX_UNVERIFIED });
    this.#transport = resolved.udp !== undefined ? new UdpTransport(resolved.udp, this) : new RedisTransport(resolved.redis, this);
  }

  /** Binds the socket (UDP) or connects (Redis), then publishes and applies. Resolves to the bus. */
  async start() {
    if (this.#state !== 'new') throw this.#stateError('start()');
    this.#claim = this.#outbox.claim();
    if (this.#claim === 0) {
      throw new ArenaCacheError(codes.ERR_INVALIDATION_RUNNING, 'another InvalidationBus already publishes this cache\'s writes in this process; close it first (one bus per cache and process)');
    }
    this.#state = 'starting';
    let failure = null;
    this.#startup = this.#transport.start().catch((error) => {
      failure = error;
    });
    await this.#startup;
    // close() (of the bus or of the cache) may have come while we waited.
    if (failure === null && (this.#state !== 'starting' || this.#port.closed())) {
      await this.#transport.close();
      failure = new ArenaCacheError(codes.ERR_INVALIDATION_CLOSED, `start() was interrupted: the ${this.#port.closed() ? 'cache' : 'bus'} was closed while it was ${this.#transport.name === 'udp' ? 'binding' : 'connecting'}`);
    }
    if (failure !== null) {
      this.#outbox.release(this.#claim);
      this.#state = 'closed';
      throw failure;
    }
    this.#port.attachBus(this);
    // Nothing sent before we ran was meant for us (a datagram recorded and
    // replayed to a restarted bus): senders.js tells those apart by asking
    // each sender, not by comparing its clock with ours.
    this.#startedAt = performance.now();
    this.#state = 'running';
    this.#pump = this.#run();
    // Ask the peers we know of at once, so that they are verified before they next write.
    this.#sendControl('hello', ANY_BUS);
    return this;
  }

  /** The transport in use: 'udp' or 'redis'. */
  get transport() {
    return this.#transport.name;
  }

  /** UDP: the bound { address, family, port }. */
  get address() {
    if (this.#transport.name !== 'udp' || this.#state !== 'running') return null;
    return this.#transport.address();
  }

  /** UDP: replaces the peer list ("host:port" strings or { address, port }). */
  setPeers(peers) {
    if (this.#state === 'closing' || this.#state === 'closed') throw this.#stateError('setPeers()');
    if (this.#transport.name !== 'udp') throw new TypeError('setPeers() is for the UDP transport; Redis peers find each other through the channel');
    this.#transport.setPeers(peers);
    if (this.#state === 'running') this.#sendControl('hello', ANY_BUS);
  }

  /** Whether the bus runs (between start() and close()). */
  get running() {
    return this.#state === 'running';
  }

  /**
   * Sends what is waiting, stops, and closes the socket or connections.
   * Writes after this are no longer published.
   */
  async close() {
    if (this.#state === 'starting') {
      // start() sees this, undoes what it did and rejects.
      this.#state = 'closing';
      await this.#startup;
      return;
    }
    if (this.#state === 'closing' || this.#state === 'closed') return;
    const wasRunning = this.#state === 'running';
    this.#state = 'closing';
    if (wasRunning) {
      this.#outbox.interrupt();
      await this.#pump;
      this.#collect();
      await this.#flush();
      this.#port.detachBus(this);
    }
    this.#outbox.release(this.#claim);
    await this.#transport.close();
    this.#state = 'closed';
  }

  async #run() {
    const { batchIntervalMs, batchMaxKeys } = this.#options;
    const batch = this.#batch;
    while (this.#state === 'running') {
      try {
        if (batch.size === 0) {
          await this.#outbox.waitFor(1, Infinity);
        } else {
          const left = batch.since + batchIntervalMs - performance.now();
          if (left > 0) await this.#outbox.waitFor(batchMaxKeys - batch.size, left);
        }
        if (this.#state !== 'running') break;
        this.#collect();
        if (batch.size > 0 && (batch.size >= batchMaxKeys || performance.now() - batch.since >= batchIntervalMs)) {
          // Keep draining while messages are on their way (the outbox would
          // fill up behind a slow send), up to a bound on messages in flight.
          const sending = this.#flush();
          if (this.#inFlight >= MAX_IN_FLIGHT) await sending;
        }
      } catch (error) {
        this.transportError(error);
      }
    }
  }

  /** Moves the outbox's records into the batch, filtered by options.prefixes. */
  #collect() {
    const { overflowed, records } = this.#outbox.drain();
    const { prefixes, markers } = this.#options;
    if (overflowed) {
      this.#outbox.count('invalidationOverflows');
      for (const invalidation of this.clearAll()) this.#batch.add(invalidation);
    }
    for (const record of records) {
      if (record.op === OUTBOX_CLEAR) {
        for (const invalidation of this.clearAll()) this.#batch.add(invalidation);
        continue;
      }
      const key = record.kind === KEY_STRING ? record.key.toString('utf8') : Buffer.from(record.key);
      if (prefixes !== null && !prefixes.some((prefix) => keyHasPrefix(key, prefix))) continue;
      const marker = record.op === OUTBOX_SET && markers.some((prefix) => keyHasPrefix(key, prefix));
      this.#batch.add({ op: marker ? 'set' : 'delete', key });
    }
  }

  /** What "everything" means to peers: a clear, or with options.prefixes a clear of each prefix. */
  clearAll() {
    const { prefixes } = this.#options;
    return prefixes === null ? [{ op: 'clear' }] : prefixes.map((prefix) => ({ op: 'clearPrefix', key: prefix }));
  }

  /** Sends the batch, at most batchMaxKeys to a message, in order. Resolves when everything handed over so far is sent. */
  #flush() {
    if (this.#batch.size === 0) return this.#sending;
    const invalidations = this.#batch.take();
    const { batchMaxKeys } = this.#options;
    for (let start = 0; start < invalidations.length; start += batchMaxKeys) {
      const chunk = invalidations.slice(start, start + batchMaxKeys);
      this.#inFlight++;
      // Handed over at once, in order: the socket or connection keeps that
      // order on the wire, so messages need not wait for each other.
      const sent = Promise.resolve()
        .then(() => this.#transport.send(chunk))
        .catch((error) => {
          this.#outbox.count('invalidationSendErrors');
          this.transportError(error);
        })
        .finally(() => {
          this.#inFlight--;
        });
      this.#sending = Promise.all([this.#sending, sent]);
    }
    return this.#sending;
  }

  // The transports' side.

  /**
   * Seals invalidations into messages of at most `maxBytes`. A marker goes
   * out with its value as stored now (kind byte, then bytes), so a message
   * sent late never carries an older value than the cache holds; a marker
   * that is gone, or too big for a message, goes out as a delete.
   */
  encode(invalidations, maxBytes) {
    const room = maxBytes - HEADER_BYTES - MAC_BYTES;
    const sealed = [];
    let cleared = false;
    for (const invalidation of invalidations) {
      const { op, key } = invalidation;
      let entry = invalidation;
      const keyBytes = key === undefined ? 0 : typeof key === 'string' ? Buffer.byteLength(key) : key.length;
      if (op === 'set') {
        const value = this.#port.storedValue(key);
        entry = value === undefined || ENTRY_HEADER + keyBytes + 4 + value.length > room ? { op: 'delete', key } : { op: 'set', key, value };
      }
      if (entry.op !== 'set' && ENTRY_HEADER + keyBytes > room) {
        // A key too long for any message: peers clear instead, so that it
        // cannot stay stale there (counted as an overflow).
        if (!cleared) sealed.push(...this.clearAll());
        cleared = true;
        this.#outbox.count('invalidationOverflows');
        continue;
      }
      sealed.push(entry);
    }
    const datagrams = encodeDatagrams(sealed, { secret: this.#options.secret, senderId: this.#senderId, seq: this.#seq + 1, maxBytes, now: this.#now() });
    this.#seq += datagrams.length;
    return datagrams;
  }

  /**
   * Sends a hello or an answer addressed to the bus `to` (an id), to the
   * address `from` a message came from (UDP) or to every peer. Numbered
   * with our messages and sent in order after them: an answer's number
   * tells its receiver which of our messages may predate its start.
   */
  #sendControl(type, to, from) {
    if (this.#state !== 'running') return;
    this.#seq++;
    const datagram = encodeControl(type, { secret: this.#options.secret, senderId: this.#senderId, seq: this.#seq, to, now: this.#now() });
    this.#transport.sendControl(datagram, from).catch((error) => {
      // One cut short by close() is no failure: nobody awaits its answer.
      if (this.#state !== 'running') return;
      this.#outbox.count('invalidationSendErrors');
      this.transportError(error);
    });
  }

  /**
   * A message arrived (UDP: from the address `from`): check it, count it,
   * apply it, answer it. Never throws.
   */
  receive(message, from) {
    if (this.#state !== 'running' && this.#state !== 'closing') return;
    const name = this.#transport.name;
    /** @type {ReturnType<typeof openDatagram>} */
    let opened;
    try {
      opened = openDatagram(message, { secret: this.#options.secret, maxBytes: this.#transport.maxBytes });
    } catch (error) {
      opened = { ok: false, reason: 'garbled' };
      this.transportError(error);
    }
    if (!opened.ok) {
      this.#drop(opened.reason, message);
      return;
    }
    // Redis echoes our own messages back to us.
    if (opened.senderId.equals(this.#senderId)) return;
    const now = this.#now();
    const id = opened.senderId.toString('hex');
    const { reason, sender, cautious } = this.#senders.admit(id, opened, now);
    if (reason === undefined) {
      if (opened.type === 'invalidations') this.#received(opened, cautious, message);
      else if (opened.type === 'hello') {
        if (opened.to.equals(ANY_BUS) || opened.to.equals(this.#senderId)) this.#sendControl('answer', opened.senderId, from);
      } else if (opened.to.equals(this.#senderId) && !sender.verified) {
        this.#senders.verify(sender, opened, performance.now() - this.#startedAt);
        this.emit('verified', { transport: name, sender: id });
      }
    } else {
      this.#drop(reason, message);
    }
    const tick = performance.now();
    if (!sender.verified && tick - sender.helloAt >= HELLO_RETRY_MS) {
      sender.helloAt = tick;
      this.#sendControl('hello', opened.senderId, from);
    }
  }

  #drop(reason, message, key) {
    this.#outbox.count(dropCounter(reason));
    const event = { transport: this.#transport.name, reason, bytes: message.length };
    if (key !== undefined) event.key = key;
    this.emit('drop', event);
  }

  /**
   * Applies a peer's invalidations; `cautious`: its markers' values are not to be trusted (see senders.js).
   * @param {import('./wire.js').OpenedDatagram} datagram of type 'invalidations'
   * @param {boolean} cautious
   * @param {Buffer} message the datagram's bytes
   */
  #received({ invalidations, timestamp }, cautious, message) {
    const name = this.#transport.name;
    const { markers } = this.#options;
    let applied = invalidations;
    for (let i = 0; i < invalidations.length; i++) {
      const { op, key } = invalidations[i];
      if (op !== 'set') continue;
      // A value is stored only for a key that is a marker here too; any
      // other key a peer "sets" is deleted instead (it did change there).
      const marker = markers.some((prefix) => keyHasPrefix(key, prefix));
      if (!marker) this.#drop('not-marker', message, key);
      if (marker && !cautious) continue;
      if (applied === invalidations) applied = [...invalidations];
      applied[i] = { op: 'delete', key };
    }
    this.#apply(applied);
    this.#outbox.count(`${name}BatchesReceived`);
    this.#outbox.count(`${name}KeysReceived`, invalidations.length);
    this.emit('received', { transport: name, invalidations, sentAt: timestamp, cautious });
  }

  /** A message went out. */
  sent(message) {
    const name = this.#transport.name;
    this.#outbox.count(`${name}BatchesSent`);
    this.#outbox.count(`${name}KeysSent`, entryCount(message));
  }

  sendFailed(error, to) {
    this.#outbox.count('invalidationSendErrors');
    this.transportError(Object.assign(error, { peer: to }));
  }

  /** Redis is back: drop (or keep) what may have missed peers' invalidations meanwhile. */
  reconnected() {
    this.#outbox.count('redisReconnects');
    const policy = this.#options.redis.onReconnect;
    if (policy === 'clear') this.#apply(this.clearAll());
    this.emit('reconnect', { transport: this.#transport.name, policy });
  }

  /**
   * Applies invalidations in order. Prefix clears in a row share one pass
   * over the keys (each is a walk of the whole cache).
   */
  #apply(invalidations) {
    for (let i = 0; i < invalidations.length; i++) {
      let invalidation = invalidations[i];
      if (invalidation.op === 'clearPrefix') {
        const prefixes = [invalidation.key];
        while (invalidations[i + 1]?.op === 'clearPrefix') prefixes.push(invalidations[++i].key);
        invalidation = { op: 'clearPrefix', prefixes };
      }
      try {
        this.#port.apply(invalidation);
      } catch (error) {
        this.transportError(error);
      }
    }
  }

  /** Errors of the socket or connection: counted by the transport where it matters, emitted if anyone listens. */
  transportError(error) {
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  #stateError(method) {
    if (this.#state === 'closing' || this.#state === 'closed') {
      return new ArenaCacheError(codes.ERR_INVALIDATION_CLOSED, `${method} was called after close(); create a new InvalidationBus`);
    }
    return new ArenaCacheError(codes.ERR_INVALIDATION_RUNNING, `${method} was called twice; the bus is already ${this.#state}`);
  }
}


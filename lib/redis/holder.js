// TrackingHolder: of every process on a machine sharing one SharedCache
// (a file-backed one), exactly one at a time holds Redis's invalidation
// connections (Trackers, one per Redis server: one per master of a
// cluster) and applies what they hear to the cache, for every process.
//
// The role is a claim in the shared cache: add(claimKey, "<owner identity>:
// <nonce>", { ttl: claimTtlMs }) by whichever process finds it free, renewed
// by its holder every renewMs with compareAndSet on the version it last
// wrote (so a holder that lost the role cannot extend another's). A claim
// whose owner is known dead (its thread's liveness claim in the file, which
// the kernel answers in any PID namespace) is taken over at once; one whose
// holder stalls lapses after claimTtlMs.
//
// What a holder keeps in the cache, for the tier's readers:
//   - genKey: the generation, a number that every entry key carries (see
//     entryKey): bumping it drops every entry of the namespace at once. A
//     holder bumps it once all its Trackers are subscribed (entries written
//     before may have missed an invalidation: Redis's rule, flush on a lost
//     tracking connection), on a flush, and on a lost Tracker (after its
//     replacement is subscribed);
//   - leaseKey: until when (ms since the epoch) entries may be served
//     without asking Redis: each ping round started at t0 whose answers came
//     back from every server sets it to t0 + leaseMs, since every
//     invalidation of a write Redis acknowledged before t0 was handled by
//     then (see Tracker#ping). A holder that dies or stalls stops renewing
//     it, and hits stop being served fresh within leaseMs.
// An invalidation of `key` deletes entryKey(generation, key).

import { randomBytes } from 'node:crypto';
import { kOwnerIdentity, kOwnerIsDead } from '../internal-symbols.js';
import { Tracker } from './tracker.js';

/** The holder's settings and their defaults. */
export const HOLDER_DEFAULTS = Object.freeze({
  /** How long a claim lasts unless renewed (ms). */
  claimTtlMs: 600,
  /** How often a holder renews its claim, and others look for a free one (ms). */
  renewMs: 150,
  /** How often a holder pings its Trackers to renew the lease (ms). */
  pingMs: 100,
  /** How long after a ping round started its answers vouch for the entries (ms). */
  leaseMs: 300,
});

/** The cache keys of namespace `namespace`'s shared state: control characters keep them apart from any user key. */
export function stateKeys(namespace) {
  const base = `\u0000acr:${namespace}`;
  return { claimKey: `${base}:claim`, genKey: `${base}:gen`, leaseKey: `${base}:lease` };
}

/** The cache key of `key`'s entry in generation `generation` of `namespace`. */
export function entryKey(namespace, generation, key) {
  return `\u0000acr:${namespace}:${generation}:${key}`;
}


export class TrackingHolder {
  #cache;
  #Redis;
  #servers;
  #namespace;
  #prefix;
  #settings;
  #keys;
  /** The claim's value: this thread's owner identity (see liveness.js) and a nonce. */
  #me;
  /** The claim's version while this process holds the role, else 0. */
  #claimVersion = 0;
  #trackers = [];
  #timers = [];
  #arming = null;
  #closed = false;
  /** What this holder did, for stats and tests. */
  counts = { claims: 0, lostClaims: 0, generationBumps: 0, invalidations: 0, trackerLosses: 0 };

  /**
   * @param {object} options
   * @param {import('../cache/shared-cache.js').SharedCache} options.cache the machine's cache
   * @param {any} [options.Redis] the ioredis Redis class, for servers given as connection options
   * @param {() => any[] | Promise<any[]>} options.servers every server to track (a cluster's masters), asked at each arming: its ioredis connection options, or a function that opens a connection to it with overrides
   * @param {string} options.namespace the namespace; Redis keys are `${namespace}:${key}`
   * @param {number} [options.leaseMs] and the other HOLDER_DEFAULTS
   */
  constructor({ cache, Redis, servers, namespace, ...settings }) {
    this.#cache = cache;
    this.#Redis = Redis;
    this.#servers = servers;
    this.#namespace = namespace;
    this.#prefix = `${namespace}:`;
    this.#settings = { ...HOLDER_DEFAULTS, ...settings };
    this.#keys = stateKeys(namespace);
    const { word, id } = cache[kOwnerIdentity]();
    this.#me = `${word}:${id}:${randomBytes(6).toString('hex')}`;
  }

  /** Starts looking for (and holding) the role; returns this. */
  start() {
    const tick = setInterval(() => this.#tick(), this.#settings.renewMs);
    tick.unref();
    const ping = setInterval(() => this.#pingRound(), this.#settings.pingMs);
    ping.unref();
    this.#timers.push(tick, ping);
    this.#tick();
    return this;
  }

  /** Whether this process holds the role now. */
  get holding() {
    return this.#claimVersion !== 0;
  }

  /** The generation entries are keyed by now (0 before any holder armed). */
  generation() {
    return this.#cache.get(this.#keys.genKey) ?? 0;
  }

  /** Until when entries may be served without asking Redis (ms since the epoch; 0: not now). */
  leaseUntil() {
    return this.#cache.get(this.#keys.leaseKey) ?? 0;
  }

  /**
   * The servers to track changed (a cluster gained or lost a master): a
   * holder drops its Trackers and arms new ones, which bumps the generation.
   */
  rearm() {
    if (!this.holding || this.#closed) return;
    this.#cache.set(this.#keys.leaseKey, 0);
    this.#closeTrackers();
    this.#arming = null;
    this.#arm();
  }

  /**
   * Stops. A holder gives the role up at once: no copy is vouched for until
   * the next holder's trackers are subscribed (the lease ends now), and its
   * claim lapses in a millisecond, so another process takes over at its
   * next tick instead of after claimTtlMs.
   */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    if (this.holding) {
      this.#cache.set(this.#keys.leaseKey, 0);
      this.#cache.compareAndSet(this.#keys.claimKey, this.#claimVersion, this.#me, { ttl: 1 });
    }
    this.#drop();
  }

  #tick() {
    if (this.#closed) return;
    const cache = this.#cache;
    const { claimKey } = this.#keys;
    const ttl = this.#settings.claimTtlMs;
    if (this.holding) {
      if (cache.compareAndSet(claimKey, this.#claimVersion, this.#me, { ttl })) {
        this.#claimVersion = cache.info(claimKey)?.version ?? 0;
        if (this.#claimVersion !== 0) {
          // Trackers that failed to start (a server down) are tried again.
          if (this.#trackers.length === 0) this.#arm();
          return;
        }
      }
      this.counts.lostClaims++;
      this.#drop();
      return;
    }
    let won = cache.add(claimKey, this.#me, { ttl });
    if (!won) {
      const held = cache.info(claimKey);
      const [word, id] = String(held?.value).split(':').map(Number);
      // A holder known to be dead is replaced at once. In a file-backed
      // cache that is its thread's liveness claim, which the kernel answers
      // in every PID namespace (a pid would not: another container's pid
      // names nothing here, or another process).
      if (held !== undefined && Number.isInteger(word) && Number.isInteger(id) && cache[kOwnerIsDead](word, id)) {
        won = cache.compareAndSet(claimKey, held.version, this.#me, { ttl });
      }
    }
    if (!won) return;
    this.#claimVersion = cache.info(claimKey)?.version ?? 0;
    if (this.#claimVersion === 0) return;
    this.counts.claims++;
    this.#arm();
  }

  /** Opens a Tracker per server; once all are subscribed, bumps the generation. A failure drops the role's trackers and tries again at the next tick. */
  #arm() {
    if (this.#arming !== null) return;
    const arming = (async () => {
      const servers = await this.#servers();
      const trackers = servers.map((server) => new Tracker(typeof server === 'function' ? server : (overrides) => new this.#Redis({ ...server, ...overrides }), this.#prefix));
      for (const tracker of trackers) {
        tracker.on('invalidate', (keys) => this.#invalidate(keys));
        tracker.on('flush', () => this.#bump());
        tracker.on('lost', () => this.#trackerLost(tracker));
      }
      this.#trackers = trackers;
      await Promise.all(trackers.map((tracker) => tracker.start()));
      if (!this.holding || this.#trackers !== trackers) return;
      // Covered from here on: what was cached before may have missed an invalidation.
      this.#bump();
    })();
    this.#arming = arming;
    arming.catch(() => this.#closeTrackers()).finally(() => {
      if (this.#arming === arming) this.#arming = null;
    });
  }

  #invalidate(keys) {
    const generation = this.generation();
    for (const raw of keys) {
      const key = raw.toString();
      if (!key.startsWith(this.#prefix)) continue;
      this.#cache.delete(entryKey(this.#namespace, generation, key.slice(this.#prefix.length)));
      this.counts.invalidations++;
    }
  }

  /** Drops every entry of the namespace on this machine at once: a new generation (any process may). */
  bump() {
    this.#bump();
  }

  #bump() {
    this.#cache.set(this.#keys.leaseKey, 0);
    this.#cache.incr(this.#keys.genKey);
    this.counts.generationBumps++;
  }

  #trackerLost(tracker) {
    if (!this.#trackers.includes(tracker)) return;
    this.counts.trackerLosses++;
    // No entry is vouched for until every server is tracked again.
    this.#cache.set(this.#keys.leaseKey, 0);
    this.#closeTrackers();
    if (this.holding && !this.#closed) this.#arm();
  }

  async #pingRound() {
    const trackers = this.#trackers;
    if (!this.holding || this.#arming !== null || trackers.length === 0) return;
    const started = Date.now();
    try {
      await Promise.all(trackers.map((tracker) => tracker.ping()));
    } catch {
      return;
    }
    if (this.holding && this.#trackers === trackers && trackers.every((tracker) => !tracker.lost)) {
      this.#cache.set(this.#keys.leaseKey, started + this.#settings.leaseMs);
    }
  }

  #closeTrackers() {
    const trackers = this.#trackers;
    this.#trackers = [];
    for (const tracker of trackers) tracker.close();
  }

  #drop() {
    this.#claimVersion = 0;
    this.#closeTrackers();
  }
}

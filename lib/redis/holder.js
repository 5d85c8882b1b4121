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
//     entryKey): a new one drops every entry of the namespace at once. It
//     never repeats, even when the key was evicted (see nextGeneration),
//     and while it is missing nothing is served or kept locally. A
//     holder bumps it once all its Trackers are subscribed (entries written
//     before may have missed an invalidation: Redis's rule, flush on a lost
//     tracking connection), on a flush, and on a lost Tracker (after its
//     replacement is subscribed);
//   - leaseKey: when (ms since the epoch) the last ping round whose answers
//     came back from every server started (0: none, or no longer valid):
//     every invalidation of a write Redis acknowledged before then was
//     handled (see Tracker#ping). Each reader serves entries for its own
//     leaseMs (a RedisTier option) after it. A holder that dies or stalls stops renewing it, so
//     hits stop being served fresh within leaseMs. A ping that is not
//     answered within pingTimeoutMs counts as a lost tracker.
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
  /** How long a ping may go unanswered before its tracker counts as lost (ms). */
  pingTimeoutMs: 1000,
});

// Every cache key of a namespace starts with "\0acr:<namespace>\0": a
// namespace has no NUL, so no two namespaces share a key, and after that NUL
// a state key is a word and an entry key a generation (digits) and ':'.

/** The cache keys of namespace `namespace`'s shared state. */
export function stateKeys(namespace) {
  const base = `\u0000acr:${namespace}\u0000`;
  return { claimKey: `${base}claim`, genKey: `${base}gen`, leaseKey: `${base}lease`, endpointKey: `${base}endpoint`, flightPrefix: `${base}flight:` };
}

/** The cache key of `key`'s entry in generation `generation` of `namespace`. */
export function entryKey(namespace, generation, key) {
  return `\u0000acr:${namespace}\u0000${generation}:${key}`;
}

/**
 * A generation after `previous` (undefined when the key is missing) that no
 * holder has used: the clock in ms times 1024 plus a random part, or one
 * more than `previous` if that is larger. An evicted generation key cannot
 * bring an old generation back (an increment from 0 would).
 */
export function nextGeneration(previous) {
  const fresh = Date.now() * 1024 + Math.floor(Math.random() * 1024);
  return typeof previous === 'number' && previous >= fresh ? previous + 1 : fresh;
}


export class TrackingHolder {
  #cache;
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
  /** A rearm() came during an arming: its trackers may miss a master. */
  #armAgain = false;
  #closed = false;
  /** What this holder did, for stats and tests. */
  counts = { claims: 0, lostClaims: 0, generationBumps: 0, invalidations: 0, trackerLosses: 0 };

  /**
   * @param {object} options
   * @param {import('../cache/shared-cache.js').SharedCache} options.cache the machine's cache
   * @param {() => any[] | Promise<any[]>} options.servers every server to track (a cluster's masters), asked at each arming, as a function that opens an ioredis connection to it with overrides of its options (see redis-client.js trackedServers)
   * @param {string} options.namespace the namespace; Redis keys are `${namespace}:${key}`
   * @param {number} [options.pingTimeoutMs] and the other HOLDER_DEFAULTS
   */
  constructor({ cache, servers, namespace, ...settings }) {
    this.#cache = cache;
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

  /** The generation entries are keyed by now; undefined before a holder armed, or when its key was evicted (then nothing is served or kept locally). */
  generation() {
    return this.#cache.get(this.#keys.genKey);
  }

  /** When the last complete ping round started (ms since the epoch; 0: no lease now). */
  vouchedAt() {
    return this.#cache.get(this.#keys.leaseKey) ?? 0;
  }

  /**
   * The servers to track changed (a cluster gained or lost a master): a
   * holder drops its Trackers and arms new ones, which bumps the generation.
   * Calls while an arming runs make one more arming after it.
   */
  rearm() {
    if (!this.holding || this.#closed) return;
    this.#cache.set(this.#keys.leaseKey, 0);
    if (this.#arming !== null) {
      this.#armAgain = true;
      return;
    }
    this.#closeTrackers();
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
          // An evicted generation: entries are neither served nor kept until there is a new one.
          else if (this.#arming === null && this.generation() === undefined) this.#bump();
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

  /**
   * Opens a Tracker per server; once all are subscribed, bumps the
   * generation. A failure closes this arming's trackers, and the next tick
   * tries again. Trackers of an arming that was overtaken (closed, the role
   * lost, a rearm) are closed, never left open.
   */
  #arm() {
    if (this.#arming !== null) return;
    const arming = (async () => {
      const servers = await this.#servers();
      if (this.#closed || !this.holding) return;
      const trackers = servers.map((open) => new Tracker(open, this.#prefix));
      for (const tracker of trackers) {
        tracker.on('invalidate', (keys) => this.#invalidate(keys));
        tracker.on('flush', () => this.#applying() && this.#bump());
        tracker.on('lost', () => this.#trackerLost(tracker));
      }
      this.#trackers = trackers;
      try {
        await Promise.all(trackers.map((tracker) => tracker.start()));
      } catch (error) {
        this.#closeTrackers(trackers);
        throw error;
      }
      if (this.#closed || !this.holding || this.#trackers !== trackers) {
        this.#closeTrackers(trackers);
        return;
      }
      // Covered from here on: what was cached before may have missed an invalidation.
      this.#bump();
    })();
    this.#arming = arming;
    arming
      .catch(() => {})
      .finally(() => {
        if (this.#arming === arming) this.#arming = null;
        if (this.#armAgain) {
          this.#armAgain = false;
          this.rearm();
        }
      });
  }

  /** Whether tracker events are still this holder's to apply (not after close()). */
  #applying() {
    return !this.#closed && this.holding;
  }

  #invalidate(keys) {
    if (!this.#applying()) return;
    const generation = this.generation();
    // No generation: no entry can be reached (see generation()).
    if (generation === undefined) return;
    const maxKeyBytes = this.#cache.maxKeyBytes;
    for (const raw of keys) {
      const key = raw.toString();
      if (!key.startsWith(this.#prefix)) continue;
      const entry = entryKey(this.#namespace, generation, key.slice(this.#prefix.length));
      // A key too long for the cache never has an entry (the tier reads it through uncached).
      if (Buffer.byteLength(entry) > maxKeyBytes) continue;
      this.#cache.delete(entry);
      this.counts.invalidations++;
    }
  }

  /** Drops every entry of the namespace on this machine at once: a new generation (any process may). */
  bump() {
    this.#bump();
  }

  #bump() {
    const cache = this.#cache;
    cache.set(this.#keys.leaseKey, 0);
    // Never an old generation again: see nextGeneration().
    cache.update(this.#keys.genKey, (previous) => nextGeneration(previous));
    this.counts.generationBumps++;
  }

  #trackerLost(tracker) {
    if (!this.#applying() || !this.#trackers.includes(tracker)) return;
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
    const timeoutMs = this.#settings.pingTimeoutMs;
    try {
      await Promise.all(
        trackers.map(async (tracker) => {
          let timer;
          // A connection that went silent (no reset, no answer) is a lost one: Redis's advice.
          const silent = new Promise((_, reject) => {
            timer = setTimeout(() => {
              this.#trackerLost(tracker);
              reject(new Error('ping unanswered'));
            }, timeoutMs);
          });
          try {
            await Promise.race([tracker.ping(), silent]);
          } finally {
            clearTimeout(timer);
          }
        }),
      );
    } catch {
      return;
    }
    if (this.#applying() && this.#trackers === trackers && trackers.every((tracker) => !tracker.lost)) {
      this.#cache.set(this.#keys.leaseKey, started);
    }
  }

  /** Closes `trackers` (the current ones by default, which are then none). */
  #closeTrackers(trackers = this.#trackers) {
    if (trackers === this.#trackers) this.#trackers = [];
    for (const tracker of trackers) tracker.close();
  }

  #drop() {
    this.#claimVersion = 0;
    this.#closeTrackers();
  }
}

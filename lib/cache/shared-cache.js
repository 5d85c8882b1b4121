// SharedCache: the public key/value API over an arena.
//
// The instance is thin: it validates arguments, encodes keys and values, and
// hands bytes to the Arena it holds privately. Everything another thread needs
// lives in the shared buffer, so `SharedCache.attach(cache.handle)` in a
// worker gives a cache with the same entries, memory and stats.

import { ArenaCacheError, codes, describe } from '../errors.js';
import {
  CHECKSUM_BYTES,
  KEY_BYTES,
  KEY_STRING,
  maxValueBytes,
  recordSize,
  TTL_BYTES,
  NUMBER_BYTES,
  VALUE_CODEC,
  VALUE_NUMBER,
  VALUE_RAW,
  VALUE_UTF8,
} from '../arena/entries/record.js';
import { HOLDS_CODEC_VALUE, IF_ABSENT, IF_PRESENT, IF_VERSION, incrementNumber, removeIfVersion, storeIf, takeValue, touchEntry } from '../arena/entries/atomic-ops.js';
import { REMOVE_LAPSED } from '../arena/entries/arena.js';
import { FlightTable } from './flights.js';
import { STAT } from '../arena/common/thread-stats.js';
import { CacheInspector } from './cache-inspector.js';
import { Fetcher } from './fetcher.js';
import { KeyEncoder } from './key-encoder.js';
import { LatencySampler } from './latency.js';
import { NearCache } from './near-cache.js';
import { registerCacheMetrics } from './metrics.js';
import { startSweepTimer } from './sweep-timer.js';
import { typedArrayByteLength } from '../typed-array.js';
import { bindCodec, msgpackCodec, portableBytes } from './codec.js';
import { checkEntryOptions, checkFiniteNumber, checkIterable, checkVersion, entryInfo, readFetchOptions } from './call-options.js';
import { checkTtl, nearCacheBytesFor } from './options.js';
import { flushMapping, releaseMappedArena } from '../arena/common/file-backing.js';
import { cleanMarkFor, lastOpen } from '../arena/entries/restart.js';
import { NUMBER_VALUES_VERSION } from '../arena/common/layout.js';
import { OUTBOX_CLEAR, OUTBOX_DELETE, OUTBOX_SET } from './outbox.js';
import { kBothStampsAreCurrent, kFillLocked, kGetFound, kInvalidation, kOwnerIdentity, kOwnerIsDead, kStampIsCurrent, kUnpublished, kWaitFully } from '../internal-symbols.js';
import { OWNER_DEAD, ownerState } from '../arena/common/liveness.js';
import { makeHandle } from './handle.js';
import { attachParts, createParts, kAttach, openParts } from './open.js';
import { cacheStats } from './cache-stats.js';
import { InvalidationPort } from './invalidation-port.js';
import { FoundEntry } from '../arena/entries/record-stamp.js';
import { fetchStarted } from './diagnostics.js';


const ALLOW_STALE = Object.freeze({ allowStale: true });

/** How many times update() reads and writes before it gives up (ERR_UPDATE_CONFLICT). */
const UPDATE_ATTEMPTS = 100;

/** A number as the 8 bytes (a little-endian float64) a version marker carries it in. */
function numberBytes(value) {
  const bytes = Buffer.allocUnsafe(NUMBER_BYTES);
  bytes.writeDoubleLE(value, 0);
  return bytes;
}

/** What a decoded value that is not a number is, for ERR_NOT_A_NUMBER. */
function kindOfValue(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function notANumberError(key, holds) {
  return new ArenaCacheError(codes.ERR_NOT_A_NUMBER, `incr(): key ${describe(key)} holds ${holds}, not a number; it was left as it is`);
}

function updateConflictError(key, method) {
  return new ArenaCacheError(
    codes.ERR_UPDATE_CONFLICT,
    `${method}(): key ${describe(key)} was changed by other writers between each of ${UPDATE_ATTEMPTS} reads and the write after it; nothing was written`,
  );
}

function closedError() {
  return new ArenaCacheError(codes.ERR_CACHE_CLOSED, 'the cache is closed: close() was called on this instance');
}

/** What `run()` returns, or `busy` where it threw ERR_ARENA_BUSY (a live thread held the shard's lock past lockWaitMs). */
function unlessBusy(run, busy) {
  try {
    return run();
  } catch (error) {
    if (error?.code === codes.ERR_ARENA_BUSY) return busy;
    throw error;
  }
}

/** How often fetch() waiters look for a loader's result without a wake (see FlightTable). */
const FLIGHT_POLL_MS = Object.freeze({ memory: 100, file: 10 });

// Re-entrancy. A call runs user code in the middle of its work: the codec's
// encode and decode, getters and toJSON on a value (the default codec reads
// them, and runs msgpackr extensions), fetch() loaders. That code may call
// any method of this instance, which refills the per-instance scratch: the
// KeyEncoder (#keyEncoder), the prepared entry (#entry), and the lookup records
// (#found, #written) the arena fills. So no call fills scratch and then runs
// user code before it is consumed:
//   - a value is encoded before its key (set, setMany, kFillLocked), and
//     setMany encodes every value before it stores any;
//   - a get takes what its lookup found (stamp, value kind, staleness,
//     hash) before it decodes, and hands it on as values: to the near
//     cache, and after the last user code to the record its caller handed
//     it (kGetFound, fetch());
//   - every other read of a lookup record or of #keyEncoder follows its arena
//     call with no user code in between.
// Each scratch field says so beside it.

export class SharedCache {
  #arena;
  /**
   * The key scratch, filled by keys.encode() right before the arena call
   * that consumes it (and #publish()): no user code may run in between.
   */
  #keyEncoder;
  #codec;
  #defaultTtl;
  /** options.staleWhileRevalidate as the arena was created with it. */
  #defaultStale;
  /** Whether records may carry a stale time (see layout.js OLDEST_LAYOUT_VERSION); else stale windows are dropped. */
  #staleTimes;
  /** Whether numbers are stored as numbers (see layout.js NUMBER_VALUES_VERSION); else through the codec. */
  #numberValues;
  /** Aborted by close(): the signal of loaders still running. */
  #closing = null;
  #maxRecordBytes;
  /** Bytes each record adds for its checksum (file-backed caches; see recordChecksum). */
  #checksumBytes;
  #handle;
  #closed = false;
  #sweepTimer = null;
  #fetcher = null;
  #sampler = null;
  #path;
  #mapped;
  /** Where this thread's writes go for the InvalidationBus (null when attached from a bare buffer). */
  #outbox;
  /** The codec as given (before binding), for [kUnpublished]. */
  #givenCodec;
  /** This instance's side of the InvalidationBus, made when a bus asks for it (see kInvalidation). */
  #invalidationPort = null;
  /** Ready values of recently read entries (null: options.nearCache or options.nearCacheBytes is 0). */
  #near = null;

  /**
   * Creates a cache in a new SharedArrayBuffer.
   * @param {import('./options.js').DEFAULTS} options
   */
  constructor(options) {
    // open() and attach() hand over the parts of an existing arena (see open.js).
    const attaching = options !== null && typeof options === 'object' && Object.hasOwn(options, kAttach);
    const { arena, codec, path, mapped, outbox, nearCache, nearCacheBytes } = attaching ? options[kAttach] : createParts(options);
    const nearBytes = nearCacheBytesFor(nearCacheBytes, arena.header.memoryBytes);
    if (nearCache > 0 && nearBytes > 0) this.#near = new NearCache(nearCache, nearBytes, arena, codec === msgpackCodec);
    const header = arena.header;
    this.#arena = arena;
    // The default codec keeps its structures in the arena: one binding per instance.
    this.#codec = bindCodec(codec, arena.buffer, header);
    this.#givenCodec = codec;
    this.#path = path;
    this.#mapped = mapped;
    this.#outbox = outbox;
    this.#defaultTtl = header.defaultTtl;
    this.#defaultStale = header.defaultStaleMs;
    this.#staleTimes = header.layoutVersion >= 4;
    this.#numberValues = header.layoutVersion >= NUMBER_VALUES_VERSION;
    // The largest record: a whole main ring.
    this.#maxRecordBytes = header.regionBytes - header.smallRingBytes;
    this.#checksumBytes = header.recordChecksums === 1 ? CHECKSUM_BYTES : 0;
    this.#keyEncoder = new KeyEncoder(header.maxKeyBytes, arena.hashStartFor(KEY_STRING), arena.hashStartFor(KEY_BYTES));
    this.#handle = makeHandle(arena.buffer, path, outbox?.buffer ?? null);
    if (header.sweepIntervalMs > 0) this.#sweepTimer = startSweepTimer(arena, arena.owner);
  }

  /**
   * Attaches to a cache created in another thread, from its `handle`: cache.handle (`outbox` the
   * buffer the InvalidationBus reads this instance's writes from), or its bare SharedArrayBuffer,
   * which has no path and no outbox.
   * @param {import('./handle.js').CacheHandle} handle
   * @param {{ codec?: object }} [options]
   */
  static attach(handle, options) {
    return attachParts(handle, options, (parts) => new SharedCache({ [kAttach]: parts }));
  }

  /**
   * Opens the cache in the file at `path`, creating it when it does not
   * exist and options.memoryBytes is given. Every process that opens the
   * same path shares one cache; reopening after a restart finds its entries.
   * @param {string} path
   * @param {import('./options.js').OPEN_DEFAULTS} [options]
   */
  static open(path, options) {
    return openParts(path, options, (parts) => new SharedCache({ [kAttach]: parts }));
  }

  /**
   * Reads the cache in the existing file at `path` without opening it as a
   * cache: no recovery, no lock, no thread slot, not a byte written (the
   * file is opened and mapped read-only). For diagnosis: its verify()
   * reports damage as found, its stats() the file's counters; values of any
   * codec can be listed (see CacheInspector). Close it when done.
   * @param {string} path
   * @param {{ codec?: object }} [options] codec: the file's codec, only to decode its values
   * @returns {CacheInspector}
   */
  static inspect(path, options) {
    return new CacheInspector(path, options);
  }

  /**
   * A structured-cloneable value for postMessage/workerData (and piscina task
   * arguments) that SharedCache.attach() turns back into a cache.
   */
  get handle() {
    return this.#handle;
  }

  /**
   * The value stored under `key`, or undefined. With the near cache (see
   * options.nearCache), objects come back deep-frozen.
   * @param {{ allowStale?: boolean }} [options] allowStale: also a value
   *   past its ttl but within its stale window (see staleWhileRevalidate)
   */
  get(key, options) {
    if (this.#sampler !== null && !this.#sampler.passing) return this.#sampler.get(this, key, options);
    if (this.#closed) throw closedError();
    const allowStale = options !== undefined && checkEntryOptions(options, 'get').allowStale === true;
    const kept = this.#keptValue(key, null);
    if (kept !== undefined) return kept;
    this.#keyEncoder.encode(key);
    return this.#readEncoded(key, allowStale, null);
  }

  /**
   * The lookup record of get(), peek() and #storedValue(): filled by the
   * arena call and read before any user code (a decode) runs, which may
   * make lookups of its own (see the top of this file).
   */
  #found = new FoundEntry();

  /**
   * The value the near cache keeps for `key` (it counts the near hit), or
   * undefined (not kept, or no longer current). The near cache keeps fresh
   * values only: their stamps lapse at the stale time. On a hit, `out` (the
   * caller's record, or null) is filled with the entry's stamp.
   */
  #keptValue(key, out) {
    const near = this.#near;
    if (near === null || typeof key !== 'string') return undefined;
    return near.get(key, out);
  }

  /**
   * get() past the near cache, of the key #keyEncoder holds (encoded with no user
   * code since). On a hit, `out` (the caller's record, or null when it
   * wants none) is filled with what the lookup found, after the last user
   * code: the stamp, staleness and value kind of the value returned.
   */
  #readEncoded(key, allowStale, out) {
    const keys = this.#keyEncoder;
    const found = this.#found;
    const stored = this.#arena.get(keys, allowStale, found);
    if (stored === undefined) return stored;
    if (found.valueKind === VALUE_CODEC) return this.#decodeFound(key, keys.hash, stored, out);
    // A string or bytes: no user code ran since the lookup, so `found` and `keys` are still this get's.
    if (out !== null) out.copyFrom(found);
    // Stale values are not kept near; Buffers neither (see NearCache): no call for them.
    const near = this.#near;
    if ((allowStale && found.stale) || near === null || typeof key !== 'string' || typeof stored === 'object') return stored;
    // A string or a number.
    const storedBytes = typeof stored === 'string' ? stored.length : NUMBER_BYTES;
    return near.keep(key, keys.hash, stored, storedBytes, found.shard, found.slot, found.offset, found.stamp, found.expiresAt);
  }

  /**
   * #readEncoded() of a value the codec stores, once its lookup found
   * `stored`. The decode (and the near cache's freezing walk, which reads
   * getters) is user code that may call this cache and so refill #found
   * and the key scratch: what the lookup found is taken first and handed
   * on as values, to the near cache and, after the last user code, to `out`.
   */
  #decodeFound(key, hash, stored, out) {
    const found = this.#found;
    const shard = found.shard;
    const slot = found.slot;
    const offset = found.offset;
    const stamp = found.stamp;
    const expiresAt = found.expiresAt;
    const stale = found.stale;
    let value = this.#decode(stored);
    const near = this.#near;
    if (near !== null && !stale && typeof key === 'string') value = near.keep(key, hash, value, stored.length, shard, slot, offset, stamp, expiresAt);
    if (out !== null) {
      out.shard = shard;
      out.slot = slot;
      out.offset = offset;
      out.stamp = stamp;
      out.expiresAt = expiresAt;
      out.stale = stale;
      out.valueKind = VALUE_CODEC;
    }
    return value;
  }

  /** get() that also returns a stale value. */
  #readAllowingStale(key) {
    return this.get(key, ALLOW_STALE);
  }

  /**
   * The value of `key` like get(), without recording a use or counting a
   * get: for looking, not for serving.
   * @param {{ allowStale?: boolean }} [options] as for get()
   */
  peek(key, options) {
    if (this.#closed) throw closedError();
    const allowStale = options !== undefined && checkEntryOptions(options, 'peek').allowStale === true;
    const keys = this.#keyEncoder;
    keys.encode(key);
    const found = this.#found;
    const stored = this.#arena.peek(keys, allowStale, found);
    if (stored === undefined) return stored;
    // The kind is read before the decode (user code): nothing is read after it.
    return found.valueKind === VALUE_CODEC ? this.#decode(stored) : stored;
  }

  /**
   * Milliseconds until `key` goes stale (or expires, without a stale
   * window): Infinity for an entry without a ttl, 0 for no entry, and
   * negative (by how long) for a stale entry still within its window.
   */
  getRemainingTTL(key) {
    return this.info(key)?.remainingTTL ?? 0;
  }

  /**
   * What the cache knows of `key`, or undefined when it has no live entry
   * (a stale one counts): { value, stale, remainingTTL, staleAt,
   * expiresAt, size, valueBytes, policy: { name, ring, frequency } }. Not a
   * use, not counted.
   */
  info(key) {
    if (this.#closed) throw closedError();
    const keys = this.#keyEncoder;
    keys.encode(key);
    const arena = this.#arena;
    const facts = arena.inspect(keys);
    if (facts === null) return undefined;
    // The facts are this call's own object.
    const value = facts.valueKind === VALUE_CODEC ? this.#decode(facts.value) : facts.value;
    return entryInfo(facts, value, arena.header.policyName, Date.now());
  }

  /** The values of `keys` (an iterable), in order, undefined for each miss: get() for each. */
  getMany(keys, options) {
    if (this.#closed) throw closedError();
    const iterable = checkIterable(keys, 'keys');
    const allowStale = options !== undefined && checkEntryOptions(options, 'getMany').allowStale === true;
    const values = [];
    for (const key of iterable) values.push(allowStale ? this.#readAllowingStale(key) : this.get(key));
    return values;
  }

  /**
   * Stores every [key, value] pair of `entries` (an iterable such as a Map
   * or an array of pairs) with the same options. Every pair is checked
   * first: a bad key or value throws before anything is stored.
   * @param {{ ttl?: number, staleWhileRevalidate?: number }} [options] as for set()
   * @returns {this}
   */
  setMany(entries, options) {
    if (this.#closed) throw closedError();
    const pairs = [];
    for (const pair of checkIterable(entries, 'entries')) {
      if (pair === null || typeof pair !== 'object' || typeof pair[Symbol.iterator] !== 'function') {
        throw new TypeError(`entries must yield [key, value] pairs (got ${describe(pair)} at index ${pairs.length})`);
      }
      const [key, value] = pair;
      pairs.push(key, value);
    }
    const ttl = options === undefined ? this.#defaultTtl : (checkEntryOptions(options, 'setMany').ttl ?? this.#defaultTtl);
    const stale = options === undefined ? this.#defaultStale : (options.staleWhileRevalidate ?? this.#defaultStale);
    const keys = this.#keyEncoder;
    // Every value is encoded once, here, before anything is stored: encoding
    // is user code, and what it does (to this cache too) comes before the
    // batch. Each stored form keeps its kind: a getter of one value may
    // change another's prototype, so the kind is not asked again.
    const forms = [];
    for (let i = 0; i < pairs.length; i += 2) {
      // The key is encoded (checked, and its length taken for the size check)
      // before its value's user code runs; it is encoded again for its store.
      keys.encode(pairs[i]);
      const keyLength = keys.length;
      const form = this.#storedForm(pairs[i + 1]);
      if (this.#sized(form[0], form[1], form[2], keyLength, ttl, stale) === null) throw this.#tooLarge(form[2], keyLength, ttl, stale);
      this.#entry.payload = null;
      forms.push(form);
    }
    // No user code from here on: each key is encoded right before its store.
    for (let i = 0; i < forms.length; i++) {
      const [kind, payload, length] = forms[i];
      this.#put(pairs[2 * i], kind, payload, length, pairs[2 * i + 1], ttl, stale);
    }
    return this;
  }

  /** Removes every key of `keys` (an iterable); returns how many had a live entry. */
  deleteMany(keys) {
    if (this.#closed) throw closedError();
    const iterable = checkIterable(keys, 'keys');
    let deleted = 0;
    for (const key of iterable) if (this.delete(key)) deleted++;
    return deleted;
  }

  /**
   * get(key), filling `found` (a FoundEntry its caller owns) on a hit with
   * what answered it (found.toRecordStamp() is the value's stamp), after
   * the last user code the get ran: for CacheFS and InodeFS, which keep
   * stamps of what they read.
   */
  [kGetFound](key, found) {
    if (this.#closed) throw closedError();
    const kept = this.#keptValue(key, found);
    if (kept !== undefined) return kept;
    this.#keyEncoder.encode(key);
    return this.#readEncoded(key, false, found);
  }

  [kBothStampsAreCurrent](a, b) {
    const clock = this.#arena.clock;
    return !this.#closed && a.holds(clock) && b.holds(clock);
  }

  [kStampIsCurrent](stamp) {
    return !this.#closed && stamp.holds(this.#arena.clock);
  }

  /**
   * Stores `value` under `key`, evicting other entries if memory is short.
   * @param {{ ttl?: number, staleWhileRevalidate?: number }} [options] ttl
   *   in ms (0 means no expiry); staleWhileRevalidate: ms after the ttl
   *   during which fetch() serves the value stale while refreshing it
   * @returns {this}
   */
  set(key, value, options) {
    if (this.#sampler !== null && !this.#sampler.passing) return this.#sampler.set(this, key, value, options);
    if (this.#closed) throw closedError();
    let ttl = this.#defaultTtl;
    let stale = this.#defaultStale;
    if (options !== undefined) {
      const given = checkEntryOptions(options, 'set');
      if (given.ttl !== undefined) ttl = given.ttl;
      if (given.staleWhileRevalidate !== undefined) stale = given.staleWhileRevalidate;
    }
    // #store() ran no user code after #sized(): #entry and #keyEncoder are still this set's.
    if (!this.#store(key, value, ttl, stale)) throw this.#tooLarge(this.#entry.length, this.#keyEncoder.length, ttl, stale);
    return this;
  }

  /** set() with its options read; false (nothing stored) when the value is too large. */
  #store(key, value, ttl, stale) {
    // #storedForm() inline: set() is a hot path and allocates nothing.
    let kind;
    let payload;
    let length;
    if (typeof value === 'string') {
      kind = VALUE_UTF8;
      payload = value;
      length = Buffer.byteLength(value, 'utf8');
    } else if (value instanceof Uint8Array && ArrayBuffer.isView(value)) {
      kind = VALUE_RAW;
      payload = value;
      length = typedArrayByteLength(value);
    } else if (typeof value === 'number' && this.#numberValues) {
      kind = VALUE_NUMBER;
      payload = value;
      length = NUMBER_BYTES;
    } else {
      // The key is checked before the encode's user code runs (a bad key
      // throws first, and that code never sees the value); #put() encodes
      // it after, for the store.
      this.#keyEncoder.check(key);
      kind = VALUE_CODEC;
      payload = this.#encode(value);
      length = typedArrayByteLength(payload);
    }
    return this.#put(key, kind, payload, length, value, ttl, stale);
  }

  /**
   * Stores `payload`, the stored form of `value`, under `key`; false
   * (nothing stored) when it is too large. Runs no user code: the key is
   * encoded here, right before the arena and the outbox consume it.
   */
  #put(key, kind, payload, length, value, ttl, stale) {
    const keys = this.#keyEncoder;
    keys.encode(key);
    const entry = this.#sized(kind, payload, length, keys.length, ttl, stale);
    if (entry === null) return false;
    // The arena describes the record it wrote only for a near cache that may
    // keep the value: string keys and string values (NearCache.written()
    // ignores the rest; an old copy of the key there fails its stamp check at
    // the next get). Filling it costs about 8% of a 64 B set.
    const near = this.#near;
    const written = near !== null && typeof key === 'string' && typeof value === 'string' ? this.#written : null;
    this.#arena.set(keys, entry, written);
    entry.payload = null;
    this.#wrote(key, value, length, written);
    return true;
  }

  /**
   * After a store of `value` (`length` bytes stored) under `key`, the key
   * #keyEncoder holds, as `written` records it (null: not recorded, see
   * #put): this instance's near cache keeps a string, and the
   * InvalidationBus hears of a set. No user code.
   */
  #wrote(key, value, length, written) {
    const near = this.#near;
    if (near !== null && written !== null && typeof key === 'string') near.written(key, value, length, written);
    this.#publish(OUTBOX_SET, this.#keyEncoder.length);
  }

  /** The record set() hands the arena: read right after, by the near cache, with no user code in between. */
  #written = new FoundEntry();

  /**
   * Internal, for InodeFS: stores what `load()` returns under `key` (nothing
   * for undefined) while holding the key's shard lock, so that no set() or
   * delete() of the key by any thread or process falls between the load and
   * the store. `load` must not use this cache. Returns the loaded value.
   */
  [kFillLocked](key, load) {
    if (this.#closed) throw closedError();
    const keys = this.#keyEncoder;
    keys.encode(key);
    let loaded;
    this.#arena.fill(keys, () => {
      loaded = load();
      const form = loaded === undefined ? null : this.#storedForm(loaded);
      // load() and the codec ran: the key is encoded again for the store
      // and #publish() (the same key: the same hash, the shard fill() locked).
      keys.encode(key);
      if (form === null) return null;
      const entry = this.#sized(form[0], form[1], form[2], keys.length, this.#defaultTtl, this.#defaultStale);
      if (entry === null) throw this.#tooLarge(form[2], keys.length, this.#defaultTtl, this.#defaultStale);
      return entry;
    });
    this.#entry.payload = null;
    this.#publish(OUTBOX_SET, keys.length);
    return loaded;
  }

  /**
   * #sized()'s answer, reused: set() is a hot path and allocates nothing
   * else. Filled after the value was encoded and consumed by the arena call
   * right after: no user code runs in between.
   */
  #entry = { kind: 0, payload: null, length: 0, expiresAt: 0, staleAt: 0, size: 0 };

  /**
   * The stored form of `value` as [kind, payload, byte length]: the codec
   * encodes what is neither a string, bytes nor a number (user code runs). For
   * setMany() and kFillLocked; set() does the same inline.
   */
  #storedForm(value) {
    if (typeof value === 'string') return [VALUE_UTF8, value, Buffer.byteLength(value, 'utf8')];
    if (value instanceof Uint8Array && ArrayBuffer.isView(value)) return [VALUE_RAW, value, typedArrayByteLength(value)];
    if (typeof value === 'number' && this.#numberValues) return [VALUE_NUMBER, value, NUMBER_BYTES];
    const bytes = this.#encode(value);
    return [VALUE_CODEC, bytes, typedArrayByteLength(bytes)];
  }

  /**
   * The entry to store for a payload in stored form: its kind, payload, byte
   * length, expiry and stale times and record size (valid until the next
   * call); null when it is too large to store.
   */
  #sized(kind, payload, length, keyLength, ttl, stale) {
    const entry = this.#entry;
    entry.length = length;
    const timeBytes = this.#timeBytes(ttl, stale);
    const size = recordSize(keyLength, length + this.#checksumBytes, timeBytes);
    if (size > this.#maxRecordBytes) return null;
    entry.kind = kind;
    entry.payload = payload;
    if (timeBytes === 0) {
      entry.expiresAt = 0;
      entry.staleAt = 0;
    } else {
      const now = Date.now();
      entry.staleAt = timeBytes > TTL_BYTES ? now + ttl : 0;
      entry.expiresAt = now + ttl + (timeBytes > TTL_BYTES ? stale : 0);
    }
    entry.size = size;
    return entry;
  }

  /** The time field bytes of a record stored with this ttl and stale window (see record.js). */
  #timeBytes(ttl, stale) {
    if (!(ttl > 0)) return 0;
    return stale > 0 && this.#staleTimes ? 2 * TTL_BYTES : TTL_BYTES;
  }

  /** Whether `key` has a live, unexpired entry. Does not count as a use. */
  has(key) {
    if (this.#closed) throw closedError();
    const keys = this.#keyEncoder;
    keys.encode(key);
    return this.#arena.has(keys);
  }

  /** Removes `key`; true if it had a live entry (like Map#delete). */
  delete(key) {
    if (this.#closed) throw closedError();
    const keys = this.#keyEncoder;
    keys.encode(key);
    try {
      return this.#arena.delete(keys);
    } finally {
      // Also when the delete failed (ERR_ARENA_BUSY): dropping the key
      // elsewhere is never wrong. Published even when nothing was here: a
      // peer may have the key. (No user code ran since the encode.)
      if (this.#near !== null && typeof key === 'string') this.#near.delete(key);
      this.#publish(OUTBOX_DELETE, keys.length);
    }
  }

  // Atomic operations (docs/shared-cache.md#atomic-operations). Each reads
  // and writes the key in one holding of its shard's lock, so no write of
  // any thread or process falls in between (lib/arena/entries/atomic-ops.js).
  // Values are encoded before and decoded after: no user code runs under
  // the lock.

  /**
   * Stores `value` under `key` only if the key has no entry (or an expired
   * one); true if it stored.
   * @param {{ ttl?: number, staleWhileRevalidate?: number }} [options] as for set()
   */
  add(key, value, options) {
    return this.#storeIf('add', key, value, options, IF_ABSENT, 0);
  }

  /**
   * Stores `value` under `key` only if the key has an entry (a stale one
   * counts, an expired one does not); true if it stored.
   * @param {{ ttl?: number, staleWhileRevalidate?: number }} [options] as for set()
   */
  replace(key, value, options) {
    return this.#storeIf('replace', key, value, options, IF_PRESENT, 0);
  }

  /**
   * Stores `value` under `key` only if the key's entry still has `version`
   * (from info(key).version); true if it stored, false for any other
   * version, and for a missing or expired key.
   * @param {{ ttl?: number, staleWhileRevalidate?: number }} [options] as for set()
   */
  compareAndSet(key, version, value, options) {
    if (this.#closed) throw closedError();
    checkVersion(version, 'version');
    return this.#storeIf('compareAndSet', key, value, options, IF_VERSION, version);
  }

  /** add(), replace() and compareAndSet(): `condition` and `version` as storeIf() takes them. */
  #storeIf(method, key, value, options, condition, version) {
    if (this.#closed) throw closedError();
    let ttl = this.#defaultTtl;
    let stale = this.#defaultStale;
    if (options !== undefined) {
      const given = checkEntryOptions(options, method);
      if (given.ttl !== undefined) ttl = given.ttl;
      if (given.staleWhileRevalidate !== undefined) stale = given.staleWhileRevalidate;
    }
    const keys = this.#keyEncoder;
    // The key first: a bad key throws before the codec (user code) sees the value.
    keys.check(key);
    const [kind, payload, length] = this.#storedForm(value);
    keys.encode(key);
    const entry = this.#sized(kind, payload, length, keys.length, ttl, stale);
    if (entry === null) throw this.#tooLarge(length, keys.length, ttl, stale);
    const written = this.#written;
    let stored;
    try {
      stored = storeIf(this.#arena, keys, entry, condition, version, written);
    } finally {
      entry.payload = null;
    }
    if (stored) this.#wrote(key, value, length, written);
    return stored;
  }

  /**
   * Adds `delta` (default 1; negative and fractional allowed) to the number
   * under `key` and returns the result. A key without an entry (or with an
   * expired one) starts at `options.initial` (0) with `options.ttl` (the
   * cache's ttl); an existing key keeps its expiry. Integers are exact up
   * to 2^53. A key holding anything but a number is ERR_NOT_A_NUMBER and
   * stays as it is. Not published to an InvalidationBus: a count is its
   * machine's (see the docs).
   * @param {{ ttl?: number, initial?: number }} [options]
   */
  incr(key, delta = 1, options) {
    if (this.#closed) throw closedError();
    checkFiniteNumber(delta, 'delta');
    let ttl = this.#defaultTtl;
    let initial = 0;
    if (options !== undefined) {
      const given = checkEntryOptions(options, 'incr');
      if (given.ttl !== undefined) ttl = given.ttl;
      if (given.initial !== undefined) initial = given.initial;
    }
    if (!this.#numberValues) return this.#incrementDecoded(key, delta, initial, ttl);
    const keys = this.#keyEncoder;
    keys.encode(key);
    const entry = this.#sized(VALUE_NUMBER, initial + delta, NUMBER_BYTES, keys.length, ttl, 0);
    if (entry === null) throw this.#tooLarge(NUMBER_BYTES, keys.length, ttl, 0);
    const found = this.#written;
    let result;
    try {
      result = incrementNumber(this.#arena, keys, delta, entry, found);
    } finally {
      entry.payload = null;
    }
    if (typeof result === 'number') return result;
    if (result === HOLDS_CODEC_VALUE) return this.#incrementDecoded(key, delta, initial, ttl);
    throw notANumberError(key, found.valueKind === VALUE_UTF8 ? 'a string' : 'bytes');
  }

  /**
   * incr() of a key whose value the codec stores (a number an earlier
   * version stored, or anything a custom codec encoded), or of any key in a
   * file older than NUMBER_VALUES_VERSION: read, decoded and written back by
   * add() or compareAndSet(), keeping its expiry.
   */
  #incrementDecoded(key, delta, initial, ttl) {
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      const facts = this.info(key);
      if (facts === undefined) {
        if (this.add(key, initial + delta, { ttl })) {
          this.#arena.counters[STAT.increments]++;
          return initial + delta;
        }
        continue;
      }
      if (typeof facts.value !== 'number') throw notANumberError(key, kindOfValue(facts.value));
      const remaining = facts.expiresAt === Infinity ? 0 : Math.max(1, Math.ceil(facts.expiresAt - Date.now()));
      const next = facts.value + delta;
      if (this.compareAndSet(key, facts.version, next, { ttl: remaining })) {
        this.#arena.counters[STAT.increments]++;
        return next;
      }
    }
    throw updateConflictError(key, 'incr');
  }

  /**
   * Calls `fn(current)` with the value under `key` (undefined when it has
   * none; a stale value counts; a private copy, as from get()) and stores
   * what it returns, only if no other write of the key came in between:
   * otherwise reads and calls again, up to 100 times, then
   * ERR_UPDATE_CONFLICT. `fn` returning undefined deletes the key. Returns
   * what was stored (undefined after a delete).
   * @param {(current: unknown) => unknown} fn
   * @param {{ ttl?: number, staleWhileRevalidate?: number }} [options] as for set()
   */
  update(key, fn, options) {
    if (this.#closed) throw closedError();
    if (typeof fn !== 'function') throw new TypeError(`fn must be a function (got ${describe(fn)})`);
    if (options !== undefined) checkEntryOptions(options, 'update');
    const read = new FoundEntry();
    for (let attempt = 0; attempt < UPDATE_ATTEMPTS; attempt++) {
      if (attempt > 0) this.#arena.counters[STAT.conditionalMisses]++;
      const current = this.#readWithVersion(key, read);
      const version = current === undefined ? 0 : read.stamp;
      const next = fn(current);
      if (this.#closed) throw closedError();
      if (next === undefined) {
        if (current === undefined) return undefined;
        if (this.#deleteIfVersion(key, version)) return undefined;
      } else if (version === 0 ? this.add(key, next, options) : this.compareAndSet(key, version, next, options)) {
        return next;
      }
    }
    throw updateConflictError(key, 'update');
  }

  /** The value of `key` as peek({ allowStale: true }) reads it, decoded afresh; `found` gets its version (stamp). */
  #readWithVersion(key, found) {
    const keys = this.#keyEncoder;
    keys.encode(key);
    const stored = this.#arena.peek(keys, true, found);
    if (stored === undefined) return undefined;
    // The kind is read before the decode (user code): nothing is read after it.
    return found.valueKind === VALUE_CODEC ? this.#decode(stored) : stored;
  }

  /** delete(key) only if it still has `version`, published as a delete; whether it did. */
  #deleteIfVersion(key, version) {
    const keys = this.#keyEncoder;
    keys.encode(key);
    const removed = removeIfVersion(this.#arena, keys, version);
    if (removed) {
      if (this.#near !== null && typeof key === 'string') this.#near.delete(key);
      this.#publish(OUTBOX_DELETE, keys.length);
    }
    return removed;
  }

  /**
   * Gives `key`, if it has an entry, a ttl of `ttl` ms from now (0: no
   * expiry; a stale window keeps its length) without rewriting its value;
   * true if it had one. The entry's version changes. Not published to an
   * InvalidationBus (the value is the same).
   * @param {number} ttl
   */
  touch(key, ttl) {
    if (this.#closed) throw closedError();
    checkTtl(ttl, 'ttl');
    const keys = this.#keyEncoder;
    keys.encode(key);
    return touchEntry(this.#arena, keys, ttl, this.#entry, this.#written);
  }

  /**
   * Removes `key` and returns its value in one atomic step, so that of
   * several callers in any threads and processes exactly one gets it;
   * undefined when it has no fresh value (a stale one with allowStale).
   * Published as a delete.
   * @param {{ allowStale?: boolean }} [options]
   */
  take(key, options) {
    if (this.#closed) throw closedError();
    const allowStale = options !== undefined && checkEntryOptions(options, 'take').allowStale === true;
    const keys = this.#keyEncoder;
    keys.encode(key);
    const found = this.#found;
    const stored = takeValue(this.#arena, keys, allowStale, found);
    if (stored === undefined) return undefined;
    const kind = found.valueKind;
    if (this.#near !== null && typeof key === 'string') this.#near.delete(key);
    this.#publish(OUTBOX_DELETE, keys.length);
    // Decoded last: the codec is user code, and the key is already taken.
    return kind === VALUE_CODEC ? this.#decode(stored) : stored;
  }

  /** Removes every entry, in every thread's view. Counters are kept. */
  clear() {
    if (this.#closed) throw closedError();
    try {
      this.#arena.clear();
    } finally {
      // Also when a shard could not be cleared (ERR_ARENA_BUSY): the others were.
      this.#near?.clear();
      this.#publish(OUTBOX_CLEAR, 0);
    }
  }

  /**
   * Runs `fn()` with this instance's shard lock waits unbounded (see
   * lib/cache/fully-waiting.js): for the internal users whose writes must
   * not be cut short by lockWaitMs.
   */
  [kWaitFully](fn) {
    const lock = this.#arena.lock;
    const waitMs = lock.waitMs;
    lock.waitMs = Infinity;
    try {
      return fn();
    } finally {
      lock.waitMs = waitMs;
    }
  }

  /** Hands a write of the last encoded key (none for a clear) to the InvalidationBus, when one runs: one load otherwise. */
  #publish(op, keyLength) {
    const outbox = this.#outbox;
    if (outbox !== null && outbox.publishing) outbox.append(op, this.#keyEncoder.kind, this.#keyEncoder.bytes, keyLength);
  }

  /**
   * The InvalidationBus started on this instance (see InvalidationBus), or
   * null. Writes of every thread attached with this cache's handle are
   * published through it.
   */
  get invalidation() {
    return this.#invalidationPort?.bus ?? null;
  }

  /** Internal, for InvalidationBus: the outbox and how to apply peers' invalidations (see invalidation-port.js). */
  [kInvalidation]() {
    if (this.#closed) throw closedError();
    this.#invalidationPort ??= new InvalidationPort(this, {
      outbox: this.#outbox,
      arena: this.#arena,
      keyEncoder: this.#keyEncoder,
      storeEncoded: (kind, payload, length) => this.#storeEncoded(kind, payload, length),
      storedValue: (key) => this.#storedValue(key),
    });
    return this.#invalidationPort;
  }

  /**
   * Stores a peer's value, in stored form, under the key last encoded, with
   * the default ttl; not published again, and no user code runs. False when
   * this cache cannot hold it (a number, in an arena older processes may
   * still read: see NUMBER_VALUES_VERSION).
   */
  #storeEncoded(kind, payload, length) {
    if (kind === VALUE_NUMBER && !this.#numberValues) return false;
    const keys = this.#keyEncoder;
    const entry = this.#sized(kind, payload, length, keys.length, this.#defaultTtl, this.#defaultStale);
    if (entry === null) return false;
    this.#arena.set(keys, entry);
    entry.payload = null;
    return true;
  }

  /** A version marker's stored form for the wire: its value kind, then its bytes; undefined when absent. */
  #storedValue(key) {
    const keys = this.#keyEncoder;
    keys.encode(key);
    const found = this.#found;
    const value = this.#arena.peek(keys, false, found);
    if (value === undefined) return undefined;
    // Taken before portableBytes(), which decodes (msgpackr extensions are user code that may read this cache).
    const kind = found.valueKind;
    // Codec values travel without this arena's structures, which peers do not share; numbers as 8 bytes, little-endian.
    const bytes =
      typeof value === 'string'
        ? Buffer.from(value, 'utf8')
        : typeof value === 'number'
          ? numberBytes(value)
          : kind === VALUE_CODEC
            ? portableBytes(this.#codec, value)
            : value;
    if (bytes === undefined) return undefined;
    const stored = Buffer.allocUnsafe(1 + bytes.length);
    stored[0] = kind;
    stored.set(bytes, 1);
    return stored;
  }

  /** Internal, for the Redis tier: this thread's owner identity, { word, id }, as shard-lock records name it. */
  [kOwnerIdentity]() {
    if (this.#closed) throw closedError();
    const lock = this.#arena.lock;
    return { word: lock.ownerWord, id: lock.ownerId };
  }

  /** Internal, for the Redis tier: whether the owner of an identity ([kOwnerIdentity]) is known to be dead (liveness.js). */
  [kOwnerIsDead](word, id) {
    if (this.#closed) throw closedError();
    return ownerState(word, id, this.#arena.lock.liveness) === OWNER_DEAD;
  }

  /**
   * Internal, for the Redis tier: another instance over this arena, with the
   * same codec and a near cache of its own, whose writes no InvalidationBus
   * publishes (the tier's bookkeeping is this machine's alone). Close it too.
   */
  [kUnpublished]() {
    if (this.#closed) throw closedError();
    return SharedCache.attach(this.#arena.buffer, { codec: this.#givenCodec });
  }

  /** The longest key in bytes (options.maxKeyBytes, as the arena was created with it). */
  get maxKeyBytes() {
    return this.#keyEncoder.maxKeyBytes;
  }

  /** Number of entries (entries that expired but were not reclaimed yet included). */
  get size() {
    if (this.#closed) throw closedError();
    return this.#arena.size;
  }

  /**
   * Keys of live entries. Weakly consistent: each shard is read at one
   * instant, so a key present for the whole iteration is yielded exactly
   * once; keys set or deleted meanwhile may or may not appear.
   */
  *keys() {
    if (this.#closed) throw closedError();
    for (let shard = 0; shard < this.#arena.shards.length; shard++) {
      for (const entry of this.#arena.copyShardEntries(shard, false)) yield this.#decodeKey(entry);
    }
  }

  /** Values of live entries (weakly consistent, like keys()). */
  *values() {
    for (const [, value] of this.entries()) yield value;
  }

  /** [key, value] pairs of live entries (weakly consistent, like keys()). */
  *entries() {
    if (this.#closed) throw closedError();
    for (let shard = 0; shard < this.#arena.shards.length; shard++) {
      for (const entry of this.#arena.copyShardEntries(shard, true)) {
        const value = entry.valueKind === VALUE_CODEC ? this.#decode(entry.value) : entry.value;
        // undefined: a value the codec no longer reads (see #decode), as get() misses it.
        if (value !== undefined) yield [this.#decodeKey(entry), value];
      }
    }
  }

  [Symbol.iterator]() {
    return this.entries();
  }

  /** Counters of every thread attached to this cache, summed, and its sizes. */
  stats() {
    if (this.#closed) throw closedError();
    return cacheStats(this.#arena.header, this.#arena.stats(), this.#outbox, this.#mapped ? lastOpen(this.#arena.buffer, this.#arena.pendingChecks()) : null);
  }

  /**
   * Checks the arena's internal invariants (each shard briefly locked in
   * turn). For diagnosis: a healthy cache always returns { ok: true }.
   * @returns {{ ok: boolean, problems: string[] }}
   */
  verify() {
    if (this.#closed) throw closedError();
    const problems = this.#arena.verify();
    return { ok: problems.length === 0, problems };
  }

  /**
   * The value of `key`; on a miss, runs `loader(key, { signal, staleValue,
   * context })` once for the whole arena (every concurrent fetch of the
   * key, in any thread, waits for that one run), stores what it returns,
   * and resolves every caller with it. A loader error rejects every waiting
   * caller and stores nothing. A value in its stale window is returned at
   * once while one loader refreshes it. See docs/shared-cache.md for every option.
   * @param {unknown} key
   * @param {(key: unknown, options: { signal: AbortSignal, staleValue: unknown, context: unknown }) => unknown} loader
   * @param {object} [options] ttl, staleWhileRevalidate, allowStale,
   *   forceRefresh, signal, context, allowStaleOnFetchRejection,
   *   noDeleteOnFetchRejection
   */
  async fetch(key, loader, options) {
    if (this.#closed) throw closedError();
    if (typeof loader !== 'function') throw new TypeError(`loader must be a function (got ${describe(loader)})`);
    const resolved = readFetchOptions(options);
    const startedAt = fetchStarted();
    const keys = this.#keyEncoder;
    keys.encode(key);
    // The fetcher gets the key's identity and hash as values: its reads, loader and store run user code.
    const hash = keys.hash;
    const keyId = typeof key === 'string' ? `s${key}` : `b${Buffer.from(keys.bytes.buffer, keys.bytes.byteOffset, keys.length).toString('hex')}`;
    // One lookup of the key just encoded gives the value and whether it is
    // stale; this call's own record, filled after the decode's user code.
    let cached;
    let stale = false;
    if (!resolved.forceRefresh) {
      const found = new FoundEntry();
      cached = this.#keptValue(key, found);
      if (cached === undefined) cached = this.#readEncoded(key, true, found);
      stale = cached !== undefined && found.stale;
    }
    return this.#fetcherOf().fetch(key, keyId, hash, loader, resolved, { cached, stale, startedAt });
  }

  #fetcherOf() {
    if (this.#fetcher !== null) return this.#fetcher;
    const arena = this.#arena;
    const flights = new FlightTable(arena.buffer, arena.header, arena.owner, this.#mapped ? FLIGHT_POLL_MS.file : FLIGHT_POLL_MS.memory, arena.liveness);
    this.#closing = new AbortController();
    const port = {
      read: (key) => {
        if (this.#closed) throw closedError();
        return this.get(key);
      },
      // A loaded value whose shard a live thread keeps locked past
      // lockWaitMs is returned to the callers uncached (counted in
      // lockTimeouts and fetchUncached), not thrown: the load succeeded.
      store: (key, value, options) => {
        if (this.#closed) throw closedError();
        return unlessBusy(() => this.#store(key, value, options?.ttl ?? this.#defaultTtl, options?.staleWhileRevalidate ?? this.#defaultStale), false);
      },
      dropIfLapsed: (key) => {
        if (this.#closed) return;
        const keys = this.#keyEncoder;
        keys.encode(key);
        unlessBusy(() => this.#arena.remove(keys, REMOVE_LAPSED), undefined);
      },
      closedSignal: this.#closing.signal,
    };
    this.#fetcher = new Fetcher(port, flights, arena.counters, arena.header.fetchTimeoutMs);
    return this.#fetcher;
  }

  /**
   * Exposes the cache's counters and sizes in a prom-client registry, read
   * at scrape time. Returns a function that removes them again.
   * @param {import('prom-client').Registry} registry
   * @param {{ name?: string, prefix?: string }} [options] the `cache` label
   *   (default "default") and the metric name prefix (default "arenacache_")
   */
  registerMetrics(registry, options) {
    if (this.#closed) throw closedError();
    return registerCacheMetrics(this, registry, options);
  }

  /**
   * Times one get() and one set() in `every` on this instance (for
   * benchmarks); see latency() and lib/cache/latency.js. Off by default,
   * and then a null check.
   * @param {{ every?: number }} [options] default 64
   */
  startLatencySampling(options) {
    if (this.#closed) throw closedError();
    this.#sampler = new LatencySampler(options);
  }

  /** Stops latency sampling; returns the final report (see latency()). */
  stopLatencySampling() {
    const report = this.latency();
    this.#sampler = null;
    return report;
  }

  /**
   * Latency of the sampled calls in microseconds, or null when sampling is
   * off: { every, get: { samples, avgUs, p50Us, p99Us, maxUs }, set: {...} }.
   */
  latency() {
    return this.#sampler === null ? null : this.#sampler.report();
  }

  /**
   * Closes this instance: stops its sweeper timer (another thread takes the
   * sweeping over) and makes further calls throw ERR_CACHE_CLOSED. Its
   * pending fetch() calls reject at once with ERR_CACHE_CLOSED, its loaders'
   * signals abort, and the keys it was loading are given back, so that
   * callers waiting for them elsewhere load them themselves. Other threads'
   * instances and the entries are not affected. For a file-backed cache, the
   * last instance of this process to close unmaps the file.
   */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#sweepTimer?.stop();
    this.#sweepTimer = null;
    // Pending fetches reject and loaders still running learn it through
    // their signal (what they return is not stored). This comes before the
    // mapping is released below: the fetcher gives the flights this instance
    // holds back in the arena, where waiters in other processes see it.
    this.#closing?.abort(closedError());
    this.#invalidationPort?.closeBus();
    this.#near?.clear();
    this.#near = null;
    if (this.#mapped) releaseMappedArena(this.#arena, cleanMarkFor(this.#arena.header));
  }

  /**
   * Writes a file-backed cache's memory back to its file and waits until the
   * file is durable (msync and fdatasync, off the event loop). Entries are
   * shared through the mapping at once either way; flush() is about surviving
   * a machine crash. For an in-memory cache there is nothing to write.
   * @returns {Promise<void>}
   */
  async flush() {
    if (this.#closed) throw closedError();
    if (this.#mapped) await flushMapping(this.#arena.buffer, `arena file ${this.#path ?? '(attached)'}`);
  }

  /** The arena file's path for a file-backed cache, null for an in-memory one. */
  get path() {
    return this.#path;
  }

  /** Whether close() was called on this instance. */
  get closed() {
    return this.#closed;
  }


  #encode(value) {
    if (value === undefined) {
      throw new TypeError('value must not be undefined; use delete(key) to remove an entry');
    }
    if (typeof value === 'function' || typeof value === 'symbol') {
      throw new TypeError(`value must be a Buffer, Uint8Array, string or a value the codec can encode (got ${describe(value)})`);
    }
    const codec = this.#codec;
    let bytes;
    try {
      bytes = codec.encode(value);
    } catch (cause) {
      throw new TypeError(`value could not be encoded by the ${codec.name} codec: ${cause?.message ?? cause}`, { cause });
    }
    if (!(bytes instanceof Uint8Array && ArrayBuffer.isView(bytes))) {
      throw new TypeError(`the ${codec.name} codec's encode() must return a Uint8Array (got ${describe(bytes)})`);
    }
    return bytes;
  }

  /** The decoded value; undefined (a miss) when the default codec finds its structures gone (see codec.js). */
  #decode(bytes) {
    const codec = this.#codec;
    try {
      return codec.decode(bytes);
    } catch (cause) {
      throw new ArenaCacheError(
        codes.ERR_CODEC_DECODE,
        `a stored value could not be decoded by the ${codec.name} codec: ${cause?.message ?? cause}`,
        { cause },
      );
    }
  }

  #decodeKey(entry) {
    return entry.keyKind === KEY_STRING ? Buffer.from(entry.key.buffer).toString('utf8') : Buffer.from(entry.key.buffer);
  }

  #tooLarge(length, keyLength, ttl, stale) {
    const header = this.#arena.header;
    // Quoted for an entry with a ttl (the larger of the usual headers), or with a stale window when this one has one.
    const timeBytes = Math.max(TTL_BYTES, this.#timeBytes(ttl, stale));
    return new RangeError(
      `value is ${length} bytes; the largest value this cache can hold under this key is ` +
        `${maxValueBytes(this.#maxRecordBytes, keyLength, timeBytes) - this.#checksumBytes} bytes (each of its ${header.shardCount} shards has ` +
        `${this.#maxRecordBytes} bytes for one entry); raise options.memoryBytes or lower options.shards`,
    );
  }
}

// The outbox: how every thread of a process hands its writes to the one
// thread that talks to the network.
//
// It is a SharedArrayBuffer that travels in the cache's handle, so a worker
// that attaches with SharedCache.attach(cache.handle) writes to the same
// outbox as the thread that runs the InvalidationBus. (Each process has its
// own outbox even when processes share a mapped arena file: each process
// publishes its own threads' writes.)
//
// Producers append records under a ShardLock (microseconds: one key copy) and
// move the committed end forward only once a record is whole, so a worker
// terminated mid-append leaves nothing half-written: the lock is taken over
// after it and the next append overwrites the uncommitted bytes. The bus
// drains the whole outbox at once, so records never wrap around. When the
// outbox is full, a producer does not wait (the bus may be its own thread):
// it raises the overflow flag and the bus tells peers to clear everything,
// which loses no invalidation.
//
//   meta words (Int32Array of 32; the ShardLock uses words 0-2, 9 and 10)
//   data       records: op (1), key kind (1), key length (2, little-endian), key bytes
//   counters   Float64Array, see COUNTERS

import { currentThreadId, isProcessAlive, isThreadAlive } from '../native/thread-identity.js';
import { ShardLock } from '../arena/common/shard-lock.js';

const META_BYTES = 128;
const W_COMMITTED = 16; // bytes of whole records
const W_RECORDS = 17; // their number
const W_OVERFLOW = 18;
const W_BUS_PID = 19; // the process and thread running the bus, 0 when none
const W_BUS_TID = 20;
const W_BUS_CLAIM = 21; // 1 while a bus runs
const W_NOTIFY_AT = 22; // wake the bus once this many records are waiting (0: no wake wanted)
const W_WAKE = 23; // the word the bus sleeps on
const W_CLAIMS = 24; // claims made so far: the running bus's claim is its token

/**
 * Why the bus refuses what a peer sent: a message (openDatagram() and the
 * SenderTable's reasons), or for 'not-marker' one entry (a value for a key
 * that is not a marker here).
 */
export const DROP_REASONS = Object.freeze(['mac', 'replay', 'stale', 'short', 'oversize', 'magic', 'version', 'garbled', 'not-marker']);

/** The counter (and stats() field) of drops for `reason`: 'mac' -> 'invalidationDropsMac', 'not-marker' -> 'invalidationDropsNotMarker'. */
export function dropCounter(reason) {
  return `invalidationDrops${reason.replace(/(?:^|-)(.)/g, (_, letter) => letter.toUpperCase())}`;
}

/** Counters shared by every thread of the process, named as the stats() fields they are. */
export const COUNTERS = Object.freeze([
  'udpBatchesSent',
  'udpKeysSent',
  'udpBatchesReceived',
  'udpKeysReceived',
  'redisBatchesSent',
  'redisKeysSent',
  'redisBatchesReceived',
  'redisKeysReceived',
  'redisReconnects',
  'invalidationSendErrors',
  'invalidationOverflows',
  ...DROP_REASONS.map(dropCounter),
]);
const COUNTER = Object.freeze(Object.fromEntries(COUNTERS.map((name, i) => [name, i])));
const COUNTER_BYTES = 8 * 32;

/** Ops a producer records. */
export const OUTBOX_SET = 1;
export const OUTBOX_DELETE = 2;
export const OUTBOX_CLEAR = 3;

/** The default size of the record area: at ~20 bytes a record, tens of thousands of writes between drains. */
const OUTBOX_BYTES = 512 * 1024;
const RECORD_HEADER = 4;
const MAX_KEY_BYTES = 0xffff;

export class Outbox {
  /** A new outbox, for a cache created or opened in this thread. */
  static create(dataBytes = OUTBOX_BYTES) {
    return new Outbox(new SharedArrayBuffer(META_BYTES + COUNTER_BYTES + dataBytes));
  }

  /** @param {SharedArrayBuffer} buffer from Outbox#buffer, possibly in another thread */
  constructor(buffer) {
    this.buffer = buffer;
    this.meta = new Int32Array(buffer, 0, META_BYTES / 4);
    this.counters = new Float64Array(buffer, META_BYTES, COUNTER_BYTES / 8);
    this.data = new Uint8Array(buffer, META_BYTES + COUNTER_BYTES);
    // The lock's own counters are private: outbox waits are not shard waits.
    this.lock = new ShardLock({ leaseMs: 1000, counters: new Float64Array(64), ownerId: currentThreadId() });
    this.lockable = { meta: this.meta, recoverFromDeadHolder() {}, reset() {} };
  }

  /** Whether a bus is running: producers record nothing otherwise. */
  get publishing() {
    return this.meta[W_BUS_CLAIM] === 1;
  }

  /**
   * Records a write. `keyBytes` holds the encoded key in its first
   * `keyLength` bytes; `kind` is the key kind of record.js.
   */
  append(op, kind, keyBytes, keyLength) {
    if (keyLength > MAX_KEY_BYTES) {
      this.raiseOverflow();
      return;
    }
    const meta = this.meta;
    const held = this.lock.acquire(this.lockable);
    const at = meta[W_COMMITTED];
    const end = at + RECORD_HEADER + keyLength;
    if (end > this.data.length) {
      this.lock.release(this.lockable, held, false);
      this.raiseOverflow();
      return;
    }
    const data = this.data;
    data[at] = op;
    data[at + 1] = kind;
    data[at + 2] = keyLength & 0xff;
    data[at + 3] = keyLength >>> 8;
    if (keyLength > 0) data.set(keyLength === keyBytes.length ? keyBytes : keyBytes.subarray(0, keyLength), at + RECORD_HEADER);
    // Commit: the record counts only from here on.
    Atomics.store(meta, W_COMMITTED, end);
    const records = Atomics.add(meta, W_RECORDS, 1) + 1;
    this.lock.release(this.lockable, held, false);
    // Atomic: on weakly ordered CPUs a plain load could miss the bus's store before it sleeps.
    const notifyAt = Atomics.load(meta, W_NOTIFY_AT);
    if (notifyAt > 0 && records >= notifyAt) this.wake();
  }

  raiseOverflow() {
    Atomics.store(this.meta, W_OVERFLOW, 1);
    this.wake();
  }

  wake() {
    const meta = this.meta;
    if (Atomics.exchange(meta, W_NOTIFY_AT, 0) === 0) return;
    Atomics.add(meta, W_WAKE, 1);
    Atomics.notify(meta, W_WAKE);
  }

  /**
   * For the bus: takes every committed record out. Returns { overflowed,
   * records: [{ op, kind, key: Buffer }] } and leaves the outbox empty.
   */
  drain() {
    const meta = this.meta;
    const held = this.lock.acquire(this.lockable);
    const committed = meta[W_COMMITTED];
    const bytes = committed === 0 ? null : Buffer.from(this.data.subarray(0, committed));
    meta[W_COMMITTED] = 0;
    meta[W_RECORDS] = 0;
    const overflowed = Atomics.exchange(meta, W_OVERFLOW, 0) === 1;
    this.lock.release(this.lockable, held, false);
    const records = [];
    for (let at = 0; bytes !== null && at < bytes.length; ) {
      const keyLength = bytes[at + 2] | (bytes[at + 3] << 8);
      records.push({ op: bytes[at], kind: bytes[at + 1], key: bytes.subarray(at + RECORD_HEADER, at + RECORD_HEADER + keyLength) });
      at += RECORD_HEADER + keyLength;
    }
    return { overflowed, records };
  }

  /**
   * For the bus: resolves once `records` records are waiting (or the
   * outbox overflowed), or after `timeoutMs` (Infinity: no limit).
   */
  async waitFor(records, timeoutMs) {
    const meta = this.meta;
    const seen = Atomics.load(meta, W_WAKE);
    Atomics.store(meta, W_NOTIFY_AT, records);
    // An append that came before the store above did not wake us: look.
    if (Atomics.load(meta, W_RECORDS) >= records || Atomics.load(meta, W_OVERFLOW) === 1) {
      Atomics.store(meta, W_NOTIFY_AT, 0);
      return;
    }
    const result = Atomics.waitAsync(meta, W_WAKE, seen, timeoutMs);
    if (result.async) await result.value;
    Atomics.store(meta, W_NOTIFY_AT, 0);
  }

  /** Wakes a waitFor() at once (the bus is closing). */
  interrupt() {
    Atomics.add(this.meta, W_WAKE, 1);
    Atomics.notify(this.meta, W_WAKE);
  }

  /**
   * Marks the outbox as served by a bus in this thread. Returns the claim's
   * token for release(), or 0 when a live bus (in this or another thread of
   * the process) has it already.
   */
  claim() {
    const meta = this.meta;
    // 2 marks a claim being written; 1 a running bus, taken over only when its thread is gone.
    if (Atomics.compareExchange(meta, W_BUS_CLAIM, 0, 2) === 0) {
      // Nothing was published while no bus ran: nothing in here is owed to peers.
      Atomics.store(meta, W_COMMITTED, 0);
      Atomics.store(meta, W_RECORDS, 0);
    } else {
      const pid = Atomics.load(meta, W_BUS_PID);
      const tid = Atomics.load(meta, W_BUS_TID);
      const gone = pid > 0 && (!isProcessAlive(pid) || (tid > 0 && isThreadAlive(pid, tid) === false));
      if (!gone || Atomics.compareExchange(meta, W_BUS_CLAIM, 1, 2) !== 1) return 0;
      // Taken over from a dead bus: the records waiting for it are ours to
      // send, and what it drained but never sent is unknown, so peers clear.
      Atomics.store(meta, W_OVERFLOW, 1);
    }
    Atomics.store(meta, W_BUS_PID, process.pid);
    Atomics.store(meta, W_BUS_TID, currentThreadId());
    let token = (Atomics.add(meta, W_CLAIMS, 1) + 1) | 0;
    if (token === 0) token = (Atomics.add(meta, W_CLAIMS, 1) + 1) | 0; // 0 means no claim
    Atomics.store(meta, W_BUS_CLAIM, 1);
    return token;
  }

  /** Stops publishing (the bus closed), if the claim `token` still holds: a bus never frees another's claim. */
  release(token) {
    const meta = this.meta;
    if (Atomics.load(meta, W_BUS_CLAIM) !== 1 || Atomics.load(meta, W_CLAIMS) !== token) return;
    Atomics.store(meta, W_BUS_PID, 0);
    Atomics.store(meta, W_BUS_TID, 0);
    Atomics.store(meta, W_BUS_CLAIM, 0);
  }

  count(name, by = 1) {
    this.counters[COUNTER[name]] += by;
  }

  /** The counters by name. */
  snapshot() {
    const out = {};
    for (let i = 0; i < COUNTERS.length; i++) out[COUNTERS[i]] = this.counters[i];
    return out;
  }
}

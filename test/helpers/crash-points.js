// Crash points for tests of what a lock holder that dies leaves behind
// (arena.crash-points.test.js, arena.increment-crash-points.test.js): every
// write a mutation makes to a shard's memory is recorded through proxies
// over its typed arrays, so that a test can put the memory back, replay any
// prefix of those writes (the state a holder that died right there leaves)
// and rebuild the shard as a takeover would.
import { SharedCache } from '../../lib/index.js';
import { Arena } from '../../lib/arena/entries/arena.js';
import { TAG_MASK } from '../../lib/arena/entries/policies.js';
import { KeyEncoder } from '../../lib/cache/key-encoder.js';
import { arenaPath } from './arena-files.js';

/**
 * A one-shard cache for test `t` (in memory, or `file`-backed, whose records
 * carry checksums) with what a crash-point test reaches into: its arena, the
 * shard, a key encoder of the arena's, and all its memory as bytes.
 */
export function crashPointCache(t, file, options) {
  const settings = { memoryBytes: 2 ** 20, shards: 1, nearCache: 0, ...options };
  const cache = file ? SharedCache.open(arenaPath(t), settings) : new SharedCache(settings);
  t.after(() => cache.close());
  const arena = Arena.attach(cache.handle.buffer);
  const shard = arena.shards[0];
  if (shard.checksums !== file) throw new Error(`the shard ${shard.checksums ? 'has' : 'lacks'} record checksums`);
  const keys = new KeyEncoder(arena.header.maxKeyBytes, arena.stringHashStart, arena.bytesHashStart);
  return { cache, arena, shard, keys, memory: new Uint8Array(cache.handle.buffer) };
}

/** The shard's memory, as Shard fields: every write to them is recorded. */
const FIELDS = ['u32', 'u8', 'f64', 'bytes', 'table', 'meta', 'meta64', 'groupWrites', 'counts'];
/** The hybrid policy's ghost tables and state (entries/ghost-table.js): fields of shard.ghosts, logged under these names. */
const GHOST_FIELDS = { ghostState: 'state', ghostSlots: 'slots' };
/** Bulk writes are recorded as the runs of 8 bytes (or single elements) a copy writes one after another. */
const CHUNK = 8;

/** The elements a bulk write by `method` will store into `array`, as [index, values] runs in the order a copy makes them. */
function bulkRuns(array, method, args) {
  let start;
  let values;
  let backward = false;
  if (method === 'set') {
    [values, start = 0] = args;
    values = Array.isArray(values) ? Uint8Array.from(values) : values.slice();
  } else if (method === 'copyWithin') {
    const [target, from, end = array.length] = args;
    values = array.slice(from, end);
    start = target;
    // memmove copies from the far end when the destination lies after the source.
    backward = target > from;
  } else if (method === 'fill') {
    const [value, from = 0, end = array.length] = args;
    values = array.slice(from, end).fill(value);
    start = from;
  } else if (method === 'latin1Write' || method === 'utf8Write') {
    const [text, offset = 0, length] = args;
    const encoded = Buffer.from(text, method === 'latin1Write' ? 'latin1' : 'utf8');
    values = encoded.subarray(0, length ?? encoded.length);
    start = offset;
  } else {
    return null;
  }
  const step = array.BYTES_PER_ELEMENT === 1 ? CHUNK : 1;
  const runs = [];
  for (let i = 0; i < values.length; i += step) runs.push([start + i, values.slice(i, Math.min(values.length, i + step))]);
  return backward ? runs.reverse() : runs;
}

/** Records `shard`'s writes into `log` until the returned function is called. */
export function recordWrites(shard, log) {
  const originals = {};
  const fields = [...FIELDS.map((name) => [shard, name, name]), ...Object.entries(GHOST_FIELDS).map(([name, field]) => [shard.ghosts, field, name])];
  const restore = [];
  for (const [holder, field, name] of fields) {
    const target = holder[field];
    if (target === null) continue;
    originals[name] = target;
    restore.push(() => {
      holder[field] = target;
    });
    holder[field] = new Proxy(target, {
      set(array, property, value) {
        array[property] = value;
        // Read back: the store as the typed array converted it.
        if (typeof property === 'string' && /^\d+$/.test(property)) log.push({ name, index: Number(property), values: [array[property]] });
        return true;
      },
      get(array, property) {
        const member = array[property];
        if (typeof member !== 'function') return member;
        return (...args) => {
          const runs = bulkRuns(array, property, args);
          if (runs !== null) for (const [index, values] of runs) log.push({ name, index, values });
          return member.apply(array, args);
        };
      },
    });
  }
  // Atomics need real typed arrays: the same updates as plain stores, through the proxies.
  shard.touchAt = () => false;
  shard.setFrequency = function setFrequency(slot, frequency) {
    this.slotChanged(slot);
    this.table[2 * slot + 1] = ((this.table[2 * slot + 1] & TAG_MASK) | frequency) >>> 0;
  };
  return () => {
    for (const undo of restore) undo();
    delete shard.touchAt;
    delete shard.setFrequency;
    return originals;
  };
}

export function replay(arrays, entries) {
  for (const { name, index, values } of entries) {
    const array = arrays[name];
    for (let i = 0; i < values.length; i++) array[index + i] = values[i];
  }
}

/** The crash points to try among 0..n writes: all of them, or at most `most` spread evenly (plus the first and last 16). */
export function crashPoints(n, most) {
  if (n + 1 <= most) return Array.from({ length: n + 1 }, (_, k) => k);
  // The first and last writes are where bookkeeping starts and ends (a clear's ring resets come last).
  const points = new Set();
  for (let k = 0; k < 16; k++) points.add(k).add(n - k);
  for (let i = 0; i < most; i++) points.add(Math.round((i * n) / (most - 1)));
  return [...points].sort((a, b) => a - b);
}


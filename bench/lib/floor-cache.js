// FloorCache: a minimal seqlock cache in a SharedArrayBuffer, written only as
// a measurement baseline for bench:core (the "floor" rows): what hash, lock,
// probe and copy cost on their own, so that every run shows how far
// SharedCache's get and set are from that floor. It is not a product and
// nothing outside bench/ may use it.
//
// What it does: string keys, hashed (FNV-1a with a finalizer) while they are
// copied as UTF-8 into a scratch buffer; shards picked by the low hash bits,
// each with an int32 seqlock (writers CAS it odd and store it even; readers
// read it, look up and copy, and read it again); an open-addressed table of
// slots per shard (hash tag + record offset, linear probing); records
// (key length, value length, key bytes, value bytes) appended to the shard's
// region, keys compared by bytes, values (Buffers) copied in and out.
//
// What it leaves out that arenacache does: eviction and admission policies
// (a shard whose region or table fills is simply emptied), max entries,
// TTL and stale windows, deletes, dead-record reclamation, Buffer keys and
// codec values, a near cache, stats, crash recovery (a holder that dies keeps
// its shard locked forever), lock timeouts and liveness checks, record
// checksums, file backing, write stamps for near caches, invalidation,
// verify/rebuild, and the argument checks a public API needs.

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
/** Int32 words per shard of the meta block (64 bytes: one line per lock). */
const META_WORDS = 16;
const RECORD_HEADER = 8;
const CHUNK = 64 * 1024;
const POOLED_MAX = 8 * 1024;
const utf8 = new TextEncoder();

export class FloorCache {
  /** @param {{ memoryBytes: number, entries: number, shards?: number, maxKeyBytes?: number }} options */
  constructor({ memoryBytes, entries, shards = 16, maxKeyBytes = 1024 }) {
    this.shardMask = shards - 1;
    this.shardBits = Math.log2(shards);
    // Power-of-two tables at most 3/4 full (arenacache's bound too).
    this.slots = 2 ** Math.ceil(Math.log2((4 * entries) / 3 / shards + 8));
    this.slotMask = this.slots - 1;
    const tableBytes = shards * this.slots * 8;
    this.regionBytes = Math.floor((memoryBytes - shards * META_WORDS * 4 - tableBytes) / shards / 8) * 8;
    const buffer = new SharedArrayBuffer(shards * META_WORDS * 4 + tableBytes + shards * this.regionBytes);
    this.meta = new Int32Array(buffer, 0, shards * META_WORDS);
    this.tables = [];
    this.u8 = [];
    this.u32 = [];
    for (let s = 0; s < shards; s++) {
      this.tables.push(new Uint32Array(buffer, shards * META_WORDS * 4 + s * this.slots * 8, this.slots * 2));
      const start = shards * META_WORDS * 4 + tableBytes + s * this.regionBytes;
      this.u8.push(new Uint8Array(buffer, start, this.regionBytes));
      this.u32.push(new Uint32Array(buffer, start, this.regionBytes / 4));
    }
    this.scratch = new Uint8Array(maxKeyBytes);
    this.scratchWords = new Uint32Array(this.scratch.buffer);
    this.keyLength = 0;
    /** The record offset of the last probe() that found its key. */
    this.foundAt = 0;
    this.chunk = new ArrayBuffer(CHUNK);
    this.chunkWords = new Uint32Array(this.chunk);
    this.chunkOffset = 0;
  }

  /** Encodes `key` into the scratch buffer; returns its hash. */
  encode(key) {
    const scratch = this.scratch;
    const n = key.length;
    let h = FNV_OFFSET;
    let i = 0;
    if (n <= scratch.length) {
      for (; i < n; i++) {
        const c = key.charCodeAt(i);
        if (c > 0x7f) break;
        scratch[i] = c;
        h = Math.imul(h ^ c, FNV_PRIME);
      }
    }
    if (i < n) {
      const { read, written } = utf8.encodeInto(key, scratch);
      if (read < n) throw new RangeError('key too long');
      h = FNV_OFFSET;
      for (i = 0; i < written; i++) h = Math.imul(h ^ scratch[i], FNV_PRIME);
    }
    this.keyLength = i;
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    return h >>> 0;
  }

  /** The slot holding the scratch key in shard `s` (its record's offset in foundAt), or -1 - the free slot that ended the probe. */
  probe(s, hash) {
    const table = this.tables[s];
    const u32 = this.u32[s];
    const u8 = this.u8[s];
    const words = this.scratchWords;
    const scratch = this.scratch;
    const length = this.keyLength;
    const limit = this.regionBytes - RECORD_HEADER;
    let i = (hash >>> this.shardBits) & this.slotMask;
    for (let probes = 0; probes <= this.slotMask; probes++) {
      const ref = table[2 * i + 1];
      if (ref === 0) return -1 - i;
      if (table[2 * i] === hash) {
        // Bounded: an optimistic reader may see a slot half written.
        const at = (ref - 1) * 8;
        if (at <= limit && u32[at >>> 2] === length) {
          const k4 = (at + RECORD_HEADER) >>> 2;
          const whole = length >>> 2;
          let w = 0;
          while (w < whole && u32[k4 + w] === words[w]) w++;
          let j = w << 2;
          if (w === whole) while (j < length && u8[at + RECORD_HEADER + j] === scratch[j]) j++;
          if (j === length) {
            this.foundAt = at;
            return i;
          }
        }
      }
      i = (i + 1) & this.slotMask;
    }
    return -1 - this.slots;
  }

  get(key) {
    const hash = this.encode(key);
    const s = hash & this.shardMask;
    const meta = this.meta;
    const m = s * META_WORDS;
    for (;;) {
      const seq = meta[m];
      if ((seq & 1) !== 0) continue;
      const slot = this.probe(s, hash);
      let value;
      if (slot >= 0) value = this.copyOut(s, this.foundAt);
      if (Atomics.load(meta, m) === seq) return value;
    }
  }

  /** A Buffer copy of the value of the record at `at` (undefined if torn). */
  copyOut(s, at) {
    const u32 = this.u32[s];
    const start = at + RECORD_HEADER + ((u32[at >>> 2] + 7) & ~7);
    const length = u32[(at >>> 2) + 1];
    if (!(start + length <= this.regionBytes)) return undefined;
    if (length > POOLED_MAX) return Buffer.from(this.u8[s].subarray(start, start + length));
    // Values up to POOLED_MAX come from a chunk of our own.
    let offset = this.chunkOffset;
    if (offset + length > CHUNK) {
      this.chunk = new ArrayBuffer(CHUNK);
      this.chunkWords = new Uint32Array(this.chunk);
      offset = 0;
    }
    this.chunkOffset = (offset + length + 7) & ~7;
    const out = Buffer.from(this.chunk, offset, length);
    if (length > 128) {
      out.set(this.u8[s].subarray(start, start + length));
      return out;
    }
    // Small ones word by word: cheaper than a native copy.
    const words = this.chunkWords;
    const d = offset >>> 2;
    const from = start >>> 2;
    const count = (length + 3) >>> 2;
    for (let w = 0; w < count; w++) words[d + w] = u32[from + w];
    return out;
  }

  /** Stores the Buffer `value` under `key`. */
  set(key, value) {
    const hash = this.encode(key);
    const s = hash & this.shardMask;
    const meta = this.meta;
    const m = s * META_WORDS;
    let seq;
    for (;;) {
      seq = meta[m];
      if ((seq & 1) === 0 && Atomics.compareExchange(meta, m, seq, seq + 1) === seq) break;
    }
    try {
      this.store(s, hash, value);
    } finally {
      Atomics.store(meta, m, (seq + 2) | 0);
    }
  }

  store(s, hash, value) {
    const table = this.tables[s];
    const u32 = this.u32[s];
    const u8 = this.u8[s];
    const length = value.length;
    const keyBytes = (this.keyLength + 7) & ~7;
    let slot = this.probe(s, hash);
    if (slot >= 0) {
      const at = this.foundAt;
      if (u32[(at >>> 2) + 1] === length) {
        u8.set(value, at + RECORD_HEADER + keyBytes);
        return;
      }
    }
    const size = RECORD_HEADER + keyBytes + ((length + 7) & ~7);
    const m = s * META_WORDS;
    let at = this.meta[m + 1];
    let count = this.meta[m + 2];
    if (at + size > this.regionBytes || (slot < 0 && 4 * (count + 1) > 3 * this.slots)) {
      // No eviction policy: a full shard starts again empty.
      table.fill(0);
      at = 0;
      count = 0;
      slot = this.probe(s, hash);
    }
    u32[at >>> 2] = this.keyLength;
    u32[(at >>> 2) + 1] = length;
    u8.set(this.scratch.subarray(0, this.keyLength), at + RECORD_HEADER);
    u8.set(value, at + RECORD_HEADER + keyBytes);
    if (slot < 0) {
      slot = -1 - slot;
      count++;
    }
    table[2 * slot] = hash;
    table[2 * slot + 1] = at / 8 + 1;
    this.meta[m + 1] = at + size;
    this.meta[m + 2] = count;
  }
}

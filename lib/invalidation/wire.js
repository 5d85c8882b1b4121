// The invalidation message: binary (a key may hold any byte, commas
// included), authenticated (no one else on the network can flush the
// cache) and replay-proof.
//
//   offset  bytes
//   0       4   magic "ACIV"
//   4       1   format version (2)
//   5       1   type: 1 invalidations, 2 hello, 3 answer (see senders.js)
//   6       2   entry count (big-endian; 0 in a hello or an answer)
//   8       8   sender id: random per bus start, so a restarted bus is a new sender
//   16      8   sequence number: the sender's messages count from 1 (big-endian, below 2^53)
//   24      8   timestamp, ms since the epoch by the sender's clock (big-endian float64)
//   32      ..  invalidations: entries: op (1 byte), key kind (1: string,
//               2: bytes), key length (4, big-endian), key bytes; and for op
//               'set', value length (4) and the value's encoded bytes.
//               hello and answer: the id of the bus addressed (8 bytes; a
//               hello to zeros asks every bus that receives it)
//   end-32  32  HMAC-SHA256 under the shared secret of every byte before it
//
// Any byte may appear in a key. The MAC is checked before anything else
// is parsed, so only a holder of the secret can make a peer parse entries.
// Version 1 (a nonce instead of the sequence number) is refused as 'version'.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { describe } from '../errors.js';

export const MAGIC = Buffer.from('ACIV');
export const VERSION = 2;
export const HEADER_BYTES = 32;
export const MAC_BYTES = 32;
/** The most a UDP datagram can carry over IPv4. */
export const MAX_UDP_PAYLOAD = 65507;
export const MIN_SECRET_BYTES = 16;

export const OPS = Object.freeze({ delete: 1, clear: 2, clearPrefix: 3, set: 4 });
const OP_NAMES = [null, 'delete', 'clear', 'clearPrefix', 'set'];
/** Message types (byte 5). */
export const TYPES = Object.freeze({ invalidations: 1, hello: 2, answer: 3 });
const TYPE_NAMES = [null, 'invalidations', 'hello', 'answer'];
/** The id a hello addresses when it asks every bus that receives it. */
export const ANY_BUS = Buffer.alloc(8);
const ID_BYTES = 8;
const KIND_STRING = 1;
const KIND_BYTES = 2;

/** The secret as bytes; TypeError when missing, RangeError when too short. */
export function secretBytes(secret, name = 'options.secret') {
  if (secret === undefined || secret === null) {
    throw new TypeError(`${name} is required: invalidations are authenticated with a secret shared by every peer (a string or Buffer of at least ${MIN_SECRET_BYTES} bytes)`);
  }
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret instanceof Uint8Array ? Buffer.from(secret) : null;
  if (bytes === null) throw new TypeError(`${name} must be a string or a Buffer (got ${describe(secret)})`);
  if (bytes.length < MIN_SECRET_BYTES) throw new RangeError(`${name} must be at least ${MIN_SECRET_BYTES} bytes (got ${bytes.length})`);
  return bytes;
}

function keyBytes(key) {
  if (typeof key === 'string') return [KIND_STRING, Buffer.from(key, 'utf8')];
  if (key instanceof Uint8Array) return [KIND_BYTES, Buffer.from(key.buffer, key.byteOffset, key.byteLength)];
  throw new TypeError(`key must be a string or a Uint8Array (got ${describe(key)})`);
}

/** Bytes one entry takes on the wire. */
function entrySize(entry) {
  return 6 + entry.key.length + (entry.op === OPS.set ? 4 + entry.value.length : 0);
}

/**
 * Packs invalidations into datagrams of at most `maxBytes` each, in order,
 * numbered from `seq` on (the caller's next sequence number; it advances by
 * the number of datagrams returned).
 * `invalidations` are { op: 'delete' | 'clear' | 'clearPrefix' | 'set', key?, value? }
 * (value: the encoded bytes of a version marker). Returns Buffer[].
 */
export function encodeDatagrams(invalidations, { secret, senderId, seq = 1, maxBytes = 1200, now = Date.now() }) {
  const key = secretBytes(secret);
  const room = maxBytes - HEADER_BYTES - MAC_BYTES;
  const entries = invalidations.map(({ op, key: name = '', value }) => {
    const code = OPS[op];
    if (code === undefined) throw new RangeError(`op must be 'delete', 'clear', 'clearPrefix' or 'set' (got ${describe(op)})`);
    const [kind, bytes] = keyBytes(name);
    const entry = { op: code, kind, key: bytes, value: code === OPS.set ? Buffer.from(value) : null };
    if (entrySize(entry) > room) {
      throw new RangeError(`an invalidation of ${entrySize(entry)} bytes (key and value) does not fit in a datagram of ${maxBytes} bytes`);
    }
    return entry;
  });
  const datagrams = [];
  for (let start = 0; start < entries.length; ) {
    let end = start;
    let size = 0;
    while (end < entries.length && end - start < 0xffff && size + entrySize(entries[end]) <= room) size += entrySize(entries[end++]);
    datagrams.push(seal(entries.slice(start, end), size, key, senderId, seq + datagrams.length, now));
    start = end;
  }
  return datagrams;
}

/**
 * A hello (type 'hello': "answer me with your sequence number") or an answer
 * to one ('answer'), addressed to the bus whose id is `to`.
 */
export function encodeControl(type, { secret, senderId, seq, to, now = Date.now() }) {
  const datagram = Buffer.allocUnsafe(HEADER_BYTES + ID_BYTES + MAC_BYTES);
  writeHeader(datagram, TYPES[type], 0, senderId, seq, now);
  to.copy(datagram, HEADER_BYTES);
  const signed = HEADER_BYTES + ID_BYTES;
  createHmac('sha256', secretBytes(secret)).update(datagram.subarray(0, signed)).digest().copy(datagram, signed);
  return datagram;
}

function writeHeader(datagram, type, count, senderId, seq, now) {
  MAGIC.copy(datagram, 0);
  datagram[4] = VERSION;
  datagram[5] = type;
  datagram.writeUInt16BE(count, 6);
  senderId.copy(datagram, 8);
  datagram.writeUInt32BE(Math.floor(seq / 2 ** 32), 16);
  datagram.writeUInt32BE(seq >>> 0, 20);
  datagram.writeDoubleBE(now, 24);
}

function seal(entries, size, key, senderId, seq, now) {
  const datagram = Buffer.allocUnsafe(HEADER_BYTES + size + MAC_BYTES);
  writeHeader(datagram, TYPES.invalidations, entries.length, senderId, seq, now);
  let at = HEADER_BYTES;
  for (const entry of entries) {
    datagram[at] = entry.op;
    datagram[at + 1] = entry.kind;
    datagram.writeUInt32BE(entry.key.length, at + 2);
    entry.key.copy(datagram, at + 6);
    at += 6 + entry.key.length;
    if (entry.op === OPS.set) {
      datagram.writeUInt32BE(entry.value.length, at);
      entry.value.copy(datagram, at + 4);
      at += 4 + entry.value.length;
    }
  }
  createHmac('sha256', key).update(datagram.subarray(0, at)).digest().copy(datagram, at);
  return datagram;
}

/** How many invalidations a sealed message carries (from its header). */
export function entryCount(message) {
  return message.readUInt16BE(6);
}

/**
 * One invalidation: `key` (not for op 'clear') a string or the key's bytes;
 * `value` (op 'set') the value's encoded bytes.
 * @typedef {{ op: string, key?: string | Buffer, value?: Buffer }} Invalidation
 */

/**
 * An authentic datagram, parsed: `invalidations` when its type is
 * 'invalidations', `to` (the id of the bus addressed) for 'hello' and
 * 'answer'; no `reason` (that is a refused one's).
 * @typedef {{ ok: true, type: string, senderId: Buffer, seq: number, timestamp: number,
 *   invalidations?: Invalidation[], to?: Buffer, reason?: undefined }} OpenedDatagram
 */

/**
 * Checks and parses one datagram. Never throws on bad input: resolves to
 * { ok: true, type, senderId, seq, timestamp, invalidations } (type
 * 'invalidations') or { ok: true, type, senderId, seq, timestamp, to }
 * ('hello', 'answer'), or { ok: false, reason } with reason 'oversize',
 * 'short', 'magic' (not ours), 'version', 'mac' (forged, truncated or another
 * secret) or 'garbled'. Whether a message is a replay is for the receiver's
 * SenderTable to say.
 * @param {Buffer} datagram
 * @param {{ secret: Buffer | string, maxBytes?: number }} options
 * @returns {OpenedDatagram | { ok: false, reason: string }}
 */
export function openDatagram(datagram, { secret, maxBytes = MAX_UDP_PAYLOAD }) {
  if (datagram.length > maxBytes) return { ok: false, reason: 'oversize' };
  if (datagram.length < HEADER_BYTES + MAC_BYTES) return { ok: false, reason: 'short' };
  if (!datagram.subarray(0, 4).equals(MAGIC)) return { ok: false, reason: 'magic' };
  if (datagram[4] !== VERSION) return { ok: false, reason: 'version' };
  const signed = datagram.length - MAC_BYTES;
  const expected = createHmac('sha256', secret).update(datagram.subarray(0, signed)).digest();
  if (!timingSafeEqual(expected, datagram.subarray(signed))) return { ok: false, reason: 'mac' };
  const type = TYPE_NAMES[datagram[5]];
  const seq = datagram.readUInt32BE(16) * 2 ** 32 + datagram.readUInt32BE(20);
  if (type === undefined || type === null || seq < 1 || seq > Number.MAX_SAFE_INTEGER) return { ok: false, reason: 'garbled' };
  /** @type {OpenedDatagram} */
  const opened = { ok: true, type, senderId: datagram.subarray(8, 16), seq, timestamp: datagram.readDoubleBE(24) };
  if (type !== 'invalidations') {
    if (signed !== HEADER_BYTES + ID_BYTES || entryCount(datagram) !== 0) return { ok: false, reason: 'garbled' };
    opened.to = datagram.subarray(HEADER_BYTES, signed);
    return opened;
  }
  opened.invalidations = parseEntries(datagram, entryCount(datagram), signed);
  if (opened.invalidations === null) return { ok: false, reason: 'garbled' };
  return opened;
}

function parseEntries(datagram, count, end) {
  const invalidations = [];
  let at = HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    if (at + 6 > end) return null;
    const op = OP_NAMES[datagram[at]];
    const kind = datagram[at + 1];
    const length = datagram.readUInt32BE(at + 2);
    at += 6;
    if (op === undefined || op === null || (kind !== KIND_STRING && kind !== KIND_BYTES) || at + length > end) return null;
    const bytes = datagram.subarray(at, at + length);
    at += length;
    const invalidation = { op, key: kind === KIND_STRING ? bytes.toString('utf8') : Buffer.from(bytes) };
    if (op === 'set') {
      if (at + 4 > end) return null;
      const size = datagram.readUInt32BE(at);
      at += 4;
      if (at + size > end) return null;
      invalidation.value = Buffer.from(datagram.subarray(at, at + size));
      at += size;
    }
    invalidations.push(invalidation);
  }
  return at === end ? invalidations : null;
}

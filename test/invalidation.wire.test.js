// The invalidation message (lib/invalidation/wire.js): binary
// framing where any byte may be in a key, numbered messages, hellos and
// answers, HMAC-SHA256. (Replays: invalidation.senders.test.js.)
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ANY_BUS, encodeControl, encodeDatagrams, HEADER_BYTES, MAC_BYTES, openDatagram, secretBytes, VERSION } from '../lib/invalidation/wire.js';
import { seededRandom, testSeed } from './helpers/seeded-random.js';

const secret = 'a shared secret of enough bytes';
const senderId = Buffer.from('0123456789abcdef', 'hex');
const open = (datagram, options = {}) => openDatagram(datagram, { secret: secretBytes(secret), ...options });

/** `datagram` with its body changed by `edit` and sealed again with the secret (only a holder of the secret can do this). */
function resign(datagram, edit) {
  const body = Buffer.from(datagram.subarray(0, datagram.length - MAC_BYTES));
  edit(body);
  return Buffer.concat([body, createHmac('sha256', secretBytes(secret)).update(body).digest()]);
}

test('any key survives the trip: commas, NUL, newlines, UTF-8, raw bytes; every op', () => {
  const invalidations = [
    { op: 'delete', key: 'user:1,user:2' },
    { op: 'delete', key: 'a\0b\nc' },
    { op: 'delete', key: 'clé ünïcødé 🗝️' },
    { op: 'delete', key: Buffer.from([0, 255, 44, 10]) },
    { op: 'clearPrefix', key: 'session:' },
    { op: 'set', key: 'config:version', value: Buffer.from([1, 2, 3]) },
    { op: 'clear' },
  ];
  const [datagram, ...rest] = encodeDatagrams(invalidations, { secret, senderId, seq: 2 ** 40 + 7, now: 1234.5 });
  assert.equal(rest.length, 0);
  const opened = open(datagram);
  assert.equal(opened.ok, true);
  assert.equal(opened.type, 'invalidations');
  assert.deepEqual(opened.senderId, senderId);
  assert.equal(opened.seq, 2 ** 40 + 7);
  assert.equal(opened.timestamp, 1234.5);
  // 'clear' names no key: it comes back with the empty one.
  assert.deepEqual(opened.invalidations, invalidations.map((invalidation) => ({ key: '', ...invalidation })));
});

test('a batch larger than a datagram is split, in order, each datagram within the limit and numbered in turn', () => {
  const invalidations = Array.from({ length: 500 }, (_, i) => ({ op: 'delete', key: `key-${i}-${'x'.repeat(i % 90)}` }));
  const datagrams = encodeDatagrams(invalidations, { secret, senderId, seq: 41, maxBytes: 1200 });
  assert.ok(datagrams.length > 10);
  for (const datagram of datagrams) assert.ok(datagram.length <= 1200, `${datagram.length}`);
  assert.deepEqual(datagrams.map((datagram) => open(datagram).seq), datagrams.map((_, i) => 41 + i));
  const received = datagrams.flatMap((datagram) => open(datagram).invalidations);
  assert.deepEqual(received, invalidations);
  assert.throws(() => encodeDatagrams([{ op: 'delete', key: 'k'.repeat(2000) }], { secret, senderId, maxBytes: 1200 }), {
    name: 'RangeError',
    message: 'an invalidation of 2006 bytes (key and value) does not fit in a datagram of 1200 bytes',
  });
});

test('a hello and an answer name the bus they address', () => {
  const to = randomBytes(8);
  const answer = open(encodeControl('answer', { secret, senderId, seq: 9, to, now: 77 }));
  assert.deepEqual({ ...answer, senderId: [...answer.senderId], to: [...answer.to] }, { ok: true, type: 'answer', senderId: [...senderId], seq: 9, timestamp: 77, to: [...to] });
  const hello = open(encodeControl('hello', { secret, senderId, seq: 10, to: ANY_BUS }));
  assert.equal(hello.type, 'hello');
  assert.deepEqual(hello.to, ANY_BUS);
});

test('forged, truncated, oversized, old-format and garbage datagrams are refused with their reason, never thrown', () => {
  const [datagram] = encodeDatagrams([{ op: 'delete', key: 'k' }], { secret, senderId });
  for (let i = 0; i < datagram.length; i++) {
    const forged = Buffer.from(datagram);
    forged[i] ^= 0x01;
    const reason = open(forged).reason;
    assert.ok(['mac', 'magic', 'version'].includes(reason), `byte ${i}: ${reason}`);
  }
  const [other] = encodeDatagrams([{ op: 'delete', key: 'k' }], { secret: 'another secret of enough bytes', senderId });
  assert.equal(open(other).reason, 'mac');
  assert.equal(open(datagram.subarray(0, datagram.length - 1)).reason, 'mac');
  assert.equal(open(datagram.subarray(0, HEADER_BYTES + MAC_BYTES - 1)).reason, 'short');
  const garbage = randomBytes(64 * 1024 - 100);
  garbage[0] = 0; // not 'A'
  assert.equal(open(garbage).reason, 'magic');
  assert.equal(open(Buffer.alloc(70_000)).reason, 'oversize');
  // The first format (a nonce where the sequence number is now), however well sealed, and a future one.
  for (const version of [1, VERSION + 1]) assert.equal(open(resign(datagram, (body) => (body[4] = version))).reason, 'version', `version ${version}`);
  // Sealed with the secret, but of no known type, numbered 0, or a hello with entries.
  assert.equal(open(resign(datagram, (body) => (body[5] = 9))).reason, 'garbled');
  assert.equal(open(resign(datagram, (body) => body.fill(0, 16, 24))).reason, 'garbled');
  const hello = encodeControl('hello', { secret, senderId, seq: 1, to: ANY_BUS });
  assert.equal(open(resign(hello, (body) => body.writeUInt16BE(1, 6))).reason, 'garbled');
});

test('random bytes and random mutations never throw (fuzz)', () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const [datagram] = encodeDatagrams([{ op: 'set', key: 'k', value: Buffer.from('v') }, { op: 'delete', key: 'x' }], { secret, senderId });
  for (let i = 0; i < 2000; i++) {
    const sample = random() < 0.5 ? randomBytes(random.int(200)) : Buffer.from(datagram);
    for (let flips = random.int(4); flips > 0 && sample.length > 0; flips--) sample[random.int(sample.length)] = random.int(256);
    const length = random() < 0.3 ? random.int(sample.length + 1) : sample.length;
    const result = open(sample.subarray(0, length));
    assert.equal(typeof result.ok, 'boolean', `seed ${seed}, sample ${i}`);
  }
});

test('a datagram whose MAC is right but whose entries do not add up is garbled', () => {
  const [datagram] = encodeDatagrams([{ op: 'delete', key: 'abc' }], { secret, senderId });
  const resigned = resign(datagram, (body) => body.writeUInt32BE(1000, HEADER_BYTES + 2)); // the key claims 1000 bytes
  assert.equal(open(resigned).reason, 'garbled');
});

test('the secret is required, and must be long enough', () => {
  assert.throws(() => secretBytes(undefined), {
    name: 'TypeError',
    message: 'options.secret is required: invalidations are authenticated with a secret shared by every peer (a string or Buffer of at least 16 bytes)',
  });
  assert.throws(() => secretBytes(42), { name: 'TypeError', message: 'options.secret must be a string or a Buffer (got 42)' });
  assert.throws(() => secretBytes('short'), { name: 'RangeError', message: 'options.secret must be at least 16 bytes (got 5)' });
  assert.throws(() => encodeDatagrams([{ op: 'flush', key: 'k' }], { secret, senderId }), {
    name: 'RangeError',
    message: `op must be 'delete', 'clear', 'clearPrefix' or 'set' (got "flush")`,
  });
  assert.throws(() => encodeDatagrams([{ op: 'delete', key: 5 }], { secret, senderId }), { name: 'TypeError', message: 'key must be a string or a Uint8Array (got 5)' });
});

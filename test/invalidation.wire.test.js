// The invalidation datagram (lib/cache/invalidation/wire.js): binary
// framing where any byte may be in a key, HMAC-SHA256, and a replay window.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ReplayGuard } from '../lib/cache/invalidation/replay-guard.js';
import { encodeDatagrams, HEADER_BYTES, MAC_BYTES, openDatagram, secretBytes } from '../lib/cache/invalidation/wire.js';
import { seededRandom, testSeed } from './helpers/random.js';

const secret = 'a shared secret of enough bytes';
const senderId = Buffer.from('0123456789abcdef', 'hex');
const guard = () => new ReplayGuard({ windowMs: 30_000, maxNonces: 10_000 });
const open = (datagram, options = {}) => openDatagram(datagram, { secret: secretBytes(secret), guard: options.guard ?? guard(), ...options });

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
  const [datagram, ...rest] = encodeDatagrams(invalidations, { secret, senderId });
  assert.equal(rest.length, 0);
  const opened = open(datagram);
  assert.equal(opened.ok, true);
  assert.deepEqual(opened.senderId, senderId);
  // 'clear' names no key: it comes back with the empty one.
  assert.deepEqual(opened.invalidations, invalidations.map((invalidation) => ({ key: '', ...invalidation })));
});

test('a batch larger than a datagram is split, in order, each datagram within the limit', () => {
  const invalidations = Array.from({ length: 500 }, (_, i) => ({ op: 'delete', key: `key-${i}-${'x'.repeat(i % 90)}` }));
  const datagrams = encodeDatagrams(invalidations, { secret, senderId, maxBytes: 1200 });
  assert.ok(datagrams.length > 10);
  for (const datagram of datagrams) assert.ok(datagram.length <= 1200, `${datagram.length}`);
  const receiver = guard();
  const received = datagrams.flatMap((datagram) => open(datagram, { guard: receiver }).invalidations);
  assert.deepEqual(received, invalidations);
  assert.throws(() => encodeDatagrams([{ op: 'delete', key: 'k'.repeat(2000) }], { secret, senderId, maxBytes: 1200 }), {
    name: 'RangeError',
    message: 'an invalidation of 2006 bytes (key and value) does not fit in a datagram of 1200 bytes',
  });
});

test('forged, truncated, replayed, stale, oversized and garbage datagrams are refused with their reason, never thrown', () => {
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
  const receiver = guard();
  assert.equal(open(datagram, { guard: receiver }).ok, true);
  assert.equal(open(datagram, { guard: receiver }).reason, 'replay');
  const [old] = encodeDatagrams([{ op: 'delete', key: 'k' }], { secret, senderId, now: Date.now() - 60_000 });
  assert.equal(open(old).reason, 'stale');
  const [ahead] = encodeDatagrams([{ op: 'delete', key: 'k' }], { secret, senderId, now: Date.now() + 60_000 });
  assert.equal(open(ahead).reason, 'stale');
  const garbage = randomBytes(64 * 1024 - 100);
  garbage[0] = 0; // not 'A'
  assert.equal(open(garbage).reason, 'magic');
  assert.equal(open(Buffer.alloc(70_000)).reason, 'oversize');
  const future = Buffer.from(datagram);
  future[4] = 2;
  assert.equal(open(future).reason, 'version');
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
  // Only a holder of the secret can make one: build it by hand and sign it.
  const [datagram] = encodeDatagrams([{ op: 'delete', key: 'abc' }], { secret, senderId });
  const body = Buffer.from(datagram.subarray(0, datagram.length - MAC_BYTES));
  body.writeUInt32BE(1000, HEADER_BYTES + 2); // the key claims 1000 bytes
  const resigned = Buffer.concat([body, createHmac('sha256', secretBytes(secret)).update(body).digest()]);
  assert.equal(open(resigned).reason, 'garbled');
});

test('the replay guard forgets old nonces within a bound, refusing all it may have forgotten', () => {
  const replay = new ReplayGuard({ windowMs: 1000, maxNonces: 3 });
  const now = 1_000_000;
  assert.equal(replay.check('a', now - 10, now), null);
  assert.equal(replay.check('b', now - 5, now), null);
  assert.equal(replay.check('c', now - 1, now), null);
  assert.equal(replay.check('d', now, now), null); // forgets 'a', and refuses anything stamped at or before it
  assert.equal(replay.check('a', now - 10, now), 'stale');
  assert.equal(replay.check('e', now - 20, now), 'stale');
  assert.equal(replay.check('b', now - 5, now), 'replay');
  assert.equal(replay.check('f', now - 2000, now), 'stale', 'outside the window');
  assert.ok(replay.seen.size <= 3);
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

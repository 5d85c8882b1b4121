// UDP invalidation between processes on 127.0.0.1 over real sockets: two and
// three hosts, writes from worker threads, and datagrams an attacker could
// send (forged, replayed, truncated, 64 KB of garbage, an older format),
// each dropped and counted while the peer keeps working.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { encodeDatagrams, VERSION } from '../lib/invalidation/wire.js';
import { SECRET, startPeer, until } from './helpers/invalidation.js';

const UDP = { secret: SECRET, udp: {}, markers: ['ver:'], batchIntervalMs: 1 };

async function startMesh(count) {
  const peers = await Promise.all(Array.from({ length: count }, () => startPeer(UDP)));
  for (const peer of peers) await peer.call('setPeers', { peers: peers.filter((other) => other !== peer).map((other) => other.address) });
  return peers;
}

test('three processes: a write on one invalidates the key on the others, markers carry their value', async (t) => {
  const peers = await startMesh(3);
  t.after(() => Promise.all(peers.map((peer) => peer.stop())));
  const [a, b, c] = peers;
  // Keys a comma-split plaintext format would break, and a byte key with every awkward byte.
  const keys = ['plain', 'a,b,c', 'ünï,cödé', { bytes: [0, 44, 255, 10] }];
  for (const peer of peers) for (const key of keys) await peer.call('seed', { key, value: 'cached' });
  const before = await a.call('stats');
  for (const key of keys) await a.call('delete', { key });
  for (const peer of [b, c]) {
    await until(async () => {
      for (const key of keys) if ((await peer.call('get', { key })) !== null) return false;
      return true;
    }, 'every key to be gone from the other two peers');
  }
  const after = await a.call('stats');
  // Sent to two peers: each datagram counts once per peer.
  assert.ok(after.udpKeysSent - before.udpKeysSent >= 2 * keys.length);
  assert.ok(after.udpBatchesSent > before.udpBatchesSent);

  await c.call('set', { key: 'ver:config', value: 'v7' });
  await until(async () => (await a.call('get', { key: 'ver:config' })) === 'v7' && (await b.call('get', { key: 'ver:config' })) === 'v7', 'the marker value on both peers');
  assert.equal((await a.call('stats')).invalidationsDropped, 0);
});

test('two processes: writes from worker threads are published, and the peer\'s workers see the result', async (t) => {
  const peers = await startMesh(2);
  t.after(() => Promise.all(peers.map((peer) => peer.stop())));
  const [a, b] = peers;
  const keys = Array.from({ length: 40 }, (_, i) => `user:${i}`);
  // b's workers fill b's cache (published to a, where nothing is deleted: the keys are absent there).
  await b.call('workers', { op: 'set', keys, value: 'stale' });
  assert.deepEqual(await b.call('workers', { op: 'get', keys }), keys.map(() => 'stale'));
  // a's workers delete: the main thread of a runs the bus.
  await a.call('workers', { op: 'delete', keys });
  await until(async () => (await b.call('workers', { op: 'get', keys })).every((value) => value === null), 'b\'s workers to see every key deleted');
  assert.ok((await a.call('stats')).udpKeysSent >= keys.length);
  assert.ok((await b.call('stats')).udpKeysReceived >= keys.length);
});

test('forged, replayed, truncated and 64 KB garbage datagrams are dropped and counted; the peer keeps working', async (t) => {
  const peers = await startMesh(2);
  t.after(() => Promise.all(peers.map((peer) => peer.stop())));
  const [a, b] = peers;
  const socket = dgram.createSocket('udp4');
  t.after(() => socket.close());
  const send = (datagram) => new Promise((resolve, reject) => socket.send(datagram, b.port, '127.0.0.1', (error) => (error ? reject(error) : resolve())));
  await b.call('seed', { key: 'victim', value: 'kept' });

  const senderId = randomBytes(8);
  const forged = encodeDatagrams([{ op: 'clear' }], { secret: 'not the secret, but long enough', senderId });
  const [genuine] = encodeDatagrams([{ op: 'delete', key: 'other' }], { secret: SECRET, senderId });
  await send(forged[0]);
  await send(genuine);
  await send(genuine); // replayed
  await send(genuine.subarray(0, genuine.length - 7)); // truncated: its MAC no longer matches
  await send(genuine.subarray(0, 30)); // truncated below a header
  await send(randomBytes(65507)); // 64 KB of garbage (the most UDP carries), over maxDatagramBytes
  await send(Buffer.concat([Buffer.from('ACIV'), Buffer.from([VERSION]), randomBytes(200)])); // our magic and version, then garbage
  const firstFormat = Buffer.from(genuine);
  firstFormat[4] = 1; // a host still on the first format (a nonce where the sequence number is now)
  await send(firstFormat);

  await until(async () => (await b.call('stats')).invalidationsDropped >= 7, 'seven drops');
  const stats = await b.call('stats');
  const drops = Object.fromEntries(Object.entries(stats).filter(([name]) => name.startsWith('invalidationDrops')));
  assert.deepEqual(drops, {
    invalidationDropsMac: 3,
    invalidationDropsReplay: 1,
    invalidationDropsStale: 0,
    invalidationDropsShort: 1,
    invalidationDropsOversize: 1,
    invalidationDropsMagic: 0,
    invalidationDropsVersion: 1,
    invalidationDropsGarbled: 0,
    invalidationDropsNotMarker: 0,
  });
  assert.equal(stats.udpBatchesReceived, 1, 'only the genuine datagram, once');
  assert.equal(await b.call('get', { key: 'victim' }), 'kept', 'the forged clear did nothing');

  await a.call('delete', { key: 'victim' });
  await until(async () => (await b.call('get', { key: 'victim' })) === null, 'a genuine invalidation after the attack');
});

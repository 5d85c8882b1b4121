// A peer's value is stored only for a key the receiver declares a version
// marker (options.markers): a value for any other key is refused, counted
// as a 'not-marker' drop, and the key deleted (it did change on the peer).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { peer, SECRET, until } from './helpers/invalidation.js';
import { MiB } from './helpers/units.js';

test('a peer\'s value is stored only for the receiver\'s own markers; another key is deleted and counted as a not-marker drop', async (t) => {
  const sender = new SharedCache({ memoryBytes: 8 * MiB });
  const receiver = new SharedCache({ memoryBytes: 8 * MiB });
  // The sender (misconfigured, or a holder of the secret) treats user: keys as markers; the receiver does not.
  const senderBus = await new InvalidationBus(sender, { secret: SECRET, udp: {}, markers: ['ver:', 'user:'] }).start();
  const receiverBus = await new InvalidationBus(receiver, { secret: SECRET, udp: {}, markers: ['ver:'] }).start();
  t.after(async () => {
    await senderBus.close();
    await receiverBus.close();
    sender.close();
    receiver.close();
  });
  await peer(senderBus, receiverBus);
  const seed = SharedCache.attach(receiver.handle.buffer);
  seed.set('user:1', 'cached');
  seed.set('ver:a', 'v1');
  const drops = [];
  receiverBus.on('drop', (event) => drops.push(event));
  const received = [];
  receiverBus.on('received', (event) => received.push(event));

  sender.set('user:1', 'a value for any key');
  sender.set('ver:a', 'v2');
  await until(() => received.length > 0 && receiver.get('ver:a') === 'v2', 'the message');
  assert.equal(receiver.get('user:1'), undefined, 'not stored, and the old value deleted');
  assert.equal(received.at(-1).cautious, false);
  assert.deepEqual(drops, [{ transport: 'udp', reason: 'not-marker', bytes: drops[0]?.bytes, key: 'user:1' }]);
  assert.ok(drops[0].bytes > 0);
  const stats = receiver.stats();
  assert.equal(stats.invalidationDropsNotMarker, 1);
  assert.equal(stats.invalidationsDropped, 1);
  assert.equal(stats.udpKeysReceived, 2);

  const registry = new Registry();
  receiver.registerMetrics(registry, { name: 'receiver' });
  assert.match(await registry.metrics(), /arenacache_invalidation_drops_total\{cache="receiver",reason="not-marker"\} 1/);
});

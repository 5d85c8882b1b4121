// A version marker whose value is an object reaches a peer whose arena holds
// other object shapes (its own structure region): the value travels
// self-describing and the peer decodes it as sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { peer, SECRET, until } from './helpers/invalidation.js';
import { MiB } from './helpers/units.js';

test('an object marker value arrives whole in a peer whose arena has other shapes under the same record ids', async (t) => {
  const sender = new SharedCache({ memoryBytes: 8 * MiB });
  const receiver = new SharedCache({ memoryBytes: 8 * MiB });
  // Different shapes first on each side: the marker's shapes get different ids in each arena.
  sender.set('local:1', { senderOnly: 1, shape: 'a' });
  receiver.set('local:1', { receiverOnly: 1, other: 'b', third: true });
  const senderBus = await new InvalidationBus(sender, { secret: SECRET, udp: {}, markers: ['ver:'] }).start();
  const receiverBus = await new InvalidationBus(receiver, { secret: SECRET, udp: {}, markers: ['ver:'] }).start();
  t.after(async () => {
    await senderBus.close();
    await receiverBus.close();
    sender.close();
    receiver.close();
  });
  await peer(senderBus, receiverBus);
  const marker = { version: 18, tags: new Set(['catalog']), changed: new Date(1700000000000), parts: [{ name: 'x', rev: 3 }] };
  sender.set('ver:catalog', marker);
  await until(() => receiver.get('ver:catalog') !== undefined, 'the marker');
  assert.deepEqual(receiver.get('ver:catalog'), marker);
  assert.deepEqual(SharedCache.attach(receiver.handle).get('ver:catalog'), marker);
  assert.deepEqual(receiver.get('local:1'), { receiverOnly: 1, other: 'b', third: true });
});

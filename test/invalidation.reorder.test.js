// Two datagrams of one sender that carry the same version marker, reordered
// on the way (UDP may): the older value must not overwrite the newer one.
// The late datagram's marker is deleted instead (a miss, never a stale value).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { peer, SECRET, startRecorder, until } from './helpers/invalidation.js';
import { MiB } from './helpers/units.js';

test('reordered datagrams of one sender: the older marker value does not win', async (t) => {
  const recorder = await startRecorder();
  const sender = new SharedCache({ memoryBytes: 8 * MiB });
  const receiver = new SharedCache({ memoryBytes: 8 * MiB });
  const options = { secret: SECRET, udp: {}, markers: ['ver:'], batchIntervalMs: 0, batchMaxKeys: 1 };
  const senderBus = await new InvalidationBus(sender, options).start();
  const receiverBus = await new InvalidationBus(receiver, options).start();
  t.after(async () => {
    await senderBus.close();
    await receiverBus.close();
    sender.close();
    receiver.close();
    await recorder.close();
  });
  await peer(senderBus, receiverBus);
  // From now on the sender's datagrams reach the receiver only through the recorder, which reorders them.
  senderBus.setPeers([recorder.address]);
  sender.set('ver:a', 'v1');
  await until(() => recorder.datagrams.length === 1, 'the datagram of v1');
  sender.set('ver:a', 'v2');
  await until(() => recorder.datagrams.length === 2, 'the datagram of v2');
  const received = [];
  receiverBus.on('received', (event) => received.push(event));
  const [first, second] = recorder.datagrams;
  await recorder.send(second, receiverBus.address.port);
  await until(() => receiver.get('ver:a') === 'v2', 'the newer value');
  await recorder.send(first, receiverBus.address.port);
  await until(() => received.length === 2, 'the older datagram, late');
  assert.equal(receiver.get('ver:a'), undefined, 'the late v1 deleted the marker instead of storing v1');
  assert.deepEqual(received.map((event) => [event.invalidations[0].value.subarray(1).toString(), event.cautious]), [
    ['v2', false],
    ['v1', true],
  ]);
  assert.equal(receiver.stats().invalidationsDropped, 0);
});

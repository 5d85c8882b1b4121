// Buses that restart, and peers whose clocks are off:
// a bus that just restarted applies the invalidations of a peer 5 s behind,
// yet refuses datagrams recorded before its restart and replayed to it;
// a peer beyond replayWindowMs; a sender that never answers; a sender that
// restarts. Over UDP, and over Redis (the same messages) when installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { kClock } from '../lib/internal-symbols.js';
import { openDatagram, secretBytes } from '../lib/invalidation/wire.js';
import { peer, SECRET, startRecorder, until } from './helpers/invalidation.js';
import { freePort, redisMissing, startRedis } from './helpers/redis-server.js';
import { MiB } from './helpers/units.js';

const OPTIONS = { secret: SECRET, markers: ['ver:'] };
/** A clock `ms` ahead of this machine's (behind when negative). */
const skewed = (ms) => () => Date.now() + ms;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A cache and its bus, closed after the test; `verified` lists the senders the bus verified. */
async function host(t, transport, options = {}) {
  const cache = new SharedCache({ memoryBytes: 8 * MiB });
  const result = { cache, quiet: SharedCache.attach(cache.handle.buffer), bus: null, verified: [] };
  result.restart = async () => {
    await result.bus?.close();
    result.verified = [];
    const bus = new InvalidationBus(cache, { ...OPTIONS, ...transport, ...options });
    bus.on('verified', ({ sender }) => result.verified.push(sender));
    result.bus = await bus.start();
    return result;
  };
  t.after(async () => {
    await result.bus.close();
    cache.close();
  });
  return result.restart();
}

/** How the test reaches the wire: UDP through a recording socket, Redis through a tapping subscriber. */
const transports = {
  async udp(t) {
    const recorder = await startRecorder();
    t.after(() => recorder.close());
    return {
      options: { udp: {} },
      /** Points each bus at the other (the recorder hears the sender too): each asks the other to answer. */
      point(sender, receiver) {
        sender.bus.setPeers([`127.0.0.1:${receiver.bus.address.port}`, recorder.address]);
        receiver.bus.setPeers([`127.0.0.1:${sender.bus.address.port}`]);
      },
      recorded: recorder.datagrams,
      replay: (datagram, receiver) => recorder.send(datagram, receiver.bus.address.port),
    };
  },
  async redis(t) {
    const redis = await startRedis(await freePort());
    t.after(() => redis.kill());
    const { default: Redis } = await import('ioredis');
    const channel = 'arenacache:invalidation';
    const tap = new Redis(redis.url);
    const publisher = new Redis(redis.url);
    t.after(() => {
      tap.disconnect();
      publisher.disconnect();
    });
    const recorded = [];
    await tap.subscribe(channel);
    tap.on('messageBuffer', (_, message) => {
      if (openDatagram(message, { secret: secretBytes(SECRET) }).type === 'invalidations') recorded.push(message);
    });
    return {
      options: { redis: { connection: redis.url } },
      // Every bus hears every other on the channel: each asked the others when it started.
      point() {},
      recorded,
      replay: (datagram) => publisher.publish(channel, datagram),
    };
  },
};

for (const [name, harness] of Object.entries(transports)) {
  const skip = name === 'redis' ? (redisMissing() ?? false) : false;

  test(`${name}: a peer 5 s behind: a bus that restarted applies its deletes and markers, and refuses its datagrams recorded before the restart`, { skip }, async (t) => {
    const wire = await harness(t);
    const sender = await host(t, wire.options, { [kClock]: skewed(-5000) });
    const receiver = await host(t, wire.options);
    const verified = () => until(() => sender.verified.length > 0 && receiver.verified.length > 0, 'the two buses to verify each other');
    wire.point(sender, receiver);
    await verified();

    receiver.quiet.set('before', 'cached');
    sender.cache.delete('before');
    sender.cache.set('ver:a', 'v1');
    await until(() => receiver.cache.get('before') === undefined && receiver.cache.get('ver:a') === 'v1', 'the delete and the marker before the restart');
    await until(() => wire.recorded.length > 0, 'the tap to record them');
    const recordings = [...wire.recorded];
    // So that the recordings predate the restart by more than an answer takes to travel, even on a loaded machine.
    await sleep(50);

    await receiver.restart();
    sender.verified = [];
    receiver.quiet.set('after', 'cached');
    wire.point(sender, receiver);
    // Most likely before the sender has answered the restarted bus: a delete applies either way.
    sender.cache.delete('after');
    await until(() => receiver.cache.get('after') === undefined, 'the delete of a peer 5 s behind, after the restart');
    await verified();
    sender.cache.set('ver:a', 'v2');
    await until(() => receiver.cache.get('ver:a') === 'v2', 'the marker of a peer 5 s behind, after the restart');

    receiver.quiet.set('before', 'cached again');
    const stale = receiver.cache.stats().invalidationDropsStale;
    for (const recording of recordings) await wire.replay(recording, receiver);
    await until(() => receiver.cache.stats().invalidationDropsStale === stale + recordings.length, `the ${recordings.length} replays to be refused as stale`);
    assert.equal(receiver.cache.get('before'), 'cached again', 'a delete recorded before the restart did nothing');
    assert.equal(receiver.cache.get('ver:a'), 'v2', 'a marker value recorded before the restart did nothing');
    assert.equal(receiver.cache.stats().invalidationDropsReplay, 0);
  });
}

test('a peer beyond replayWindowMs: until it has answered, its invalidations are refused as stale; once it has, they apply whatever its clock', async (t) => {
  const recorder = await startRecorder();
  t.after(() => recorder.close());
  const sender = await host(t, { udp: {} }, { [kClock]: skewed(-5000) });
  const receiver = await host(t, { udp: {} }, { replayWindowMs: 1000 });
  receiver.quiet.set('k1', 'cached');
  receiver.quiet.set('k2', 'cached');
  // Through the recorder: the receiver's hello goes back there and is never answered.
  sender.bus.setPeers([recorder.address]);
  sender.cache.delete('k1');
  await until(() => recorder.datagrams.length === 1, 'the delete of k1');
  await recorder.send(recorder.datagrams[0], receiver.bus.address.port);
  await until(() => receiver.cache.stats().invalidationDropsStale === 1, 'the stale drop');
  assert.equal(receiver.cache.get('k1'), 'cached');

  await peer(sender.bus, receiver.bus);
  sender.cache.delete('k2');
  await until(() => receiver.cache.get('k2') === undefined, 'a delete once the peer answered');
  assert.equal(receiver.cache.stats().invalidationDropsStale, 1);
});

test('a datagram of a sender that never answers (its bus gone) is applied cautiously, once: a recorded marker value is deleted, never stored', async (t) => {
  const recorder = await startRecorder();
  t.after(() => recorder.close());
  const sender = await host(t, { udp: {} });
  sender.bus.setPeers([recorder.address]);
  sender.cache.set('ver:a', 'v1');
  sender.cache.delete('user:1');
  await until(() => recorder.datagrams.length > 0, 'the recording');
  await sender.bus.close();

  const receiver = await host(t, { udp: {} });
  receiver.quiet.set('ver:a', 'v2');
  receiver.quiet.set('user:1', 'cached');
  const received = [];
  receiver.bus.on('received', (event) => received.push(event));
  for (const datagram of recorder.datagrams) await recorder.send(datagram, receiver.bus.address.port);
  await until(() => received.length === recorder.datagrams.length, 'the recording to be applied');
  assert.equal(receiver.cache.get('ver:a'), undefined, 'the old marker value was not stored: the marker was deleted');
  assert.equal(receiver.cache.get('user:1'), undefined);
  assert.ok(received.every((event) => event.cautious));

  receiver.quiet.set('ver:a', 'v2');
  for (const datagram of recorder.datagrams) await recorder.send(datagram, receiver.bus.address.port);
  await until(() => receiver.cache.stats().invalidationDropsReplay === recorder.datagrams.length, 'the second replay to be refused');
  assert.equal(receiver.cache.get('ver:a'), 'v2');
});

test('a sender that restarts is a new sender: verified again, its markers stored; the recordings of its previous run are refused', async (t) => {
  const recorder = await startRecorder();
  t.after(() => recorder.close());
  const sender = await host(t, { udp: {} });
  const receiver = await host(t, { udp: {} });
  await peer(sender.bus, receiver.bus, [recorder.address]);
  sender.cache.set('ver:a', 'v1');
  await until(() => receiver.cache.get('ver:a') === 'v1' && recorder.datagrams.length === 1, 'the marker of the first run');

  await sender.restart();
  await peer(sender.bus, receiver.bus);
  sender.cache.set('ver:a', 'v2');
  await until(() => receiver.cache.get('ver:a') === 'v2', 'the marker of the second run');
  await recorder.send(recorder.datagrams[0], receiver.bus.address.port);
  await until(() => receiver.cache.stats().invalidationDropsReplay === 1, 'the first run\'s datagram to be refused');
  assert.equal(receiver.cache.get('ver:a'), 'v2');
});

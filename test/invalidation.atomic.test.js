// What the atomic operations send other hosts over an InvalidationBus
// (docs/shared-cache.md#atomic-operations): add, replace, compareAndSet and
// update's stores are sets, take and update's deletes are deletes, and a
// version marker carries a number as a number; incr and touch send nothing,
// so each machine's counts stay its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { peer, SECRET, until } from './helpers/invalidation.js';
import { MiB } from './helpers/units.js';

test('atomic operations on one host reach another as the sets and deletes they are; incr and touch do not travel', async (t) => {
  const a = new SharedCache({ memoryBytes: 8 * MiB });
  const b = new SharedCache({ memoryBytes: 8 * MiB });
  const busA = await new InvalidationBus(a, { secret: SECRET, udp: {}, markers: ['ver:'] }).start();
  const busB = await new InvalidationBus(b, { secret: SECRET, udp: {}, markers: ['ver:'] }).start();
  t.after(async () => {
    await busA.close();
    await busB.close();
    a.close();
    b.close();
  });
  await peer(busA, busB);
  // B's own copies, written without publishing them (an instance attached to the bare buffer has no outbox).
  const local = SharedCache.attach(b.handle.buffer);
  const received = [];
  busB.on('received', (event) => received.push(event));
  const heard = async (what) => {
    const before = received.length;
    await until(() => received.length > before, what);
  };

  // Each host counts on its own: an incr is not published.
  local.set('hits', 100);
  a.incr('hits');
  a.incr('hits', 5);
  a.touch('hits', 60_000);
  // A write that is published, after them: when it arrives, they would have.
  local.set('cached', 'b');
  a.add('cached', 'a');
  await heard('add');
  assert.equal(b.get('cached'), undefined, 'add is a set: the other host drops its copy');
  assert.equal(b.get('hits'), 100, 'incr and touch left the other host\'s count alone');
  assert.equal(a.get('hits'), 6);

  local.set('r', 'b');
  a.set('r', 'a');
  await heard('set');
  local.set('r', 'b again');
  assert.equal(a.replace('r', 'a2'), true);
  await heard('replace');
  assert.equal(b.get('r'), undefined);

  local.set('r', 'b3');
  assert.equal(a.compareAndSet('r', a.info('r').version, 'a3'), true);
  await heard('compareAndSet');
  assert.equal(b.get('r'), undefined);
  local.set('u', 'b');
  a.update('u', () => 'a');
  await heard('update');
  assert.equal(b.get('u'), undefined);

  local.set('t', 'b');
  a.set('t', 'token');
  await heard('set');
  local.set('t', 'b again');
  assert.equal(a.take('t'), 'token');
  await heard('take');
  assert.equal(b.get('t'), undefined, 'take is a delete');

  // A version marker holding a number arrives as that number.
  a.set('ver:catalog', 18);
  await until(() => b.get('ver:catalog') === 18, 'the marker');
  a.incr('ver:catalog');
  assert.equal(a.get('ver:catalog'), 19);
  a.update('ver:catalog', (n) => n + 1);
  await until(() => b.get('ver:catalog') === 20, 'the marker updated');
});

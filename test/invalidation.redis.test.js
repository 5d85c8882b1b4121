// The Redis transport between two processes through a real redis-server on
// loopback: invalidations arrive; Redis killed mid-run and restarted: the
// caches keep serving, what was written meanwhile is sent on reconnect, the
// onReconnect policy is applied, and invalidation resumes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { SECRET, startPeer, until } from './helpers/invalidation.js';
import { freePort, redisMissing, startRedis } from './helpers/redis-server.js';

const skip = redisMissing() ?? false;

function redisOptions(url, onReconnect = 'clear') {
  return { secret: SECRET, redis: { connection: url, onReconnect }, markers: ['ver:'], batchIntervalMs: 1 };
}

test('two processes through Redis: deletes and markers arrive; killing and restarting Redis loses nothing', { skip }, async (t) => {
  const port = await freePort();
  let redis = await startRedis(port);
  t.after(() => redis.kill());
  const a = await startPeer(redisOptions(redis.url));
  const b = await startPeer(redisOptions(redis.url));
  const keep = await startPeer(redisOptions(redis.url, 'keep'));
  t.after(() => Promise.all([a.stop(), b.stop(), keep.stop()]));

  for (const peer of [b, keep]) for (const key of ['k1', 'k2', 'k3', 'untouched']) await peer.call('seed', { key, value: 'cached' });
  await a.call('delete', { key: 'k1' });
  await a.call('set', { key: 'ver:schema', value: 'v2' });
  for (const peer of [b, keep]) {
    await until(async () => (await peer.call('get', { key: 'k1' })) === null && (await peer.call('get', { key: 'ver:schema' })) === 'v2', 'the delete and the marker through Redis');
  }

  await redis.kill();
  // Redis is down: every cache keeps serving, and a's write waits in its backlog.
  await a.call('delete', { key: 'k2' });
  await b.call('set', { key: 'local', value: 'written during the outage' });
  assert.equal(await b.call('get', { key: 'local' }), 'written during the outage');
  assert.equal(await keep.call('get', { key: 'k2' }), 'cached', 'nothing can arrive while Redis is down');

  redis = await startRedis(port);
  // On reconnect: a sends its backlog (k2); b clears (onReconnect 'clear'); keep keeps its entries.
  await until(async () => (await keep.call('get', { key: 'k2' })) === null, 'the backlog delivered after the restart', 15_000);
  await until(async () => (await b.call('stats')).redisReconnects >= 1, 'b to count its reconnect', 15_000);
  assert.equal(await b.call('get', { key: 'untouched' }), null, 'onReconnect "clear" dropped what may have missed invalidations');
  assert.equal(await keep.call('get', { key: 'untouched' }), 'cached', 'onReconnect "keep" kept it');

  await a.call('delete', { key: 'k3' });
  await until(async () => (await keep.call('get', { key: 'k3' })) === null, 'invalidation to resume after the restart', 15_000);
  const stats = await a.call('stats');
  assert.ok(stats.redisKeysSent >= 4, `a sent ${stats.redisKeysSent} keys`);
  assert.ok(stats.invalidationSendErrors >= 0);
  assert.ok((await keep.call('stats')).redisKeysReceived >= 4);
  assert.equal((await keep.call('stats')).invalidationsDropped, 0, 'a peer\'s own messages come back from Redis and are ignored, not dropped');
});

test('start() fails with ERR_INVALIDATION_TRANSPORT when Redis cannot be reached, and leaves the cache free for another bus', { skip }, async () => {
  const port = await freePort();
  const cache = new SharedCache({ memoryBytes: 2 ** 20 });
  const bus = new InvalidationBus(cache, redisOptions(`redis://127.0.0.1:${port}`));
  await assert.rejects(bus.start(), (error) => {
    assert.equal(error.code, 'ERR_INVALIDATION_TRANSPORT');
    assert.match(error.message, new RegExp(`^Redis at redis://127\\.0\\.0\\.1:${port} could not be reached: .*ECONNREFUSED`));
    return true;
  });
  assert.equal(cache.invalidation, null);
  const udp = await new InvalidationBus(cache, { secret: SECRET, udp: {} }).start();
  assert.equal(cache.invalidation, udp);
  await udp.close();
  cache.close();
});

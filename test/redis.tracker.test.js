// The Tracker (lib/redis/tracker.js) against real redis-servers this test
// starts on loopback: a standalone server, and a cluster of 3 masters. It
// hears every change to a key under its prefix, whoever makes it (another
// client, redis-cli, an expiry), nothing else; a flush as 'flush'; the
// server's death as 'lost', once; and on a cluster, each master reports the
// keys it owns, so one Tracker per master hears them all.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import test from 'node:test';
import { Redis, Cluster } from 'ioredis';
import { Tracker } from '../lib/redis/tracker.js';
import { connectClient, freePort, redisMissing, startRedis, startRedisCluster } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

const skip = redisMissing() ?? false;

/** Resolves once `check()` is true, polling; rejects after `ms`. */

function listen(tracker) {
  const heard = [];
  tracker.on('invalidate', (keys) => heard.push(...keys.map(String)));
  tracker.on('flush', () => heard.push('<flush>'));
  tracker.on('lost', () => heard.push('<lost>'));
  return heard;
}

test('a tracker hears writes, deletes and expiries of its prefix by any client, a flush, and the server\'s death', { skip }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const tracker = await new Tracker((overrides) => new Redis({ host: '127.0.0.1', port: server.port, ...overrides }), 'ns:').start();
  t.after(() => tracker.close());
  const heard = listen(tracker);
  const writer = await connectClient(t, server.port);

  await writer.set('ns:a', '1');
  await writer.set('other:a', '1');
  await writer.del('ns:a');
  await tracker.ping();
  assert.deepEqual(heard, ['ns:a', 'ns:a'], 'the set and the delete; not a key outside the prefix');

  const cli = spawnSync('redis-cli', ['-p', String(server.port), 'SET', 'ns:cli', 'x'], { encoding: 'utf8' });
  assert.equal(cli.stdout.trim(), 'OK');
  await writer.set('ns:short', '1', 'PX', 30);
  await until(() => heard.filter((key) => key === 'ns:short').length === 2, 'the expiry of ns:short');
  assert.ok(heard.includes('ns:cli'), 'a write by redis-cli');

  await writer.flushall();
  await tracker.ping();
  assert.equal(heard.at(-1), '<flush>');

  assert.equal(tracker.lost, false);
  await server.kill();
  await until(() => tracker.lost, 'the lost event');
  assert.equal(heard.filter((event) => event === '<lost>').length, 1);
  await assert.rejects(tracker.ping());
});

test('a tracker that cannot start rejects and is lost; one that can answers pings', { skip }, async (t) => {
  const port = await freePort();
  const unreachable = new Tracker((overrides) => new Redis({ host: '127.0.0.1', port, ...overrides }), 'ns:');
  await assert.rejects(unreachable.start());
  assert.equal(unreachable.lost, true);
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const tracker = await new Tracker((overrides) => new Redis({ host: '127.0.0.1', port: server.port, ...overrides }), 'ns:').start();
  t.after(() => tracker.close());
  await tracker.ping();
});

test('on a cluster of 3 masters, each master reports the keys it owns: one tracker per master hears every key', { skip, timeout: 60_000 }, async (t) => {
  const cluster = await startRedisCluster(3);
  t.after(() => cluster.kill());
  const trackers = await Promise.all(cluster.ports.map((port) => new Tracker((overrides) => new Redis({ host: '127.0.0.1', port, ...overrides }), 'ns:').start()));
  t.after(() => trackers.forEach((tracker) => tracker.close()));
  const heard = trackers.map(listen);
  const client = new Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
  client.on('error', () => {});
  t.after(() => client.disconnect());
  const keys = Array.from({ length: 30 }, (_, i) => `ns:key${i}`);
  for (const key of keys) await client.set(key, 'v');
  await Promise.all(trackers.map((tracker) => tracker.ping()));
  const reporters = new Map(keys.map((key) => [key, heard.flatMap((list, node) => (list.includes(key) ? [node] : []))]));
  for (const [key, nodes] of reporters) assert.equal(nodes.length, 1, `${key} was reported by ${nodes.length} masters`);
  assert.equal(new Set([...reporters.values()].map(([node]) => node)).size, 3, 'every master owns some of the keys');
});

// Write to invalidated, measured: 3 hosts (processes, each with a cache file
// of its own and 2 worker threads) on a standalone redis-server, and on a
// Redis Cluster of 3 masters. Each write source must reach every worker of
// every host (its host's cached copy dropped): a write through host A's
// tier (tier.set), a write by a plain ioredis client, a write by redis-cli
// (spawned: its time is mostly the spawn, so only its reach is asserted),
// and a key expiring in Redis (SET ... PX; the hosts' copies are kept
// without a ttl of their own, so only Redis's invalidation drops them;
// asserted within 1 s of the expiry, since Redis expires keys lazily or in
// its active cycle). The time from just before the write (or from the
// expiry time) to each drop is reported as p50/p99 per source
// (process.hrtime is CLOCK_MONOTONIC, one clock for every process of the
// machine).
import assert from 'node:assert/strict';
import { fork, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import test from 'node:test';
import { Cluster } from 'ioredis';
import { pack } from 'msgpackr';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { connectClient, freePort, redisMissing, startRedis, startRedisCluster } from './helpers/redis-server.js';

const skip = redisMissing() ?? (!nativeAvailable && 'native addon unavailable');
const hostFile = new URL('./fixtures/redis-latency-host.js', import.meta.url);
/** Writes per source (redis-cli spawns a process per write; an expiry takes EXPIRE_MS). */
const WRITES = { tier: 100, ioredis: 100, 'redis-cli': 15, expiry: 10 };
const EXPIRE_MS = 250;
const HOSTS = 3;
const WORKERS = 2;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** A host process; next(field) resolves with its next message that has `field` (messages are kept until asked for). */
async function startHost(t, connection) {
  const child = fork(hostFile, [JSON.stringify({ path: arenaPath(t), workers: WORKERS, ...connection })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  t.after(() => child.kill('SIGKILL'));
  const [first] = await Promise.race([once(child, 'message'), once(child, 'exit').then(([code]) => [`exited with ${code}`])]);
  assert.equal(first, 'started');
  const inbox = [];
  const waiting = [];
  child.on('message', (message) => {
    assert.equal(message.error, undefined, message.error);
    const i = waiting.findIndex(({ field }) => field in message);
    if (i === -1) inbox.push(message);
    else waiting.splice(i, 1)[0].resolve(message);
  });
  return {
    send: (message) => child.send(message),
    next(field) {
      const i = inbox.findIndex((message) => field in message);
      if (i !== -1) return Promise.resolve(inbox.splice(i, 1)[0]);
      return new Promise((resolve) => waiting.push({ field, resolve }));
    },
  };
}

/** Every host caches `key` and watches its copy; resolves once all watch, to { drops }: a promise of every drop time (hrtime, ns). */
async function watch(hosts, key, keep = false) {
  for (const host of hosts) host.send({ key, keep });
  await Promise.all(hosts.map((host) => host.next('watching')));
  const drops = Promise.all(hosts.map((host) => host.next('seen'))).then((replies) =>
    replies.flatMap(({ seen }) =>
      seen.map((at) => {
        assert.notEqual(at, 'timeout', `a worker still read ${key}'s old copy 5 s after the write`);
        return BigInt(at);
      }),
    ),
  );
  return { drops };
}

/** Runs every source on `hosts`, writing with `writer` (ioredis) and `cli` (redis-cli arguments reaching the deployment); reports p50/p99 of each. */
async function measure(t, deployment, hosts, writer, cli) {
  const latencies = Object.fromEntries(Object.keys(WRITES).map((source) => [source, []]));
  const record = (source, drops, t0) => {
    assert.equal(drops.length, HOSTS * WORKERS);
    for (const at of drops) latencies[source].push(Number(at - t0) / 1e6);
  };
  for (let i = 0; i < WRITES.tier; i++) {
    const key = `tier${i}`;
    await writer.set(`app:${key}`, pack('old'));
    const { drops } = await watch(hosts, key);
    hosts[0].send({ set: key, value: 'new' });
    const { t0 } = await hosts[0].next('t0');
    record('tier', await drops, BigInt(t0));
  }
  for (let i = 0; i < WRITES.ioredis; i++) {
    const key = `ioredis${i}`;
    await writer.set(`app:${key}`, pack('old'));
    const { drops } = await watch(hosts, key);
    const t0 = process.hrtime.bigint();
    await writer.set(`app:${key}`, pack('new'));
    record('ioredis', await drops, t0);
  }
  for (let i = 0; i < WRITES['redis-cli']; i++) {
    const key = `cli${i}`;
    await writer.set(`app:${key}`, pack('old'));
    const { drops } = await watch(hosts, key);
    const t0 = process.hrtime.bigint();
    // The value's msgpack bytes on stdin (-x): argv would re-encode them as UTF-8.
    const run = spawnSync('redis-cli', [...cli, '-x', 'SET', `app:${key}`], { input: pack('new'), encoding: 'utf8', timeout: 5000 });
    assert.equal(run.stdout.trim(), 'OK', `redis-cli SET: ${run.stderr || run.error}`);
    record('redis-cli', await drops, t0);
  }
  for (let i = 0, attempt = 0; i < WRITES.expiry; attempt++) {
    const key = `expiry${attempt}`;
    const t0 = process.hrtime.bigint();
    await writer.set(`app:${key}`, pack('expiring'), 'PX', EXPIRE_MS);
    const { drops } = await watch(hosts, key, true);
    const expiresAt = t0 + BigInt(EXPIRE_MS) * 1_000_000n;
    const setUp = process.hrtime.bigint();
    await drops;
    // A key that expired before every host had cached it measures nothing: another is tried (a busy machine).
    if (setUp >= expiresAt) {
      assert.ok(attempt < WRITES.expiry + 5, `the hosts took ${Number(setUp - t0) / 1e6} ms to cache a key (it expires after ${EXPIRE_MS} ms)`);
      continue;
    }
    record('expiry', await drops, expiresAt);
    i++;
  }
  for (const host of hosts) host.send({ key: null });
  for (const [source, times] of Object.entries(latencies)) {
    times.sort((a, b) => a - b);
    assert.equal(times.length, WRITES[source] * HOSTS * WORKERS);
    t.diagnostic(
      `${deployment}, ${source}: write to invalidated, ${times.length} drops (${HOSTS} hosts x ${WORKERS} workers x ${WRITES[source]}): ` +
        `p50 ${percentile(times, 0.5).toFixed(2)} ms, p99 ${percentile(times, 0.99).toFixed(2)} ms, max ${times.at(-1).toFixed(2)} ms` +
        (source === 'expiry' ? ' (from the expiry time)' : source === 'redis-cli' ? ' (including the spawn)' : ''),
    );
  }
  const lateExpiries = latencies.expiry.filter((ms) => ms > 1000);
  assert.deepEqual(lateExpiries, [], 'every expiry reached every worker within 1 s of the expiry time');
}

test(`standalone Redis, ${HOSTS} hosts x ${WORKERS} workers: writes through a host's tier, by ioredis and by redis-cli, and expiries, drop every cached copy (p50/p99 reported)`, { skip, timeout: 120_000 }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const writer = await connectClient(t, server.port);
  const hosts = await Promise.all(Array.from({ length: HOSTS }, () => startHost(t, { port: server.port })));
  await measure(t, 'standalone', hosts, writer, ['-p', String(server.port)]);
});

test(`Redis Cluster of 3 masters, ${HOSTS} hosts x ${WORKERS} workers: writes through a host's tier, by ioredis and by redis-cli, and expiries, drop every cached copy (p50/p99 reported)`, { skip, timeout: 120_000 }, async (t) => {
  const cluster = await startRedisCluster(3);
  t.after(() => cluster.kill());
  const writer = new Cluster(cluster.ports.map((port) => ({ host: '127.0.0.1', port })));
  writer.on('error', () => {});
  await new Promise((resolve) => writer.once('ready', resolve));
  t.after(() => writer.disconnect());
  const hosts = await Promise.all(Array.from({ length: HOSTS }, () => startHost(t, { ports: cluster.ports })));
  // redis-cli -c follows MOVED to the key's master.
  await measure(t, 'cluster', hosts, writer, ['-c', '-p', String(cluster.ports[0])]);
});

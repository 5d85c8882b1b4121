// Write to invalidated, measured: 3 hosts (processes, each with a cache file
// of its own and 2 worker threads) on one real redis-server. For each of
// 150 writes by a plain Redis client, every worker of every host waits for
// its host's cached copy to be dropped; the time from just before the write
// to each drop is reported as p50/p99 (process.hrtime is CLOCK_MONOTONIC,
// one clock for every process of the machine), and every copy must go.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import test from 'node:test';
import { Redis } from 'ioredis';
import { pack } from 'msgpackr';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { freePort, redisMissing, startRedis } from './helpers/redis-server.js';

const skip = redisMissing() ?? (!nativeAvailable && 'native addon unavailable');
const hostFile = new URL('./fixtures/redis-latency-host.js', import.meta.url);
const WRITES = 150;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

test(`3 hosts x 2 workers: every cached copy is dropped after each of ${WRITES} writes by another client (p50/p99 reported)`, { skip, timeout: 120_000 }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const writer = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true });
  writer.on('error', () => {});
  await writer.connect();
  t.after(() => writer.disconnect());
  const hosts = await Promise.all(
    [0, 1, 2].map(async () => {
      const child = fork(hostFile, [JSON.stringify({ path: arenaPath(t), port: server.port, workers: 2 })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      t.after(() => child.kill('SIGKILL'));
      const [first] = await Promise.race([once(child, 'message'), once(child, 'exit').then(([code]) => [`exited with ${code}`])]);
      assert.equal(first, 'started');
      return child;
    }),
  );
  const latencies = [];
  for (let i = 0; i < WRITES; i++) {
    const key = `k${i}`;
    await writer.set(`app:${key}`, pack('old'));
    const results = hosts.map((host) => {
      const watching = once(host, 'message');
      host.send({ key });
      return watching;
    });
    for (const [reply] of await Promise.all(results)) assert.ok(reply.watching, JSON.stringify(reply));
    const seen = hosts.map((host) => once(host, 'message'));
    const t0 = process.hrtime.bigint();
    await writer.set(`app:${key}`, pack('new'));
    for (const [{ seen: times }] of await Promise.all(seen)) {
      for (const at of times) {
        assert.notEqual(at, 'timeout', `a worker still read ${key}'s old copy 5 s after the write`);
        latencies.push(Number(BigInt(at) - t0) / 1e6);
      }
    }
  }
  for (const host of hosts) host.send({ key: null });
  latencies.sort((a, b) => a - b);
  assert.equal(latencies.length, WRITES * 6);
  t.diagnostic(`write to invalidated, ${latencies.length} drops (3 hosts x 2 workers x ${WRITES} writes): p50 ${percentile(latencies, 0.5).toFixed(2)} ms, p99 ${percentile(latencies, 0.99).toFixed(2)} ms, max ${latencies.at(-1).toFixed(2)} ms`);
});

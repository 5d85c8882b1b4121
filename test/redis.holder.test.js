// The TrackingHolder (lib/redis/holder.js) with processes on one cache file
// and a real redis-server: exactly one process holds the Trackers, a write
// to Redis by anyone deletes the entry every process reads, the lease is
// kept fresh while the holder lives, and when the holder is killed another
// process takes over within a second, with a new generation.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { entryKey, stateKeys } from '../lib/redis/holder.js';
import { arenaPath } from './helpers/arena-files.js';
import { connectClient, freePort, redisMissing, startRedis } from './helpers/redis-server.js';
import { MiB } from './helpers/units.js';
import { startInNamespace, unshareMissing } from './helpers/unshare.js';
import { fileURLToPath } from 'node:url';
import { until } from './helpers/until.js';

const skip = redisMissing() ?? (!nativeAvailable && 'native addon unavailable');
const holderFile = new URL('./fixtures/tracking-holder.js', import.meta.url);


async function startHolder(settings) {
  const child = fork(holderFile, [JSON.stringify(settings)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit');
  const [first] = await Promise.race([once(child, 'message'), exited.then(([code]) => [`exited with ${code}`])]);
  assert.equal(first, 'started');
  const report = async () => {
    const answer = once(child, 'message');
    child.send('report');
    return (await answer)[0];
  };
  return { child, exited, report };
}

test('one process of several holds the trackers; a write to Redis deletes the entry for all; a killed holder is replaced within a second', { skip, timeout: 60_000 }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB });
  t.after(() => cache.close());
  const namespace = 'app';
  const { genKey, leaseKey } = stateKeys(namespace);
  const holders = await Promise.all([1, 2, 3].map(() => startHolder({ path, port: server.port, namespace })));
  t.after(() => holders.forEach(({ child }) => child.kill('SIGKILL')));

  // One holder arms its tracker and bumps the generation; then it keeps the lease fresh.
  await until(() => (cache.get(genKey) ?? 0) >= 1, 'the first generation');
  await until(() => Date.now() - (cache.get(leaseKey) ?? 0) < 300, 'a fresh lease');
  const reports = await Promise.all(holders.map(({ report }) => report()));
  assert.equal(reports.filter(({ holding }) => holding).length, 1, JSON.stringify(reports));

  const writer = await connectClient(t, server.port);
  const generation = cache.get(genKey);
  const local = entryKey(namespace, generation, 'user:1');
  cache.set(local, 'cached copy');
  await writer.set(`${namespace}:user:1`, 'new value');
  await until(() => cache.get(local) === undefined, 'the invalidation');
  cache.set(local, 'cached again');
  await writer.set('another:user:1', 'x');
  await writer.ping();
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(cache.get(local), 'cached again', 'a key outside the namespace leaves the entry alone');

  // Kill the holder: another takes over within a second, and the generation moves on.
  const holder = holders[reports.findIndex(({ holding }) => holding)];
  const killedAt = Date.now();
  holder.child.kill('SIGKILL');
  await holder.exited;
  await until(async () => {
    const alive = holders.filter((each) => each !== holder);
    const now = await Promise.all(alive.map(({ report }) => report()));
    return now.filter(({ holding }) => holding).length === 1 && cache.get(genKey) > generation;
  }, 'a new holder and generation', 3000);
  const tookOver = Date.now() - killedAt;
  assert.ok(tookOver < 1000, `took over after ${tookOver} ms`);
  const next = entryKey(namespace, cache.get(genKey), 'user:1');
  cache.set(next, 'cached by the new generation');
  await writer.set(`${namespace}:user:1`, 'newer value');
  await until(() => cache.get(next) === undefined, 'the new holder\'s invalidation');
  t.diagnostic(`a new holder within ${tookOver} ms`);
});

test('a process in another PID namespace never takes the role from a live holder, and takes it at once from a dead one', { skip: skip || unshareMissing(), timeout: 60_000 }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB });
  t.after(() => cache.close());
  const namespace = 'app';
  const holder = await startHolder({ path, port: server.port, namespace });
  t.after(() => holder.child.kill('SIGKILL'));
  await until(async () => (await holder.report()).holding, 'the first holder');
  // Its pid means nothing in the other namespace (kill(pid, 0) there says "no such process").
  const contained = startInNamespace(fileURLToPath(new URL('./fixtures/tracking-holder-ns.js', import.meta.url)), { path, port: server.port, namespace, reportAfterMs: 1500 });
  t.after(() => contained.child.kill('SIGKILL'));
  assert.equal((await contained.next()).started, true);
  const later = await contained.next();
  assert.equal(later.holding, false, 'it did not take the role from a live holder');
  const first = await holder.report();
  assert.equal(first.holding, true);
  assert.equal(first.counts.lostClaims, 0);
  // The host's holder dies: the contained process's claim check sees it at once.
  const killedAt = Date.now();
  holder.child.kill('SIGKILL');
  await holder.exited;
  const { genKey } = stateKeys(namespace);
  const generation = cache.get(genKey);
  await until(() => cache.get(genKey) > generation, 'the contained process arming as the new holder', 3000);
  t.diagnostic(`the contained process held the role ${Date.now() - killedAt} ms after the holder was killed`);
});

// The tracking holder killed while Redis is written: 3 processes of one
// machine (one cache file, a RedisTier each) on one redis-server have 10
// keys cached; the process holding the tracking role is SIGKILLed, and the
// keys are written at once, in the gap before another process holds the
// role (5 by an ioredis client, 5 by redis-cli, whose invalidations nobody
// hears). A surviving process takes the role within a second (measured),
// and from then on no surviving process serves an old value: the new holder
// drops every entry cached before it armed (a new generation), the only way
// to cover writes nobody heard. A process of another machine (a cache file
// of its own, its own holder) reads the new values too.
import assert from 'node:assert/strict';
import { fork, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import test from 'node:test';
import { pack } from 'msgpackr';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { stateKeys } from '../lib/redis/holder.js';
import { arenaPath } from './helpers/arena-files.js';
import { connectClient, freePort, redisMissing, startRedis } from './helpers/redis-server.js';
import { until } from './helpers/until.js';

const skip = redisMissing() ?? (!nativeAvailable && 'native addon unavailable');
const hostFile = new URL('./fixtures/redis-machine-host.js', import.meta.url);


/** A process on the machine's cache file `path`: { child, exited, ask(op, key) }. */
async function startProcess(t, path, port) {
  const child = fork(hostFile, [JSON.stringify({ path, port })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  t.after(() => child.kill('SIGKILL'));
  const [first] = await Promise.race([once(child, 'message'), exited.then(({ code }) => [`exited with ${code}`])]);
  assert.equal(first, 'started');
  const pending = new Map();
  let next = 0;
  child.on('message', (reply) => {
    pending.get(reply.id)?.(reply);
    pending.delete(reply.id);
  });
  const ask = async (op, key) => {
    const id = ++next;
    const answer = new Promise((resolve) => pending.set(id, resolve));
    child.send({ id, op, key });
    const reply = await answer;
    if (reply.error) throw new Error(reply.error);
    return op === 'stats' ? reply.stats : reply.result;
  };
  return { child, exited, ask };
}

/** `redis-cli SET` of `value` msgpack-packed (as the tier stores values), the bytes given on stdin (-x). */
function redisCliSet(port, key, value) {
  const run = spawnSync('redis-cli', ['-p', String(port), '-x', 'SET', key], { input: pack(value), encoding: 'utf8', timeout: 5000 });
  assert.equal(run.stdout.trim(), 'OK', `redis-cli SET ${key}: ${run.stderr || run.error}`);
}

test('the holder killed with writes in the gap: a survivor holds the role within 1 s, and no survivor serves an old value after that', { skip, timeout: 60_000 }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const path = arenaPath(t);
  const processes = await Promise.all([0, 1, 2].map(() => startProcess(t, path, server.port)));
  const elsewhere = await startProcess(t, arenaPath(t), server.port);
  const cache = SharedCache.open(path);
  t.after(() => cache.close());
  const { genKey, leaseKey } = stateKeys('app');
  const writer = await connectClient(t, server.port);
  const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
  for (const key of keys) await writer.set(`app:${key}`, pack('old'));

  // Every process serves every key from the machine's cache (under a fresh lease).
  await until(async () => {
    for (const { ask } of [...processes, elsewhere]) {
      const before = (await ask('stats')).local.hits;
      for (const key of keys) assert.equal(await ask('get', key), 'old');
      if ((await ask('stats')).local.hits - before !== keys.length) return false;
    }
    return true;
  }, 'every key served from the cache by every process');
  const stats = await Promise.all(processes.map(({ ask }) => ask('stats')));
  assert.equal(stats.filter(({ holder }) => holder.holding).length, 1, JSON.stringify(stats.map(({ holder }) => holder)));
  const holder = processes[stats.findIndex(({ holder: { holding } }) => holding)];
  const survivors = processes.filter((each) => each !== holder);
  assert.equal((await elsewhere.ask('stats')).holder.holding, true, 'the other machine has a holder of its own');
  const generation = cache.get(genKey);

  // The kill, then the writes, before anyone holds the role again.
  const deadLease = cache.get(leaseKey);
  const killedAt = performance.now();
  holder.child.kill('SIGKILL');
  await writer.pipeline(keys.slice(0, 5).map((key) => ['set', `app:${key}`, pack('new')])).exec();
  const ioredisInGap = cache.get(genKey) === generation;
  for (const key of keys.slice(5)) redisCliSet(server.port, `app:${key}`, 'new');
  const writesDone = performance.now() - killedAt;
  const allInGap = cache.get(genKey) === generation;
  assert.deepEqual(await holder.exited, { code: null, signal: 'SIGKILL' });

  // A survivor holds the role, then arms: a new generation, or (were there
  // none) a lease vouched for after the dead holder's lapsed (leaseMs 300).
  let holding = null;
  await until(async () => {
    const now = await Promise.all(survivors.map(({ ask }) => ask('stats')));
    const holders = now.filter(({ holder: { holding: held } }) => held).length;
    assert.ok(holders <= 1, `${holders} survivors hold the role`);
    if (holding === null && holders === 1) holding = performance.now() - killedAt;
    return holding !== null && (cache.get(genKey) > generation || (cache.get(leaseKey) ?? 0) > deadLease + 300);
  }, 'a survivor holding the role, armed', 3000);
  const armed = performance.now() - killedAt;
  assert.ok(holding < 1000, `a survivor held the role ${holding.toFixed(0)} ms after the kill`);
  assert.ok(armed < 1000, `a survivor armed as the holder ${armed.toFixed(0)} ms after the kill`);

  // From then on, no survivor (nor the other machine) serves an old value (polled for 2 s).
  const pollUntil = Date.now() + 2000;
  let reads = 0;
  const old = [];
  while (Date.now() < pollUntil) {
    await Promise.all(
      [...survivors, elsewhere].map(async ({ ask }, i) => {
        for (const key of keys) {
          const value = await ask('get', key);
          reads++;
          if (value !== 'new') old.push(`${i < survivors.length ? `survivor ${i}` : 'the other machine'} read ${key} = ${JSON.stringify(value)}`);
        }
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  assert.deepEqual(old.slice(0, 5), [], `${old.length} reads of ${reads} after the new holder armed were not the value written in the gap`);
  const servedLocally = (await Promise.all(survivors.map(({ ask }) => ask('stats')))).reduce((sum, { local }) => sum + local.hits, 0);
  assert.ok(servedLocally > 0, 'the survivors serve from the machine\'s cache again under the new holder');

  assert.ok(cache.get(genKey) > generation, 'the new holder started a new generation');

  // The new holder hears writes: one by redis-cli reaches both survivors.
  redisCliSet(server.port, 'app:k0', 'newer');
  await until(async () => (await Promise.all(survivors.map(({ ask }) => ask('get', 'k0')))).every((value) => value === 'newer'), 'a write after the hand-over on every survivor', 1000);
  t.diagnostic(
    `holder SIGKILLed; 10 writes done ${writesDone.toFixed(1)} ms after the kill (ioredis writes before the new generation: ${ioredisInGap}, all: ${allInGap}); ` +
      `a survivor held the role after ${holding.toFixed(0)} ms and armed (new generation) after ${armed.toFixed(0)} ms; then ${reads} reads in 2 s, none old`,
  );
});

// RedisTier.fetch is single-flight across the whole deployment: 3 hosts
// (processes, each with a cache file of its own) x 4 worker threads (each
// with a RedisTier of its own on the host's cache) call fetch(key, loader)
// at once on a cold key; the loader runs exactly once in total (counted by
// INCR in Redis, which every host shares), and all 12 callers get the value
// that one loader returned. Repeated for several keys and loader durations
// (0 ms: the loader finishes while other hosts are still between their GET
// and their lock attempt).
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import test from 'node:test';
import { Redis } from 'ioredis';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { connectClient, freePort, redisMissing, startRedis } from './helpers/redis-server.js';

const skip = redisMissing() ?? (!nativeAvailable && 'native addon unavailable');
const hostFile = new URL('./fixtures/redis-fetch-host.js', import.meta.url);
const HOSTS = 3;
const WORKERS = 4;

/** A host process with WORKERS worker threads, once they are ready: (message) => its reply. */
async function startHost(t, port, host) {
  const child = fork(hostFile, [JSON.stringify({ path: arenaPath(t), port, workers: WORKERS, host })], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit');
  t.after(() => child.kill('SIGKILL'));
  const [first] = await Promise.race([once(child, 'message'), exited.then(([code]) => [`exited with ${code}`])]);
  assert.equal(first, 'started');
  return {
    async fetch(message) {
      const reply = Promise.race([once(child, 'message'), exited.then(([code]) => { throw new Error(`host ${host} exited with ${code}`); })]);
      child.send(message);
      return (await reply)[0];
    },
    async stop() {
      child.send('stop');
      await exited;
    },
  };
}

test(`fetch across ${HOSTS} hosts x ${WORKERS} workers at once on a cold key: one loader run in total, every caller gets its value`, { skip, timeout: 120_000 }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const counter = await connectClient(t, server.port);
  const hosts = await Promise.all(Array.from({ length: HOSTS }, (_, host) => startHost(t, server.port, host)));

  const rounds = [0, 0, 0, 20, 20, 100, 100, 0, 0, 0].map((delayMs, i) => ({ key: `report:${i}`, delayMs }));
  const loadsPerKey = [];
  for (const { key, delayMs } of rounds) {
    // Every thread of every host starts its fetch at the same clock time.
    const at = Date.now() + 150;
    const replies = await Promise.all(hosts.map((host) => host.fetch({ key, at, delayMs })));
    const results = replies.flatMap(({ results: each }, host) => each.map((reply) => ({ host, ...reply })));
    assert.equal(results.length, HOSTS * WORKERS);
    const errors = results.filter((reply) => reply.error !== undefined);
    assert.deepEqual(errors, [], `${key}: every caller gets a value`);
    const loads = Number(await counter.get(`loads:${key}`));
    loadsPerKey.push(loads);
    assert.equal(loads, 1, `${key} (loader of ${delayMs} ms): the loader ran ${loads} times for ${HOSTS * WORKERS} callers on ${HOSTS} hosts`);
    const [first] = results;
    assert.equal(first.result?.key, key);
    for (const reply of results) assert.deepEqual(reply.result, first.result, `host ${reply.host} worker ${reply.worker} got the loaded value`);
    // The tiers' own count agrees: one load per key so far, over all 12 tiers.
    const counted = results.reduce((sum, reply) => sum + reply.loads, 0);
    assert.equal(counted, loadsPerKey.length, `${key}: the tiers' stats().loads sum to ${counted} after ${loadsPerKey.length} keys`);
  }
  await Promise.all(hosts.map((host) => host.stop()));
  t.diagnostic(`${rounds.length} keys, ${HOSTS * WORKERS} callers each: loader runs per key ${loadsPerKey.join(',')}`);
});

// The lock step of fetch() is check-then-act: GET (no value), then SET NX on
// the lock. A machine whose SET NX reaches Redis after another machine's
// loader stored its value and released the lock wins the lock and loads
// again. The delay is made deterministic here by holding machine A's SET NX
// until machine B's fetch has finished (a slow network or a busy event loop
// between A's GET reply and its SET NX does the same). Expected: A finds
// B's value once it holds the lock (a GET after winning it) and does not run
// its loader. (The 12-caller test above meets the same race by itself with
// 0 ms loaders, in about 3 runs of 4 without that GET.)
test('fetch: a lock won after another machine stored the value and released the lock does not load again', { skip, timeout: 30_000 }, async (t) => {
  const { SharedCache } = await import('../lib/index.js');
  const { RedisTier } = await import('../lib/redis/tier.js');
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const connect = async () => {
    const client = await connectClient(t, server.port);
    return client;
  };
  const [clientA, clientB] = [await connect(), await connect()];
  let lockAttempted;
  const attempted = new Promise((resolve) => (lockAttempted = resolve));
  let releaseLock;
  const gate = new Promise((resolve) => (releaseLock = resolve));
  // Machine A's lock attempt (SET ... NX) waits at the gate.
  const slowLock = Object.create(clientA, {
    set: {
      value: async (...args) => {
        if (args.includes('NX')) {
          lockAttempted();
          await gate;
        }
        return clientA.set(...args);
      },
    },
  });
  const machineA = new RedisTier({ cache: new SharedCache({ memoryBytes: 8 * 2 ** 20 }), redis: slowLock, Redis, namespace: 'app' });
  const machineB = new RedisTier({ cache: new SharedCache({ memoryBytes: 8 * 2 ** 20 }), redis: clientB, Redis, namespace: 'app' });
  t.after(() => machineA.close());
  t.after(() => machineB.close());
  let loads = 0;
  const fetchingA = machineA.fetch('k', () => ++loads && 'loaded by A');
  await attempted;
  assert.equal(await machineB.fetch('k', () => ++loads && 'loaded by B'), 'loaded by B');
  releaseLock();
  assert.equal(await fetchingA, 'loaded by B', 'A gets the value B stored');
  assert.equal(loads, 1, 'one load for the two machines');
});

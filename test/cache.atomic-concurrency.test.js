// The atomic operations under contention, for real: worker threads on one
// in-memory cache and processes on one file hammer the same keys at once
// (every party starts on one 'go'). Counters end exact, each add and take
// has exactly one winner, read-modify-writes of an object lose nothing, and
// writers killed with SIGKILL mid-increment lose at most the increment in
// flight, never the counter.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { Worker } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const partyFile = new URL('./fixtures/atomic-party.js', import.meta.url);
const skipFiles = !nativeAvailable && 'native addon unavailable';
const PARTIES = 4;

/** Starts one party: a worker on `handle`, or a process on `path`. Resolves once it is ready. */
async function startParty(settings) {
  const party = settings.handle
    ? new Worker(partyFile, { workerData: settings })
    : fork(partyFile, [JSON.stringify(settings)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // Listened for from the start: see file.truncated.test.js.
  const exited = once(party, 'exit');
  const [ready] = await Promise.race([once(party, 'message'), exited.then(([code]) => [`exited with ${code}`])]);
  assert.equal(ready, 'ready');
  const send = (message) => (settings.handle ? party.postMessage(message) : party.send(message));
  return { party, exited, send };
}

/** Runs `settings(id)` parties of one kind at once (after all are ready) and returns their reports. */
async function runParties(count, settings) {
  const parties = await Promise.all(Array.from({ length: count }, (_, id) => startParty({ id, ...settings(id) })));
  const reports = parties.map(({ party }) => once(party, 'message'));
  for (const { send } of parties) send('go');
  const results = (await Promise.all(reports)).map(([report]) => report);
  await Promise.all(parties.map(({ exited }) => exited));
  return results;
}

for (const where of ['threads', 'processes']) {
  const skip = where === 'processes' && skipFiles;

  /** A cache and what parties need to reach it: a handle (threads) or its file (processes). */
  function shared(t) {
    if (where === 'threads') {
      const cache = new SharedCache({ memoryBytes: 16 * MiB, nearCache: 100 });
      return { cache, reach: { handle: cache.handle } };
    }
    const path = arenaPath(t);
    const cache = SharedCache.open(path, { memoryBytes: 16 * MiB });
    t.after(() => cache.close());
    return { cache, reach: { path } };
  }

  test(`${PARTIES} ${where} x 10,000 incr of one key count exactly ${PARTIES * 10_000}`, { skip }, async (t) => {
    const { cache, reach } = shared(t);
    const reports = await runParties(PARTIES, () => ({ ...reach, mode: 'incr', key: 'counter', count: 10_000 }));
    assert.equal(cache.get('counter'), PARTIES * 10_000);
    // Each party's last result is one the counter passed through: at most the total, and distinct.
    const lasts = reports.map(({ last }) => last);
    assert.equal(new Set(lasts).size, PARTIES);
    assert.ok(lasts.every((last) => last >= 10_000 && last <= PARTIES * 10_000));
    assert.equal(cache.stats().increments, PARTIES * 10_000);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  });

  test(`${PARTIES} ${where} x 1,000 update of one object lose no write`, { skip }, async (t) => {
    const { cache, reach } = shared(t);
    await runParties(PARTIES, () => ({ ...reach, mode: 'update', key: 'record', count: 1000 }));
    const record = cache.get('record');
    assert.equal(record.n, PARTIES * 1000);
    assert.deepEqual(record.by, Object.fromEntries(Array.from({ length: PARTIES }, (_, id) => [id, 1000])));
  });

  test(`${PARTIES} ${where} racing add on 1,000 keys: exactly one winner each, and the value is the winner's`, { skip }, async (t) => {
    const { cache, reach } = shared(t);
    const rounds = 1000;
    const reports = await runParties(PARTIES, () => ({ ...reach, mode: 'add', rounds }));
    const winners = new Map();
    for (const { id, won } of reports) {
      for (const r of won) {
        assert.ok(!winners.has(r), `round ${r} won by ${winners.get(r)} and ${id}`);
        winners.set(r, id);
      }
    }
    assert.equal(winners.size, rounds);
    for (const [r, id] of winners) assert.equal(cache.get(`add:${r}`), id);
  });

  test(`${PARTIES} ${where} racing take on 1,000 tokens: each is taken exactly once`, { skip }, async (t) => {
    const { cache, reach } = shared(t);
    const rounds = 1000;
    for (let r = 0; r < rounds; r++) cache.set(`token:${r}`, { token: r });
    const reports = await runParties(PARTIES, () => ({ ...reach, mode: 'take', rounds }));
    const takers = new Map();
    for (const { id, took } of reports) {
      for (const [r, value] of took) {
        assert.ok(!takers.has(r), `token ${r} taken by ${takers.get(r)} and ${id}`);
        assert.deepEqual(value, { token: r });
        takers.set(r, id);
      }
    }
    assert.equal(takers.size, rounds);
    assert.equal(cache.size, 0);
  });
}

test('processes killed with SIGKILL mid-increment: the counter holds every increment that returned, plus at most the ones in flight', { skip: skipFiles, timeout: 120_000 }, async (t) => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, shards: 1 });
  t.after(() => cache.close());
  const rounds = STRESS ? 40 : 8;
  let kills = 0;
  let id = 0;
  for (let round = 0; round < rounds; round++) {
    const parties = await Promise.all(Array.from({ length: 3 }, () => startParty({ id: id++, path, mode: 'kill-incr', key: 'total' })));
    for (const { send } of parties) send('go');
    // Each is killed at its own random moment, the others still writing.
    await Promise.all(
      parties.map(async ({ party, exited }) => {
        await sleep(20 + random.int(150));
        party.kill('SIGKILL');
        await exited;
        kills++;
      }),
    );
  }
  // A reader may have to take over a lock a killed writer held.
  let done = 0;
  for (let party = 0; party < id; party++) done += cache.get(`done:${party}`) ?? 0;
  const total = cache.get('total');
  assert.ok(done > 0, 'the writers ran');
  // A writer dies after its total's increment returned and before its own count's: at most one per kill.
  assert.ok(total >= done && total <= done + kills, `total ${total}, increments that returned ${done}, kills ${kills} (SEED=${seed})`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  t.diagnostic(`${done} increments returned, total ${total}, ${kills} kills, ${cache.stats().lockRecoveries} lock recoveries`);
});

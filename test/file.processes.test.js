// Several processes share one file-backed cache: they see each other's
// writes, survive each other's SIGKILL in the middle of writes without torn
// values or hangs, and a restart finds the entries.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath, forgetCleanClose, killProcess, runProcess, startProcess, stopProcess } from './helpers/arena-files.js';
import { checkValue } from './helpers/checked-value.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
const KILLS = STRESS ? 1000 : 100;

for (const processes of [2, 4]) {
  test(`${processes} processes sharing one file see each other's writes`, { skip }, async (t) => {
    const path = arenaPath(t);
    const cache = SharedCache.open(path, { memoryBytes: 16 * MiB });
    t.after(() => cache.close());
    const keysOf = (id) => Array.from({ length: 200 }, (_, i) => `p${id}:${i}`);
    // Each child writes its own keys (and flushes), one after another or at once.
    await Promise.all(
      Array.from({ length: processes }, (_, id) => runProcess({ mode: 'put', path, keys: keysOf(id), writer: id, length: 300 })),
    );
    // Every child then reads every other child's keys; so does this process.
    const reports = await Promise.all(
      Array.from({ length: processes }, () =>
        runProcess({ mode: 'get', path, keys: Array.from({ length: processes }, (_, other) => keysOf(other)).flat() }),
      ),
    );
    for (const { found } of reports) {
      assert.deepEqual(new Set(Object.values(found)), new Set(['ok']));
      assert.equal(Object.keys(found).length, processes * 200);
    }
    for (let id = 0; id < processes; id++) for (const key of keysOf(id)) assert.equal(checkValue(key, cache.get(key)), 'ok');
    const stats = cache.stats();
    assert.equal(stats.sets, processes * 200);
    assert.ok(stats.hits >= processes * processes * 200, 'the children\'s reads count in the shared stats');
  });
}

test('4 processes hammering the same keys never read a torn or foreign value', { skip }, async (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, shards: 4 });
  t.after(() => cache.close());
  const keys = Array.from({ length: 48 }, (_, i) => `shared:${i}`);
  const seed = testSeed();
  const hammers = await Promise.all(
    [1, 2, 3, 4].map((writer) => startProcess({ mode: 'hammer', path, keys, writer, seed: seed + writer, maxLength: 3000 })),
  );
  await sleep(STRESS ? 10_000 : 1500);
  const reports = await Promise.all(hammers.map(({ child }) => stopProcess(child)));
  let ok = 0;
  for (const { counts, verify } of reports) {
    assert.equal(counts.torn, 0, `torn values (SEED=${seed})`);
    assert.equal(counts.foreign, 0, `foreign values (SEED=${seed})`);
    assert.deepEqual(verify, { ok: true, problems: [] });
    ok += counts.ok;
  }
  assert.ok(ok > 1000, `the processes read each other's values (${ok} checked)`);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('entries survive every process closing and exiting: a warm restart', { skip }, async (t) => {
  const path = arenaPath(t);
  const keys = Array.from({ length: 500 }, (_, i) => `warm:${i}`);
  const put = await runProcess({ mode: 'put', path, keys, writer: 7, length: 1000, options: { memoryBytes: 8 * MiB } });
  assert.equal(put.stats.entries, 500);
  const { found, stats } = await runProcess({ mode: 'get', path, keys });
  assert.deepEqual(new Set(Object.values(found)), new Set(['ok']));
  assert.equal(stats.entries, 500);
  assert.equal(stats.lockRecoveries, 0, 'a clean restart resets nothing');
  const cache = SharedCache.open(path);
  assert.equal(cache.size, 500);
  cache.close();
});

test('a process killed while holding a lock: others take the lock over at once and keep working', { skip }, async (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 4 * MiB, shards: 1, lockLeaseMs: 60_000 });
  t.after(() => cache.close());
  cache.set('before', 'x');
  const { child } = await startProcess({ mode: 'hold-lock', path, shard: 0 });
  await killProcess(child);
  // The lease is a minute: only recognising the dead holder gets us through quickly.
  const started = performance.now();
  cache.set('after', 'y');
  assert.ok(performance.now() - started < 2000, 'the dead holder was recognised');
  assert.equal(cache.get('after'), 'y');
  assert.equal(cache.get('before'), 'x', 'the shard the holder died in was rebuilt, not reset');
  assert.equal(cache.stats().lockRecoveries, 1);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

// A process that dies cannot tear pages: the shard it left locked is
// rebuilt, in memory or on disk, with record checksums or without (see
// lib/arena/entries/restart.js). After a machine crash a file on disk may
// have part of a shard's pages written back: the shard is rebuilt where its
// records carry checksums (the default), which tell a torn record, and
// reset where they do not.
for (const [where, checksums, crash] of [
  ['memory', true, 'process'],
  ['disk', true, 'process'],
  ['disk', false, 'process'],
  ['disk', true, 'machine'],
  ['disk', false, 'machine'],
]) {
  const rebuilt = crash === 'process' || checksums;
  const file = where === 'memory' ? 'in memory' : `on disk ${checksums ? 'with' : 'without'} record checksums`;
  const title = rebuilt
    ? `the first process to reopen a file ${file} after a ${crash} crash rebuilds the shard left locked: nothing is lost`
    : `the first process to reopen a file ${file} after a ${crash} crash resets the shard left locked and keeps the rest`;
  test(title, { skip }, async (t) => {
    const path = where === 'memory' ? arenaPath(t) : join(mkdtempSync(join(tmpdir(), 'arenacache-')), 'crash.arena');
    if (where === 'disk') t.after(() => rmSync(dirname(path), { recursive: true, force: true }));
    const keys = Array.from({ length: 400 }, (_, i) => `crash:${i}`);
    await runProcess({ mode: 'put', path, keys, writer: 3, length: 100, options: { memoryBytes: 4 * MiB, shards: 4, checksums } });
    const { child } = await startProcess({ mode: 'hold-lock', path, shard: 2 });
    await killProcess(child);
    if (crash === 'machine') forgetCleanClose(path);
    // Nobody has the file open now: the next opener recovers it.
    const cache = SharedCache.open(path);
    const stats = cache.stats();
    assert.equal(stats.lockRecoveries, 1);
    if (rebuilt) {
      assert.equal(stats.entries, 400);
      assert.equal(stats.lostEntries, 0);
    } else {
      assert.ok(stats.entries > 200 && stats.entries < 400, `three of four shards kept their entries (${stats.entries})`);
      assert.equal(stats.lostEntries, 400 - stats.entries);
    }
    for (const key of keys) {
      const value = cache.get(key);
      if (value !== undefined) assert.equal(checkValue(key, value), 'ok');
    }
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
    cache.set('new', 'works');
    assert.equal(cache.get('new'), 'works');
    cache.close();
  });
}

test(`${KILLS} writers killed with SIGKILL mid-write: survivors never read a torn value and never hang`, { skip, timeout: 600_000 }, async (t) => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const path = arenaPath(t);
  // A writer killed between taking a lock and recording who it is (a few
  // instructions) cannot be recognised as dead: the lease bounds that wait.
  const lockLeaseMs = 1000;
  const cache = SharedCache.open(path, { memoryBytes: 8 * MiB, shards: 2, lockLeaseMs });
  t.after(() => cache.close());
  const keys = Array.from({ length: 32 }, (_, i) => `victim:${i}`);
  const survivors = await Promise.all(
    [1, 2].map((writer) => startProcess({ mode: 'hammer', path, keys, writer: 1000 + writer, seed: seed + writer, maxLength: 4000 })),
  );
  for (let kill = 0; kill < KILLS; kill++) {
    // Large values keep the writer inside its critical section much of the time.
    const { child } = await startProcess({ mode: 'writer', path, keys, writer: kill, seed: seed + kill, minLength: 64 * 1024, maxLength: 256 * 1024 });
    await sleep(random.int(15));
    await killProcess(child);
    const value = cache.get(keys[random.int(keys.length)]);
    if (value !== undefined) assert.notEqual(checkValue('', value), 'torn', `SEED=${seed}`);
  }
  const reports = await Promise.all(survivors.map(({ child }) => stopProcess(child)));
  for (const { counts, verify } of reports) {
    assert.equal(counts.torn, 0, `torn values (SEED=${seed})`);
    assert.equal(counts.foreign, 0, `foreign values (SEED=${seed})`);
    assert.ok(counts.slowestMs < lockLeaseMs + 2000, `the slowest operation took ${counts.slowestMs} ms (SEED=${seed})`);
    assert.deepEqual(verify, { ok: true, problems: [] });
  }
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  const stats = cache.stats();
  t.diagnostic(`lockRecoveries ${stats.lockRecoveries}, shardRepairs ${stats.shardRepairs}, slowest ops ${reports.map((r) => r.counts.slowestMs.toFixed(1)).join('/')} ms, writes refused as busy ${reports.map((r) => r.counts.busy).join('/')}`);
  assert.ok(stats.lockRecoveries > 0, 'some kills landed inside a critical section');
});

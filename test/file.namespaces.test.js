// Processes in different PID namespaces (containers sharing /dev/shm) use
// one arena file. A pid from another namespace means nothing here: kill(pid,
// 0) says "no such process" for a live process there, or names an unrelated
// one. Lock holders are therefore recognised by a kernel lock each thread
// holds on a byte of the file, which the kernel drops when the thread's
// process dies, whatever namespace asks: no live holder's lock is taken
// over, no healthy shard reset.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { startInNamespace, unshareMissing } from './helpers/unshare.js';

const run = promisify(execFile);
const hammer = fileURLToPath(new URL('./fixtures/namespace-hammer.js', import.meta.url));

test('two processes in different PID namespaces share one shard without taking over each other\'s locks', { skip: unshareMissing() }, async (t) => {
  const path = arenaPath(t);
  // One shard: every write of both processes contends for the same lock.
  SharedCache.open(path, { memoryBytes: 4 * 2 ** 20, shards: 1 }).close();
  const settings = (writer) => JSON.stringify({ path, ms: 1500, writer });
  const [inside, outside] = await Promise.all([
    run('unshare', ['-p', '-f', '--mount-proc', process.execPath, hammer, settings(1)]),
    run(process.execPath, [hammer, settings(2)]),
  ]);
  const reports = [inside, outside].map(({ stdout }) => JSON.parse(stdout));
  for (const report of reports) {
    assert.ok(report.ops > 1000, `only ${report.ops} operations`);
    assert.equal(report.torn, 0);
    assert.equal(report.foreign, 0);
    assert.deepEqual(report.problems, []);
  }
  assert.ok(reports[0].pid < 10, `the first process runs in a namespace of its own (pid ${reports[0].pid} there)`);
  // Stats are arena-wide: neither process took over a lock or reset a shard.
  assert.equal(reports[1].lockRecoveries, 0);
  assert.equal(reports[1].shardRepairs, 0);
  const cache = SharedCache.open(path);
  t.after(() => cache.close());
  assert.equal(cache.stats().lockRecoveries, 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

// Both processes in new PID namespaces: both are pid 1, and their threads'
// tids repeat too. Nothing may judge the other party by comparing pids.
const party = fileURLToPath(new URL('./fixtures/namespace-party.js', import.meta.url));

/** A file both parties open: one shard, a sweeper lease of three minutes, fetch waiters patient for 30 s. */
function sharedFile(t) {
  const path = arenaPath(t);
  SharedCache.open(path, { memoryBytes: 8 * 2 ** 20, shards: 1, sweepIntervalMs: 60_000, fetchTimeoutMs: 30_000, lockLeaseMs: 60_000 }).close();
  return path;
}

/** Starts a party in a namespace of its own; it is killed when the test ends. */
async function startParty(t, settings) {
  const started = startInNamespace(party, settings);
  t.after(() => started.kill());
  return started;
}

// The pauses below signal the party by its pid here. Read before unshare has
// forked, that pid used to come out as 0, and a SIGSTOP to pid 0 stops this
// test's whole process group, the test runner with it: CI hung until killed.
test('innerPid() names the process in the new namespace, never 0 or 1, even asked at once', { skip: unshareMissing() }, async (t) => {
  const path = sharedFile(t);
  for (let i = 0; i < 10; i++) {
    const started = startInNamespace(party, { mode: 'hold-flight', path, key: `k${i}` });
    t.after(() => started.kill());
    const pid = await started.innerPid();
    assert.ok(Number.isSafeInteger(pid) && pid > 1, `innerPid() gave ${pid}`);
    // The process unshare forked: its parent is unshare (its command line
    // can read empty while it execs node, so the parent is what is checked).
    assert.match(readFileSync(`/proc/${pid}/status`, 'utf8'), new RegExp(`^PPid:\\s+${started.child.pid}$`, 'm'));
    await started.kill();
  }
});

for (const [what, hold, take] of [
  ['a shard lock', 'hold-lock', 'take-lock'],
  ['a fetch flight', 'hold-flight', 'take-flight'],
  ['the sweeper lease', 'hold-sweeper', 'take-sweeper'],
]) {
  test(`a pid-1 process that dies holding ${what} is recognised as dead by another pid 1`, { skip: unshareMissing() }, async (t) => {
    const path = sharedFile(t);
    // Open here too, so that the taker is not the file's only user: a sole
    // opener clears every lock, flight and lease at once (a restart).
    const keeper = SharedCache.open(path);
    t.after(() => keeper.close());
    const holder = await startParty(t, { mode: hold, path, key: 'k' });
    const held = await holder.next();
    assert.equal(held.pid, 1, 'the holder runs as pid 1 of its namespace');
    await holder.kill();
    const taker = await startParty(t, { mode: take, path, key: 'k', giveUpMs: 20_000 });
    const done = await Promise.race([
      taker.next(),
      new Promise((resolve, reject) => {
        setTimeout(() => reject(new Error(`pid 1 of another namespace did not get past ${what} its dead holder left, in 20 s`)), 20_000).unref();
      }),
    ]);
    assert.equal(done.pid, 1, 'the taker runs as pid 1 of its namespace');
    assert.ok(done.ms < 1000, `took ${Math.round(done.ms)} ms to get past a dead holder`);
    if (take === 'take-lock') {
      assert.equal(done.value, 'after');
      assert.equal(done.lockRecoveries, 1);
    }
    if (take === 'take-flight') assert.equal(done.value, 'loaded here');
    await taker.exited;
    assert.deepEqual(keeper.verify(), { ok: true, problems: [] });
  });
}

for (const pauses of [false, true]) {
  test(`two pid-1 processes, 3 threads against 1, hammer one shard${pauses ? ', one stopped 20 ms in every 70' : ''}: no live holder taken over, nothing lost`, { skip: unshareMissing() }, async (t) => {
    const ms = process.env.STRESS ? 60_000 : 10_000;
    const path = sharedFile(t);
    const bystanders = SharedCache.open(path);
    for (let i = 0; i < 200; i++) bystanders.set(`bystander:${i}`, `value ${i}`);
    bystanders.close();
    const many = await startParty(t, { mode: 'hammer', path, threads: 3, ms, party: 1 });
    const one = await startParty(t, { mode: 'hammer', path, threads: 1, ms, party: 2 });
    let stopper = null;
    const pid = pauses ? await many.innerPid() : null;
    if (pauses) {
      stopper = setInterval(() => {
        try {
          process.kill(pid, 'SIGSTOP');
          setTimeout(() => {
            try {
              process.kill(pid, 'SIGCONT');
            } catch {
              // It has exited.
            }
          }, 20);
        } catch {
          // It has exited.
        }
      }, 70);
    }
    const deadline = performance.now() + ms;
    const reports = await Promise.all([many.next(), one.next()]);
    if (stopper !== null) clearInterval(stopper);
    if (pauses) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // It has exited.
      }
    }
    // No thread spins on after its loop: both processes exit soon after their time is up.
    const exits = await Promise.race([
      Promise.all([many.exited, one.exited]).then(() => performance.now() - deadline),
      new Promise((resolve) => setTimeout(() => resolve(Infinity), 30_000).unref()),
    ]);
    assert.ok(exits < 15_000, `the processes were still running ${Math.round(exits)} ms after their loops ended`);
    for (const report of reports) {
      assert.equal(report.pid, 1);
      for (const result of report.results) {
        assert.equal(result.torn, 0);
        assert.equal(result.foreign, 0);
        assert.equal(result.lost, 0, `entries lost: ${JSON.stringify(result)}`);
        assert.ok(result.ops > 100, `only ${result.ops} operations`);
      }
    }
    const cache = SharedCache.open(path);
    t.after(() => cache.close());
    const stats = cache.stats();
    assert.equal(stats.lockRecoveries, 0, 'a live holder\'s lock was taken over');
    assert.equal(stats.shardRepairs, 0);
    assert.equal(stats.lostEntries, 0);
    for (let i = 0; i < 200; i++) assert.equal(cache.get(`bystander:${i}`), `value ${i}`);
    assert.deepEqual(cache.verify(), { ok: true, problems: [] });
  });
}

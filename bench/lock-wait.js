// npm run bench:lock-wait — how long calls wait for a shard lock that a
// live thread holds, when nobody is stopped: the measurement behind the
// default of options.lockWaitMs (lib/arena/common/layout.js DEFAULT_LOCK_WAIT_MS).
//
// More threads than cores (BENCH_THREADS, default 4 per core, half of them
// in a second process) set and get values of 64 B to 256 KiB in one
// file-backed cache (so the collector runs often, and a holder can be
// descheduled or collect garbage inside its critical section), while one
// more thread runs verify() (which holds each shard while it checks it)
// in a loop. Every call is timed; the table gives the slowest calls, which
// bound how long a call may have to wait for live holders that are not
// stopped (a call may wait for several holdings in a row; lockWaitMs bounds
// each one). Run once with automatic shards and once with a single shard
// (every call contends), with the default lockWaitMs: since nobody is
// stopped, every timeout counted is a call that gave up on a holder that
// was only slow (a set that gives up is counted, not thrown, here).
// Environment: BENCH_TIME_MS per configuration (10000), BENCH_THREADS,
// BENCH_JSON=path (or --json path).

import { fork } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { rmSync, writeFileSync } from 'node:fs';
import { createHistogram } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { SharedCache } from '../lib/index.js';
import { DEFAULT_LOCK_WAIT_MS } from '../lib/arena/common/layout.js';
import { jsonPath, positiveInt } from './lib/env.js';
import { printTable } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { seededRandom } from '../test/helpers/seeded-random.js';

const MiB = 2 ** 20;

/** One thread's loop: timed calls until `ms` have passed; returns the histogram's figures (µs). */
function hammer({ path, ms, seed, role }) {
  const cache = SharedCache.open(path, { nearCache: 0 });
  const histogram = createHistogram();
  const random = seededRandom(seed);
  const values = [64, 1024, 16 * 1024, 256 * 1024].map((size) => Buffer.alloc(size, seed));
  const end = performance.now() + ms;
  let calls = 0;
  while (performance.now() < end) {
    const started = performance.now();
    if (role === 'verify') {
      cache.verify();
    } else {
      const key = `k${Math.floor(random() * 4096)}`;
      if (random() < 0.5) {
        try {
          cache.set(key, values[Math.floor(random() * values.length)]);
        } catch (error) {
          if (error?.code !== 'ERR_ARENA_BUSY') throw error;
        }
      } else {
        cache.get(key);
      }
    }
    histogram.record(Math.max(1, Math.round((performance.now() - started) * 1000)));
    calls++;
  }
  cache.close();
  return { calls, maxUs: histogram.max, p999Us: histogram.percentile(99.9), p9999Us: histogram.percentile(99.99) };
}

async function runThreads(path, ms, threads, seedBase, withVerifier) {
  const roles = Array.from({ length: threads }, () => 'hammer');
  if (withVerifier) roles.push('verify');
  const workers = roles.map((role, i) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: { path, ms, seed: seedBase + i, role } });
    return once(worker, 'message').then(([result]) => ({ role, ...result }));
  });
  return Promise.all(workers);
}

async function configuration(name, options, ms, threads) {
  const path = `/dev/shm/arenacache-bench-lock-wait-${process.pid}.arena`;
  rmSync(path, { force: true });
  const cache = SharedCache.open(path, { memoryBytes: 64 * MiB, ...options });
  try {
    const half = Math.floor(threads / 2);
    const other = fork(new URL(import.meta.url), ['--party', JSON.stringify({ path, ms, threads: threads - half })]);
    const [[otherResults], here] = await Promise.all([once(other, 'message'), runThreads(path, ms, half, 1000, true)]);
    const results = [...here, ...otherResults];
    const stats = cache.stats();
    const hammers = results.filter((result) => result.role === 'hammer');
    const verifier = results.find((result) => result.role === 'verify');
    return {
      name,
      threads,
      calls: hammers.reduce((sum, result) => sum + result.calls, 0),
      maxMs: Math.max(...hammers.map((result) => result.maxUs)) / 1000,
      p9999Ms: Math.max(...hammers.map((result) => result.p9999Us)) / 1000,
      p999Ms: Math.max(...hammers.map((result) => result.p999Us)) / 1000,
      verifyMaxMs: verifier.maxUs / 1000,
      lockWaits: stats.lockWaits,
      lockRecoveries: stats.lockRecoveries,
      lockTimeouts: stats.lockTimeouts,
    };
  } finally {
    cache.close();
    rmSync(path, { force: true });
  }
}

async function main() {
  const ms = positiveInt('BENCH_TIME_MS', 10_000);
  const threads = positiveInt('BENCH_THREADS', 4 * availableParallelism());
  const json = jsonPath();
  console.log(describeMachine());
  const rows = [];
  for (const [name, options] of [
    ['automatic shards (64 MiB)', {}],
    ['one shard (64 MiB)', { shards: 1 }],
  ]) {
    rows.push(await configuration(name, options, ms, threads));
  }
  printTable(
    rows.map((row) => ({
      configuration: row.name,
      threads: row.threads,
      calls: row.calls,
      'p99.9 ms': row.p999Ms.toFixed(2),
      'p99.99 ms': row.p9999Ms.toFixed(2),
      'slowest call ms': row.maxMs.toFixed(1),
      'slowest verify() ms': row.verifyMaxMs.toFixed(1),
      'lock waits': row.lockWaits,
      [`timeouts (lockWaitMs ${DEFAULT_LOCK_WAIT_MS})`]: row.lockTimeouts,
      recoveries: row.lockRecoveries,
    })),
  );
  if (json) writeFileSync(json, `${JSON.stringify({ machine: describeMachine(), rows }, null, 2)}\n`);
}

if (!isMainThread) {
  parentPort.postMessage(hammer(workerData));
} else if (process.argv[2] === '--party') {
  const { path, ms, threads } = JSON.parse(process.argv[3]);
  const results = await runThreads(path, ms, threads, 2000, false);
  process.send(results);
  process.disconnect();
} else {
  await main();
}

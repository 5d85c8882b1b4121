// npm run demo:redis — issue 40's demo variant: 3 hosts x 4 worker threads on
// one Redis, Zipf-popular keys, served twice from the same request streams:
//
//   1. with the first tier   each host's workers read through a RedisTier:
//                            one SharedCache per host (an arena file of its
//                            own) in front of Redis, invalidated by Redis's
//                            client tracking, loading through tier.fetch()
//                            (one loader per key in the deployment);
//   2. without it            today's way: every request GETs from Redis, and
//                            on a miss runs the loader and SETs the value.
//
// The loader stands for the backend (it waits --load-ms and counts its
// calls). Redis's reads are counted by the server (INFO commandstats, reset
// before each run), not by the library. Throughput is all requests over the
// time from the start signal until the last worker finished; latency is per
// request, from its arrival to its answer.
//
// It starts a throwaway redis-server on a free loopback port and stops it
// at the end (also on an error or Ctrl-C), and deletes the arena files.
// Without redis-server it says so and exits.
//
// Flags (or environment): --hosts (DEMO_HOSTS, 3), --workers (DEMO_WORKERS,
// 4), --requests per worker (DEMO_REQUESTS, 2500), --keys (DEMO_KEYS, 2000),
// --alpha (DEMO_ALPHA, 0.99), --load-ms (DEMO_LOAD_MS, 1), --concurrency
// requests in flight per worker (DEMO_CONCURRENCY, 4), --json.

import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startRedisPeer } from '../../bench/lib/hot-redis.js';
import { summarizeLatency } from '../../bench/lib/latency.js';
import { formatRate, printTable } from '../../bench/lib/format.js';

const { values: flags } = parseArgs({
  options: {
    hosts: { type: 'string' },
    workers: { type: 'string' },
    requests: { type: 'string' },
    keys: { type: 'string' },
    alpha: { type: 'string' },
    'load-ms': { type: 'string' },
    concurrency: { type: 'string' },
    json: { type: 'boolean' },
  },
});

function setting(flag, env, fallback, check = (n) => Number.isInteger(n) && n > 0, what = 'a positive integer') {
  const raw = flags[flag] ?? process.env[env];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!check(value)) {
    console.error(`--${flag} (${env}) must be ${what} (got "${raw}")`);
    process.exit(2);
  }
  return value;
}

const options = {
  hosts: setting('hosts', 'DEMO_HOSTS', 3),
  workers: setting('workers', 'DEMO_WORKERS', 4),
  requests: setting('requests', 'DEMO_REQUESTS', 2500),
  keys: setting('keys', 'DEMO_KEYS', 2000),
  alpha: setting('alpha', 'DEMO_ALPHA', 0.99, (n) => Number.isFinite(n) && n > 0, 'a positive number'),
  loadMs: setting('load-ms', 'DEMO_LOAD_MS', 1, (n) => Number.isInteger(n) && n >= 0, 'an integer of 0 or more'),
  concurrency: setting('concurrency', 'DEMO_CONCURRENCY', 4),
  namespace: 'demo',
  memoryBytes: 16 * 2 ** 20,
  seed: 40,
};
const say = flags.json ? () => {} : (line) => console.log(line);

const server = await startRedisPeer();
if (server.reason) {
  console.log(`demo:redis skipped: ${server.reason}`);
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'arenacache-demo-redis-'));
const children = new Set();
// On Ctrl-C or an error: no host outlives this process, no arena file stays.
const cleanUp = () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
};
process.once('exit', cleanUp);

say(
  `redis-server ${server.version} on 127.0.0.1:${server.port}; ${options.hosts} hosts x ${options.workers} workers, ` +
    `${options.requests} requests each (${options.concurrency} in flight per worker), Zipf(${options.alpha}) over ${options.keys} keys, ` +
    `loader ${options.loadMs} ms\n`,
);

const admin = new Redis({ host: '127.0.0.1', port: server.port, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
admin.on('error', () => {});
const runs = [];
try {
  await admin.connect();
  for (const [mode, label] of [
    ['tier', 'with the first tier (RedisTier)'],
    ['plain', 'without (ioredis GET, loader + SET)'],
  ]) {
    if (!flags.json) process.stdout.write(`running: ${label}…`);
    const run = await runMode(mode);
    runs.push({ mode, label, ...run });
    if (!flags.json) process.stdout.write(` ${(run.elapsedMs / 1000).toFixed(2)} s\n`);
  }
} finally {
  admin.disconnect();
  cleanUp();
  process.off('exit', cleanUp);
  await server.stop();
}
report(runs);

/** Runs every host in `mode` on an empty Redis; resolves to the run's figures. */
async function runMode(mode) {
  await admin.flushall();
  await admin.config('RESETSTAT');
  const hosts = [];
  for (let host = 0; host < options.hosts; host++) {
    const child = fork(new URL('./host.js', import.meta.url), [JSON.stringify({ ...options, mode, port: server.port, host, path: join(dir, `host-${host}.arena`) })], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.add(child);
    const exited = once(child, 'exit');
    const messages = [];
    let wake = null;
    child.on('message', (message) => {
      messages.push(message);
      wake?.();
    });
    const next = async () => {
      while (messages.length === 0) {
        const arrived = new Promise((resolve) => {
          wake = resolve;
        });
        const ended = await Promise.race([arrived.then(() => null), exited]);
        if (ended !== null && messages.length === 0) throw new Error(`host ${host} exited with ${ended[0] ?? ended[1]}`);
      }
      return messages.shift();
    };
    hosts.push({ child, exited, next });
  }
  for (const { next } of hosts) if ((await next()) !== 'ready') throw new Error('a host did not start');
  const started = performance.now();
  for (const { child } of hosts) child.send('go');
  const reports = [];
  for (const { next } of hosts) reports.push(await next());
  const elapsedMs = performance.now() - started;
  const commands = await commandStats();
  for (const { child, exited } of hosts) {
    child.send('stop');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    children.delete(child);
  }
  const results = reports.flatMap((report) => report.results);
  return {
    elapsedMs,
    requests: results.reduce((sum, r) => sum + r.requests, 0),
    loaderCalls: results.reduce((sum, r) => sum + r.loaderCalls, 0),
    distinctKeys: new Set(results.flatMap((r) => r.keys)).size,
    errors: results.reduce((sum, r) => {
      for (const [code, n] of Object.entries(r.errors)) sum[code] = (sum[code] ?? 0) + n;
      return sum;
    }, {}),
    localHits: results.reduce((sum, r) => sum + r.localHits, 0),
    tierRedisReads: results.reduce((sum, r) => sum + r.redisReads, 0),
    lockWaits: results.reduce((sum, r) => sum + r.lockWaits, 0),
    latency: summarizeLatency(results.flatMap((r) => r.latencies)),
    localLatency: summarizeLatency(results.flatMap((r) => r.localLatencies)),
    otherLatency: summarizeLatency(results.flatMap((r) => r.otherLatencies)),
    commands,
  };
}

/** Calls per command since the last RESETSTAT, from INFO commandstats: { get: n, set: n, ... }. */
async function commandStats() {
  const info = await admin.info('commandstats');
  const calls = {};
  for (const [, name, count] of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[name] = Number(count);
  return calls;
}

function report(runs) {
  if (flags.json) {
    console.log(JSON.stringify({ options, runs: runs.map(({ latency, ...run }) => ({ ...run, latency })) }, null, 2));
    return;
  }
  const rows = runs.map((run) => {
    const reads = run.commands.get ?? 0;
    const all = Object.entries(run.commands).reduce((sum, [name, n]) => (name === 'info' || name.startsWith('config') ? sum : sum + n), 0);
    return {
      mode: run.label,
      requests: run.requests,
      'Redis GETs': reads,
      'GETs/request': (reads / run.requests).toFixed(3),
      'commands/request': (all / run.requests).toFixed(3),
      'loader calls': run.loaderCalls,
      'failed requests': Object.entries(run.errors).map(([code, n]) => `${n} ${code}`).join(', ') || '0',
      'requests/s': formatRate(run.requests / (run.elapsedMs / 1000)),
      'mean ms': (run.latency.avgUs / 1000).toFixed(3),
      'p50 ms': (run.latency.p50Us / 1000).toFixed(3),
      'p99 ms': (run.latency.p99Us / 1000).toFixed(3),
    };
  });
  console.log('');
  printTable(rows);
  const [tier, plain] = runs;
  const distinct = `(the streams asked for ${tier.distinctKeys} distinct keys: one load per key in the deployment is the least)`;
  console.log(
    `\nWith the first tier, ${tier.localHits} of ${tier.requests} requests (${((tier.localHits / tier.requests) * 100).toFixed(1)}%) were answered by their host's ` +
      `SharedCache without Redis;\nRedis served ${((plain.commands.get ?? 0) / Math.max(1, tier.commands.get ?? 0)).toFixed(1)}x fewer GETs than without it, and the loader ran ` +
      `${tier.loaderCalls} times against ${plain.loaderCalls} ${distinct}.\n` +
      'Commands per request count everything the server received (the tier also sends PTTL with each read, lock SET NX/EVAL around loads, ' +
      "and its holders' tracking PINGs, 10/s per host).",
  );
  // This script's own INFO and RESETSTAT are left out.
  const names = [...new Set(runs.flatMap((run) => Object.keys(run.commands)))].filter((name) => name !== 'info' && !name.startsWith('config')).sort();
  const ms = (us) => (us / 1000).toFixed(3);
  const split = [
    ['answered by the host\'s SharedCache', tier.localLatency],
    ['through Redis (and the loader)', tier.otherLatency],
  ].filter(([, latency]) => latency !== null);
  console.log(`\nWith the first tier, by where a request was answered (${tier.lockWaits} fetches waited for another host's load):`);
  printTable(split.map(([where, l]) => ({ requests: where, count: l.samples, 'mean ms': ms(l.avgUs), 'p50 ms': ms(l.p50Us), 'p99 ms': ms(l.p99Us), 'max ms': ms(l.maxUs) })));
  console.log('\nRedis commands by name (server-side counts):');
  printTable(runs.map((run) => ({ mode: run.mode, ...Object.fromEntries(names.map((name) => [name, run.commands[name] ?? 0])) })));
}

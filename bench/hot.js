// npm run bench:hot — the hot path under a skewed workload: string keys
// drawn from Zipf(0.99) in a seeded random order, every key held by every
// store, for three kinds of value (a small object, a 64 B Buffer, a 4 KiB
// string), all contenders in the same run:
//
//   1. one thread, 100% get and 90% get / 10% set: SharedCache with its near
//      cache and without, lru-cache, an lru-cache holding structuredClone
//      copies, a Map, lmdb, and Redis through ioredis (one await per
//      operation, and pipelines of 100), on a redis-server this script starts
//      on a free loopback port without persistence and stops at the end;
//   2. worker threads (64 B Buffer): aggregate get and set ops/s of 2
//      threads on one SharedCache against one thread;
//   3. near-cache memory per thread: heap and RSS deltas of a fresh worker
//      after reading the working set through its near cache, next to an
//      lru-cache holding the same entries.
//
// Each kind runs in a child process of its own (bench/scenarios/hot-kind.js).
// The near-cache rows need SharedCache's `nearCache` option, and the Redis
// rows redis-server (.ci/run installs it); without them they are skipped,
// with the reason printed.
//
// Environment: BENCH_KEYS (100000), BENCH_ZIPF (0.99), BENCH_ACCESSES
// (length of the precomputed access sequence, 1048576), BENCH_NEAR (near
// cache entries; unset: the near cache's default options), BENCH_KINDS (object,buffer,string), BENCH_MIXES
// (percent of gets, 100,90; 0 is all sets), BENCH_TIME_MS per task and round
// (300), BENCH_ROUNDS (3), BENCH_WORKERS (1,2), BENCH_WORKER_MS (1000),
// BENCH_QUICK=1 (10000 keys, 131072 accesses, 100 ms, one
// round, 300 ms workers), BENCH_REDIS=0 (skip the Redis rows),
// BENCH_JSON=path (or --json path).

import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { intList, jsonPath, nameList, percentList, positiveInt, positiveNumber } from './lib/env.js';
import { formatRate, printTable } from './lib/format.js';
import { roundRatios, SpreadTracker } from './lib/spread.js';
import { KINDS, nearCacheSupport } from './lib/hot-workload.js';
import { REDIS_ENCODING, REDIS_PIPELINE, startRedisPeer } from './lib/hot-redis.js';
import { describeMachine } from './lib/machine.js';
import { progressReporter } from './lib/progress.js';

const quick = process.env.BENCH_QUICK === '1';
const keys = positiveInt('BENCH_KEYS', quick ? 10_000 : 100_000);
const config = {
  keys,
  s: positiveNumber('BENCH_ZIPF', 0.99),
  accesses: positiveInt('BENCH_ACCESSES', quick ? 2 ** 17 : 2 ** 20),
  // The near cache as a user gets it (null: the default options), or with
  // BENCH_NEAR entries; lru-cache holds every key either way.
  nearCache: process.env.BENCH_NEAR === undefined ? null : positiveInt('BENCH_NEAR', keys),
  kinds: nameList('BENCH_KINDS', Object.keys(KINDS), Object.keys(KINDS)),
  mixes: percentList('BENCH_MIXES', [100, 90]),
  timeMs: positiveInt('BENCH_TIME_MS', quick ? 100 : 300),
  rounds: positiveInt('BENCH_ROUNDS', quick ? 1 : 3),
  workerCounts: intList('BENCH_WORKERS', [1, 2]),
  workerMs: positiveInt('BENCH_WORKER_MS', quick ? 300 : 1000),
  seed: 12345,
};
const json = jsonPath();
const { progress, done } = progressReporter();
const near = nearCacheSupport();

const childFile = fileURLToPath(new URL('./scenarios/hot-kind.js', import.meta.url));
const redis = await startRedisPeer();
function runKind(kind, sections) {
  const settings = { ...config, kind, sections, near: near.supported, redisPort: redis.port ?? null };
  // stderr is this process's, so the child's progress reaches the terminal
  // (and its errors the log); stdout carries its JSON line.
  const child = spawn(process.execPath, ['--expose-gc', childFile, JSON.stringify(settings)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  // Stopped with this process (SIGINT included), not left running against a stopped redis-server.
  const stopChild = () => child.kill('SIGKILL');
  process.once('exit', stopChild);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      process.off('exit', stopChild);
      if (code !== 0) reject(new Error(`bench/scenarios/hot-kind.js (${kind}) exited with ${signal ?? `code ${code}`}`));
      else resolve(JSON.parse(output.trim().split('\n').pop()));
    });
  });
}

const machine = describeMachine();
const results = [];
try {
  for (const kind of config.kinds) {
    progress(`${KINDS[kind].label}`);
    results.push(await runKind(kind, kind === 'buffer' ? ['memory', 'single', 'threads'] : ['memory', 'single']));
  }
  // The worker-thread section is for the 64 B Buffer, asked for or not.
  if (!config.kinds.includes('buffer')) results.push(await runKind('buffer', ['threads']));
} finally {
  await redis.stop?.();
}
done();

const labelOf = (kind) => KINDS[kind].label;
const mixLabel = (getPercent) => (getPercent === 100 ? '100% get' : getPercent === 0 ? '100% set' : `${getPercent}% get / ${100 - getPercent}% set`);
const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);

console.log(`arenacache hot-path benchmark — ${machine.cpu}, ${machine.cores} cores (load average ${machine.loadAverage[0].toFixed(2)} at the start), Node ${machine.node}, ${machine.date}`);
console.log(`Zipf s=${config.s} over ${config.keys} string keys, a seeded sequence of ${config.accesses} accesses; every store holds every key`);
console.log(`${config.rounds} round(s) of ${config.timeMs} ms per task (median shown); ratios are arenacache / peer, from the same run`);
if (near.supported) {
  console.log(
    config.nearCache === null
      ? 'near cache: the default options per SharedCache instance (arena+near: an instance attached without near-cache options; arena: nearCache 0)'
      : `near cache: nearCache ${config.nearCache} entries per SharedCache instance (arena+near: an instance attached with it; arena: nearCache 0)`,
  );
} else {
  console.log(`near cache: not supported by this SharedCache (${near.reason}); its rows are skipped`);
}
console.log("lmdb: noSync, uncompressed; objects in msgpack with shared structures (get), strings as 'string' (get), Buffers as 'binary' (getBinaryFast); a batch of 1000 mixed operations runs in one transactionSync");
console.log('lru+clone: an lru-cache that stores a structuredClone of each value at set and returns a structuredClone at get');
if (redis.port) {
  console.log(`redis: redis-server ${redis.version} on 127.0.0.1, no persistence, through ioredis; one await per operation (redis), or pipelines of ${REDIS_PIPELINE} (redis×${REDIS_PIPELINE}); ${REDIS_ENCODING}\n`);
} else {
  console.log(`redis: skipped (${redis.reason})\n`);
}

const spread = new SpreadTracker();
const singles = results.filter((r) => r.single).flatMap((r) => r.single.map((row) => ({ kind: r.kind, ...row })));
if (singles.length > 0) {
  const arenas = near.supported ? ['arenacache+near', 'arenacache'] : ['arenacache'];
  const peers = ['lru-cache', 'lru-cache+clone', 'Map', 'lmdb', ...(redis.port ? ['redis', 'redis pipelined'] : [])];
  const short = { 'arenacache+near': 'arena+near', arenacache: 'arena', 'lru-cache': 'lru', 'lru-cache+clone': 'lru+clone', Map: 'Map', lmdb: 'lmdb', redis: 'redis', 'redis pipelined': `redis×${REDIS_PIPELINE}` };
  console.log('Single thread (ops/s)');
  printTable(
    singles.map((row) => ({
      value: labelOf(row.kind),
      mix: mixLabel(row.getPercent),
      ...Object.fromEntries([...arenas, ...peers].map((name) => [short[name], formatRate(row.ops[name])])),
    })),
  );
  console.log("\nSingle thread, ratios arenacache / peer (each round's own; median, range in brackets; above 1, arenacache is faster)");
  const ratioOf = (row, a, b) => spread.ratio(roundRatios(row.samples[a], row.samples[b]));
  printTable(
    singles.flatMap((row) =>
      arenas.map((arena) => {
        const cells = { value: labelOf(row.kind), mix: mixLabel(row.getPercent), cache: short[arena] };
        for (const peer of peers) cells[`/${short[peer]}`] = ratioOf(row, arena, peer);
        if (near.supported) cells['/arena'] = arena === 'arenacache+near' ? ratioOf(row, 'arenacache+near', 'arenacache') : '-';
        return cells;
      }),
    ),
  );
  console.log('');
  spread.report(config.rounds, 'more BENCH_ROUNDS and a longer BENCH_TIME_MS');
}

console.log('\nSharedCache stats() at the end of each kind (the cache must hold every key: no evictions)');
printTable(
  results.map((r) => ({
    value: labelOf(r.kind),
    entries: r.stats.entries,
    evictions: r.stats.evictions,
    sets: r.stats.sets,
    gets: r.stats.gets,
    misses: r.stats.misses,
    'hit ratio': r.stats.hitRatio.toFixed(3),
    'live MiB': mib(r.stats.liveBytes),
    'memoryBytes MiB': mib(r.stats.memoryBytes),
  })),
);

const threads = results.find((r) => r.threads)?.threads ?? [];
if (threads.length > 0) {
  const first = config.workerCounts[0];
  console.log(`\nWorker threads, 64 B Buffer (aggregate ops/s, median of ${config.rounds} run(s) of ${config.workerMs} ms; ${machine.cores} cores)`);
  printTable(
    threads.map((row) => ({
      cache: row.store,
      op: row.op,
      threads: row.workers,
      'ops/s': formatRate(row.opsPerSecond),
      [`vs ${first} thread(s)`]: row.vsFirst.toFixed(2),
      'hit ratio': row.hitRatio === null ? '-' : row.hitRatio.toFixed(3),
    })),
  );
}

const memory = results.filter((r) => r.memory).flatMap((r) => r.memory.map((row) => ({ kind: r.kind, ...row })));
if (memory.length > 0) {
  console.log(`\nMemory per thread: a fresh worker each reads the ${config.accesses} accesses once; deltas after gc`);
  console.log('(RSS also counts heap pages V8 keeps after collecting evicted entries; the nearCache 0 row is the control: it keeps nothing)');
  printTable(
    memory.map((row) => ({
      value: labelOf(row.kind),
      store:
        row.store === 'arenacache'
          ? 'arenacache, nearCache 0'
          : row.store === 'arenacache+near'
            ? `arenacache, ${config.nearCache === null ? 'default near cache' : `nearCache ${config.nearCache}`}`
            : `lru-cache, max ${config.nearCache ?? config.keys}`,
      // What a near cache holds is not counted: at most its size, of the keys read.
      entries: row.store === 'arenacache+near' ? `≤ ${row.entries}` : row.entries,
      'heap Δ MiB': mib(row.heapDelta),
      'ArrayBuffer Δ MiB': mib(row.arrayBuffersDelta),
      'RSS Δ MiB': mib(row.rssDelta),
      'heap+AB B/entry': row.entries > 0 ? Math.round((row.heapDelta + row.arrayBuffersDelta) / row.entries) : '-',
    })),
  );
}

if (json) {
  writeFileSync(json, `${JSON.stringify({ machine, config, nearCache: { supported: near.supported, entries: config.nearCache, reason: near.reason }, redis: { supported: redis.port !== undefined, version: redis.version ?? null, pipeline: REDIS_PIPELINE, reason: redis.reason ?? null }, single: singles, worstSpread: spread.worst, stats: results.map((r) => ({ kind: r.kind, ...r.stats })), threads, memory }, null, 2)}\n`);
  console.log(`\nwrote ${json}`);
}

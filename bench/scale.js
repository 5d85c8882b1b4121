// npm run bench:scale — what a large cache costs: for each size (1 million
// and 10 million entries by default; 40 million with BENCH_SCALE_HUGE=1),
// one file-backed cache of 64 B values under string keys (`key:<i>`):
//
//   - fill rate: sets of every key into an empty cache, in order;
//   - random get rate: gets of keys drawn uniformly from the whole key space;
//   - bytes per entry: memoryBytes / entries held (the arena is sized from
//     the entry count), the record bytes stats() reports, and the RSS;
//   - cache.verify() time;
//   - SharedCache.open() of the file after a clean close, again after a
//     writer child process that had it open was killed (SIGKILL) mid-writes,
//     and again after one was killed inside a shard's lock:
//     the time open() takes, the longest event-loop block from just before
//     it until BENCH_SCALE_SETTLE_MS after it (a 5 ms interval's longest
//     gap), the first get after it, and how stats() says it recovered.
//
// The key strings are built inside the timed loops (`key:${i}`, as a
// service would), and a random key costs an xorshift step: both are in the
// rates, the same at every size. One run of each size: these are absolute
// figures of this machine, not same-run ratios, and on a shared machine
// they move by up to a factor of two between runs.
//
// Environment: BENCH_SCALE_ENTRIES (1e6,1e7), BENCH_SCALE_HUGE=1 (adds
// 4e7), BENCH_SCALE_GETS (random gets per size, 2e6), BENCH_SCALE_BYTES_PER_ENTRY
// (arena bytes per entry, 160), BENCH_SCALE_BACKING (file, or memory: a
// SharedArrayBuffer, without the reopen figures), BENCH_SCALE_DIR (the
// cache files' directory: /dev/shm, else the system temp directory),
// BENCH_SCALE_SETTLE_MS (200), BENCH_JSON=path (or --json path), and
// BENCH_CHART=path (or --chart path; default: next to the JSON) for an SVG
// chart.

import { spawn } from 'node:child_process';
import { existsSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SharedCache } from '../lib/index.js';
import { renderScaleChart } from './lib/chart.js';
import { intList, jsonPath, nameList, positiveInt } from './lib/env.js';
import { formatRate, printTable } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { progressReporter } from './lib/progress.js';

/** One name of `allowed` from the variable `name`, else `fallback`. */
function oneName(name, allowed, fallback) {
  const list = nameList(name, allowed, [fallback]);
  if (list.length !== 1) throw new RangeError(`${name} must be one of ${allowed.join(', ')} (got "${process.env[name]}")`);
  return list[0];
}

const sizes = [...intList('BENCH_SCALE_ENTRIES', [1e6, 1e7]), ...(process.env.BENCH_SCALE_HUGE === '1' ? [4e7] : [])];
const config = {
  sizes,
  gets: positiveInt('BENCH_SCALE_GETS', 2e6),
  // 1 million 64 B values under `key:<i>` took 104 B each of records
  // (stats().usedBytes) and held every entry in 128 B per entry of arena;
  // 160 leaves room for keys spreading unevenly over the shards.
  bytesPerEntry: positiveInt('BENCH_SCALE_BYTES_PER_ENTRY', 160),
  backing: oneName('BENCH_SCALE_BACKING', ['file', 'memory'], 'file'),
  dir: process.env.BENCH_SCALE_DIR || (existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir()),
  settleMs: positiveInt('BENCH_SCALE_SETTLE_MS', 200),
  valueBytes: 64,
};
const json = jsonPath();
const chartFlag = process.argv.indexOf('--chart');
const chartPath = chartFlag >= 0 ? process.argv[chartFlag + 1] : (process.env.BENCH_CHART ?? (json ? json.replace(/\.json$/, '') + '.svg' : null));
const { progress, done } = progressReporter();
const writerFile = fileURLToPath(new URL('./scenarios/scale-writer.js', import.meta.url));
const MIB = 2 ** 20;

// What an interrupted run leaves is cleaned up on the way out: the cache
// file and a writer child still running.
const cleanup = { file: null, child: null };
process.once('exit', () => {
  cleanup.child?.kill('SIGKILL');
  if (cleanup.file !== null) rmSync(cleanup.file, { force: true });
});
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

/** A process.cpuUsage() difference in milliseconds (user + system, all of this process's threads). */
const cpuMs = ({ user, system }) => (user + system) / 1000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** memoryBytes for `entries`: bytesPerEntry each, in whole MiB, at least 16 MiB. */
function arenaBytes(entries) {
  return Math.max(16 * MIB, Math.ceil((entries * config.bytesPerEntry) / MIB) * MIB);
}

/** Refuses to start a size whose arena would not fit where it goes, rather than failing mid-fill. */
function checkRoom(entries, memoryBytes) {
  const free = config.backing === 'file' ? Number(statfsSync(config.dir).bavail) * Number(statfsSync(config.dir).bsize) : os.freemem();
  if (free < memoryBytes * 1.1) {
    const where = config.backing === 'file' ? `${config.dir} has` : 'the machine has';
    throw new Error(`bench:scale: ${entries} entries need ${Math.round(memoryBytes / MIB)} MiB, and ${where} ${Math.round(free / MIB)} MiB free; set fewer BENCH_SCALE_ENTRIES${config.backing === 'file' ? ' or another BENCH_SCALE_DIR' : ''}`);
  }
}

/**
 * How the last open recovered, as stats() says. THE place to read the field
 * the warm-restart work adds to stats() (issue 38, item 1: `lastOpen` or
 * the like): until it exists, the file's recovery counters (totals since
 * the file was made) are shown instead.
 */
function openRecovery(stats) {
  if (stats.lastOpen !== undefined) return stats.lastOpen;
  const { shardRepairs, lostEntries, checksumFailures, lockRecoveries, threadSlotRepairs } = stats;
  return { shardRepairs, lostEntries, checksumFailures, lockRecoveries, threadSlotRepairs };
}

/** One line of `key value` pairs; `at` (a clock time) is left out, fractions get two decimals. */
function describeRecovery(recovery) {
  if (typeof recovery !== 'object' || recovery === null) return String(recovery);
  const text = (value) => (typeof value === 'number' && !Number.isInteger(value) ? value.toFixed(2) : typeof value === 'object' ? JSON.stringify(value) : value);
  return Object.entries(recovery)
    .filter(([key]) => key !== 'at')
    .map(([key, value]) => `${key} ${text(value)}`)
    .join(', ');
}

/** Starts a probe of the event loop: stop() answers the longest gap between ticks of a 5 ms interval, beyond the 5 ms. */
function loopProbe() {
  const interval = 5;
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - interval);
    last = now;
  }, interval);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(longest, performance.now() - last - interval, 0);
    },
  };
}

/**
 * SharedCache.open(file), timed, with the event loop probed from before it
 * until settleMs after it (a check that runs later, lazily or in the
 * background, shows there), and the first get after it timed. The cache
 * is left open, as `cache`.
 */
async function timedOpen(file, entries) {
  const probe = loopProbe();
  await sleep(20);
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  const cache = SharedCache.open(file, { nearCache: 0 });
  const openMs = performance.now() - start;
  const openCpuMs = cpuMs(process.cpuUsage(cpuStart));
  const getStart = performance.now();
  const found = cache.get(`key:${entries >>> 1}`) !== undefined;
  const firstGetMs = performance.now() - getStart;
  await sleep(config.settleMs);
  const blockMs = probe.stop();
  const stats = cache.stats();
  return { cache, openMs, openCpuMs, blockMs, firstGetMs, found, entries: stats.entries, recovery: openRecovery(stats) };
}

/**
 * Starts the writer on `file` while `holder` (this process's cache) has it
 * open, so that the writer's open() is not the sole opener's (which would
 * cost as much as the one measured); closes `holder` once the writer is
 * writing, so that the writer is the file's only user when it is killed
 * (SIGKILL) mid-writes. In `mode` 'in-lock' the writer waits inside shard
 * 0's lock instead: the kill then leaves that shard to rebuild.
 */
async function killWriterMidWrites(file, entries, holder, mode = 'writes') {
  const child = spawn(process.execPath, [writerFile, file, String(entries), mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanup.child = child;
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let output = '';
  const writing = new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      output += chunk;
      if (output.includes('writing\n')) resolve();
    });
    exited.then(({ code, signal }) => reject(new Error(`bench/scenarios/scale-writer.js exited with ${signal ?? `code ${code}`} before writing`)));
  });
  await writing;
  holder.close();
  // Well into its writes, so that a shard lock is likely held at the kill.
  await sleep(100);
  child.kill('SIGKILL');
  const { signal } = await exited;
  cleanup.child = null;
  if (signal !== 'SIGKILL') throw new Error(`the writer was to be killed mid-writes, but it exited by itself (${signal})`);
}

async function measureSize(entries) {
  const memoryBytes = arenaBytes(entries);
  checkRoom(entries, memoryBytes);
  const label = `${entries} entries`;
  const file = config.backing === 'file' ? path.join(config.dir, `arenacache-bench-scale-${process.pid}-${entries}.arena`) : null;
  cleanup.file = file;
  const options = { memoryBytes, max: entries, nearCache: 0 };
  try {
    const row = { entries, memoryBytes };
    progress(`${label}: opening`);
    const cache = file === null ? new SharedCache(options) : SharedCache.open(file, options);
    const value = Buffer.alloc(config.valueBytes, 0x61);

    progress(`${label}: filling`);
    let start = performance.now();
    for (let i = 0; i < entries; i++) {
      value.writeUInt32LE(i, 0);
      cache.set(`key:${i}`, value);
    }
    row.fillPerSecond = entries / ((performance.now() - start) / 1000);
    const filled = cache.stats();
    if (filled.entries !== entries || filled.evictions !== 0) {
      throw new Error(`bench:scale: the cache of ${entries} entries holds ${filled.entries} with ${filled.evictions} evictions; give it more BENCH_SCALE_BYTES_PER_ENTRY than ${config.bytesPerEntry}`);
    }

    progress(`${label}: random gets`);
    let state = 0x2545f491;
    let hits = 0;
    start = performance.now();
    for (let n = 0; n < config.gets; n++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      if (cache.get(`key:${(state >>> 0) % entries}`) !== undefined) hits++;
    }
    row.getPerSecond = config.gets / ((performance.now() - start) / 1000);
    if (hits !== config.gets) throw new Error(`bench:scale: ${config.gets - hits} of ${config.gets} random gets missed in a cache holding every key`);

    progress(`${label}: verify()`);
    start = performance.now();
    const verifyCpu = process.cpuUsage();
    const { ok, problems } = cache.verify();
    row.verifyMs = performance.now() - start;
    row.verifyCpuMs = cpuMs(process.cpuUsage(verifyCpu));
    if (!ok) throw new Error(`bench:scale: verify() found problems after the fill: ${problems.slice(0, 5).join('; ')}`);

    const stats = cache.stats();
    row.usedBytes = stats.usedBytes;
    row.liveBytes = stats.liveBytes;
    row.shards = stats.shards;
    row.rssBytes = process.memoryUsage.rss();
    cache.close();

    if (file !== null) {
      progress(`${label}: reopening after a clean close`);
      const { cache: reopened, ...clean } = await timedOpen(file, entries);
      row.clean = clean;
      progress(`${label}: a writer killed mid-writes`);
      await killWriterMidWrites(file, entries, reopened);
      progress(`${label}: reopening after the kill`);
      const { cache: recovered, ...killed } = await timedOpen(file, entries);
      row.killed = killed;
      progress(`${label}: a writer killed inside a shard's lock`);
      await killWriterMidWrites(file, entries, recovered, 'in-lock');
      progress(`${label}: reopening after that kill`);
      const { cache: rebuilt, ...inLock } = await timedOpen(file, entries);
      rebuilt.close();
      row.inLock = inLock;
      // After the kill, the entries the writer was overwriting may be lost
      // (the table shows how many are held); after a clean close, none.
      if (!row.clean.found || row.clean.entries !== entries) {
        throw new Error(`bench:scale: reopened after a clean close, the cache of ${entries} entries holds ${row.clean.entries}${row.clean.found ? '' : ' and missed its first get'}`);
      }
    }
    return row;
  } finally {
    if (file !== null) rmSync(file, { force: true });
    cleanup.file = null;
  }
}

const machine = describeMachine();
const began = performance.now();
const rows = [];
for (const entries of config.sizes) rows.push(await measureSize(entries));
const elapsedS = (performance.now() - began) / 1000;
done();

const ms = (value) => (value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(value < 10 ? 2 : 0)} ms`);
const where = config.backing === 'file' ? `a file in ${config.dir} (SharedCache.open)` : 'a SharedArrayBuffer (new SharedCache)';
console.log(`arenacache scale benchmark — ${machine.cpu}, ${machine.cores} cores (load average ${machine.loadAverage[0].toFixed(2)} at the start), Node ${machine.node}, ${machine.date}`);
console.log(`${config.valueBytes} B Buffer values under string keys key:<i>, in ${where}; memoryBytes ${config.bytesPerEntry} B per entry, max = entries, nearCache 0`);
console.log(`${formatRate(config.gets)} random gets per size; one run of each size, ${elapsedS.toFixed(0)} s in all: absolute figures of this machine, which move by up to 2x between runs on a shared one\n`);

printTable(
  rows.map((row) => ({
    entries: formatRate(row.entries),
    'memoryBytes MiB': Math.round(row.memoryBytes / MIB),
    shards: row.shards,
    'B/entry': (row.memoryBytes / row.entries).toFixed(0),
    'used B/entry': (row.usedBytes / row.entries).toFixed(0),
    'RSS MiB': Math.round(row.rssBytes / MIB),
    'fill sets/s': formatRate(row.fillPerSecond),
    'random gets/s': formatRate(row.getPerSecond),
    'verify()': ms(row.verifyMs),
    'verify() CPU': ms(row.verifyCpuMs),
  })),
);
console.log('(B/entry: memoryBytes / entries held; used: the records, stats().usedBytes; RSS: the whole process, with the mapped arena pages it touched;');
console.log(' CPU: the process CPU time it took, which a loaded machine stretches less than the elapsed time)');

const reopened = rows.filter((row) => row.clean);
if (reopened.length > 0) {
  console.log(`\nSharedCache.open() of the file as its only user: after a clean close, after SIGKILL of a writer child mid-writes, and after SIGKILL of one inside a shard's lock`);
  console.log(`(longest event-loop block: from before open() until ${config.settleMs} ms after it; first get: one get right after open())`);
  printTable(
    reopened.flatMap((row) =>
      [
        ['clean close', row.clean],
        ['SIGKILL of a writer', row.killed],
        ['SIGKILL inside a lock', row.inLock],
      ].map(([after, r]) => ({ entries: formatRate(row.entries), after, 'open()': ms(r.openMs), 'open() CPU': ms(r.openCpuMs), 'longest block': ms(r.blockMs), 'first get': ms(r.firstGetMs), 'entries held': r.entries, 'per entry': `${((r.openMs * 1000) / row.entries).toFixed(3)} µs` })),
    ),
  );
  console.log('\nHow each open recovered (stats()):');
  for (const row of reopened) {
    console.log(`  ${formatRate(row.entries)}, clean close: ${describeRecovery(row.clean.recovery)}`);
    console.log(`  ${formatRate(row.entries)}, SIGKILL of a writer: ${describeRecovery(row.killed.recovery)}`);
    console.log(`  ${formatRate(row.entries)}, SIGKILL inside a lock: ${describeRecovery(row.inLock.recovery)}`);
  }
}

// A chart in the terminal: each bar's length is its share of the longest
// of its measure (the measures are milliseconds to seconds apart).
const bars = [
  ...rows.map((row) => ({ what: 'verify()', entries: row.entries, ms: row.verifyMs })),
  ...reopened.map((row) => ({ what: 'open() after a clean close', entries: row.entries, ms: row.clean.openMs })),
  ...reopened.map((row) => ({ what: 'open() after SIGKILL of a writer', entries: row.entries, ms: row.killed.openMs })),
  ...reopened.map((row) => ({ what: 'open() after SIGKILL inside a shard lock', entries: row.entries, ms: row.inLock.openMs })),
];
console.log('\nTimes by size (each measure scaled to its own longest)');
for (const what of new Set(bars.map((bar) => bar.what))) {
  console.log(`  ${what}`);
  const measure = bars.filter((b) => b.what === what);
  const longest = Math.max(...measure.map((bar) => bar.ms));
  for (const bar of measure) {
    console.log(`    ${formatRate(bar.entries).padStart(7)}  ${'█'.repeat(Math.max(1, Math.round((bar.ms / longest) * 50)))} ${ms(bar.ms)}`);
  }
}

if (json) {
  writeFileSync(json, `${JSON.stringify({ machine, config, elapsedS, rows }, null, 2)}\n`);
  console.log(`\nwrote ${json}`);
}
if (chartPath) {
  const rates = rows.flatMap((row) => [
    { entries: row.entries, what: 'fill (sets/s)', perSecond: row.fillPerSecond },
    { entries: row.entries, what: 'random gets/s', perSecond: row.getPerSecond },
  ]);
  const times = [
    ...bars,
    ...reopened.flatMap((row) => [
      { entries: row.entries, what: 'event-loop block, clean close', ms: row.clean.blockMs },
      { entries: row.entries, what: 'event-loop block, SIGKILL', ms: row.killed.blockMs },
    ]),
  ];
  writeFileSync(chartPath, await renderScaleChart({ rates, times, title: `arenacache bench:scale ${machine.date.slice(0, 10)}: ${machine.cpu}, ${machine.cores} cores` }));
  console.log(`wrote ${chartPath}`);
}

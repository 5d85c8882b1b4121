// npm run bench:snapshot — workspace snapshots against copying the tree, in
// one run, side by side on ext4 (the system temp directory) and on a
// loop-mounted XFS made with reflink=1 (when this process is root and
// mkfs.xfs is installed; otherwise the XFS rows are skipped, saying why).
//
// For each tree (1000x1KB, 10000x1KB, 1x10MB, source: 500 files of mixed
// sizes totalling 10 MiB in nested directories, deep: 10 levels x 10 files):
//   snapshot         first snapshot of a fresh workspace ({ durable: false };
//                    10000x1KB also with durable: true)
//   re-snapshot      a second snapshot of the unchanged tree
//   cloneTree        arenacache's native tree clone into a new directory
//   cp -a            /bin/cp -a --reflink=auto into a new directory (spawnSync,
//                    so one process start is included)
//   fs.promises.cp   recursive, preserveTimestamps, verbatimSymlinks
// and the ratios of each to cp -a in the same run. Then verify throughput:
// workspace.verify(id) (SHA-256 of every stored file on native threads)
// against one sha256sum process over the same files of the worktree, on
// ext4, warm page cache (both read once before timing).
//
// How the numbers are taken: tinybench, one Bench per round with every task
// run once (iterations: 1, time: 0, no warmup), so rounds interleave the
// tasks and drifts of machine speed hit all alike; the table shows the median
// of the rounds. Each timed call gets a fresh target, made ready in
// tinybench's beforeEach hook, outside the timed part: a new destination
// directory per copy; for snapshot, a new copy of the tree (cp -a
// --reflink=never) made a workspace with Workspace.init, so init is not
// timed; for re-snapshot, that plus the first snapshot and a 50 ms wait (the
// library does not trust the stat keys of files changed within the
// filesystem clock's tick). beforeEach ends with sync(1), so that writeback
// of earlier files does not land in the timed call. Nothing is deleted until
// the run is over: on ext4, creating files within a minute or so of deleting
// many makes the inode allocator check every recently deleted inode
// (recently_deleted() under ext4_create), which in trials here slowed cp -a
// of 10000x1KB from 0.1 s to 1-2.5 s, and would flatter whatever creates
// fewer files. File contents are a seeded AES-CTR keystream: nothing
// compresses or dedupes by accident, and every run writes the same trees.
// One untimed call of each copier on a tiny tree warms up first.
//
// Environment: BENCH_ROUNDS (3), BENCH_SCALE (1: divides every file count
// and size, for smoke tests), BENCH_TREES (all: a comma-separated subset of
// 1000x1KB,10000x1KB,1x10MB,source,deep), BENCH_VERIFY_TREES
// (source,1x10MB,verify-200MB), BENCH_XFS (1; 0 skips the XFS rows),
// BENCH_XFS_SIZE (4G: the sparse image), BENCH_DIR (the system temp
// directory), BENCH_JSON=path (or --json path).

import { spawnSync } from 'node:child_process';
import { createCipheriv, createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cp as fsCp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Bench } from 'tinybench';
import { cloneTree, defaults, Workspace } from '../lib/snapshot/index.js';
import { jsonPath, positiveInt } from './lib/env.js';
import { printTable, ratio } from './lib/format.js';
import { describeMachine } from './lib/machine.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { median } from './lib/stats.js';
import { progressReporter } from './lib/progress.js';

const { progress, done: clearProgress } = progressReporter();

const TREES = ['1000x1KB', '10000x1KB', '1x10MB', 'source', 'deep'];
const VERIFY_TREES = ['source', '1x10MB', 'verify-200MB'];
const KiB = 1024;
const MiB = 1024 * KiB;

/** A comma-separated list of names from `allowed`, or all of them. */
function nameList(name, allowed) {
  const raw = process.env[name];
  if (!raw) return allowed;
  const list = raw.split(',').map((part) => part.trim()).filter(Boolean);
  const unknown = list.filter((item) => !allowed.includes(item));
  if (list.length === 0 || unknown.length > 0) throw new RangeError(`${name} must be a comma-separated subset of ${allowed.join(',')} (got "${raw}")`);
  return allowed.filter((item) => list.includes(item));
}

const config = {
  rounds: positiveInt('BENCH_ROUNDS', 3),
  scale: positiveInt('BENCH_SCALE', 1),
  trees: nameList('BENCH_TREES', TREES),
  verifyTrees: nameList('BENCH_VERIFY_TREES', VERIFY_TREES),
  xfs: process.env.BENCH_XFS !== '0',
  xfsSize: process.env.BENCH_XFS_SIZE || '4G',
  dir: process.env.BENCH_DIR ?? os.tmpdir(),
  threads: defaults.threads,
};
const json = jsonPath();
const scratch = mkdtempSync(path.join(config.dir, 'arenacache-snapshot-bench-'));
const machine = describeMachine();
const count = (n) => Math.max(1, Math.ceil(n / config.scale));
const bytes = (n) => Math.max(1, Math.round(n / config.scale));

// ---------------------------------------------------------------- trees

/** The files of tree `name`: [{ path, size }] (relative paths). */
function treeFiles(name) {
  switch (name) {
    case '1000x1KB':
      return spread(count(1000), Math.min(10, count(1000)), bytes(KiB));
    case '10000x1KB':
      return spread(count(10_000), Math.min(100, count(10_000)), bytes(KiB));
    case '1x10MB':
      return [{ path: 'big.bin', size: bytes(10 * MiB) }];
    case 'verify-200MB':
      return Array.from({ length: count(20) }, (_, i) => ({ path: `blob-${i}.bin`, size: bytes(10 * MiB) }));
    case 'deep': {
      const files = [];
      let dir = '';
      for (let level = 1; level <= 10; level++) {
        dir = path.join(dir, `level${level}`);
        for (let i = 0; i < count(10); i++) files.push({ path: path.join(dir, `f${i}.txt`), size: bytes(KiB) });
      }
      return files;
    }
    case 'source':
      return sourceTree();
    default:
      throw new Error(`unknown tree ${name}`);
  }
}

/** `files` files of `size` bytes round-robin over `dirs` directories. */
function spread(files, dirs, size) {
  return Array.from({ length: files }, (_, i) => ({ path: `d${i % dirs}/f${i}`, size }));
}

/**
 * A mixed "source tree" (seeded): 500 files totalling 10 MiB, most of 1-30
 * KiB (skewed small), a few of 0.5-2 MiB taking the rest, in directories
 * nested 1 to 4 deep.
 */
function sourceTree() {
  const random = seededRandom(20_240_601);
  const names = ['src', 'lib', 'test', 'core', 'util', 'api', 'internal', 'fixtures', 'docs', 'vendor', 'pkg', 'cmd'];
  const extensions = ['js', 'ts', 'json', 'md', 'c', 'h', 'css'];
  const pick = (list) => list[Math.floor(random() * list.length)];
  const dirs = [];
  for (let i = 0; i < count(60); i++) {
    const parents = dirs.filter((dir) => dir.depth < 4);
    const parent = i === 0 || random() < 0.25 ? null : pick(parents);
    dirs.push({ path: parent ? path.join(parent.path, `${pick(names)}${i}`) : `${pick(names)}${i}`, depth: parent ? parent.depth + 1 : 1 });
  }
  const total = bytes(10 * MiB);
  const fileCount = count(500);
  const largeCount = fileCount >= 100 ? Math.max(1, Math.round(fileCount / 125)) : 1;
  const smallCount = fileCount - largeCount;
  const small = Array.from({ length: smallCount }, () => bytes(KiB + Math.floor(29 * KiB * random() ** 2)));
  const remainder = Math.max(largeCount, total - small.reduce((sum, size) => sum + size, 0));
  const weights = Array.from({ length: largeCount }, () => 0.7 + 0.6 * random());
  const weightSum = weights.reduce((sum, w) => sum + w, 0);
  const large = weights.map((w) => Math.min(bytes(2 * MiB), Math.max(bytes(MiB / 2), Math.round((remainder * w) / weightSum))));
  const sizes = [...small, ...large];
  // Shuffle so the large files land anywhere in the tree.
  for (let i = sizes.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [sizes[i], sizes[j]] = [sizes[j], sizes[i]];
  }
  return sizes.map((size, i) => ({ path: path.join(pick(dirs).path, `file${i}.${size >= bytes(MiB / 2) ? 'bin' : pick(extensions)}`), size }));
}

/** Writes tree `name` at `root` with seeded random contents (the same bytes in every run and on every filesystem). */
function writeTree(root, name) {
  const key = createHash('sha256').update(`arenacache-snapshot-bench:${name}`).digest();
  const keystream = createCipheriv('aes-256-ctr', key, Buffer.alloc(16));
  const files = treeFiles(name);
  for (const file of files) {
    const full = path.join(root, file.path);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, keystream.update(Buffer.alloc(file.size)));
  }
  return { files: files.length, bytes: files.reduce((sum, file) => sum + file.size, 0), paths: files.map((file) => file.path) };
}

// ---------------------------------------------------------------- helpers

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'pipe'], ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}: ${String(result.stderr).trim()}`);
}

const settle = () => run('sync', []);
/** A real copy of `src` at `dst` (never sharing extents with it). */
const copyOf = (src, dst) => run('/bin/cp', ['-a', '--reflink=never', src, dst]);
const remove = (dir) => rmSync(dir, { recursive: true, force: true });
const cpA = (src, dst) => run('/bin/cp', ['-a', '--reflink=auto', src, dst]);
const nodeCp = (src, dst) => fsCp(src, dst, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true });

/**
 * Runs `tasks` ({ name: { fn, beforeEach, afterEach } }) config.rounds
 * times, every task once per round; the median time in ms per task.
 */
async function measure(title, tasks, rounds = config.rounds) {
  const samples = Object.fromEntries(Object.keys(tasks).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    progress(`${title}, round ${round + 1}/${rounds}`);
    const bench = new Bench({ iterations: 1, time: 0, warmup: false });
    for (const [name, { fn, beforeEach, afterEach }] of Object.entries(tasks)) bench.add(name, fn, { async: true, beforeEach, afterEach });
    await bench.run();
    for (const task of bench.tasks) {
      if (task.result.state !== 'completed') throw new Error(`${title}/${task.name} did not complete: ${task.result.state}`, { cause: task.result.error });
      samples[task.name].push(task.result.latency.mean);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([name, values]) => [name, median(values)]));
}

// ---------------------------------------------------------------- one filesystem

/** Every tree of config.trees on the filesystem holding `base`: { <tree>: row }. */
async function filesystemRows(label, base) {
  const rows = {};
  for (const name of config.trees) {
    progress(`${label}: writing ${name}`);
    const src = path.join(base, 'trees', name);
    const tree = writeTree(src, name);
    // Every call gets new directories under `fresh`; none is deleted before the end of the run.
    const fresh = path.join(base, 'fresh', name);
    mkdirSync(fresh, { recursive: true });
    let serial = 0;
    let target = null;
    const freshTarget = {
      beforeEach: () => {
        target = path.join(fresh, `target-${serial++}`);
        settle();
      },
    };
    let workspace = null;
    const freshWorkspace = async () => {
      const worktree = path.join(fresh, `worktree-${serial++}`);
      copyOf(src, worktree);
      workspace = await Workspace.init(worktree, { durable: false });
    };
    const last = {};
    const snapshotTask = (durable) => ({
      beforeEach: async () => {
        await freshWorkspace();
        await sleep(50);
        settle();
      },
      fn: async () => {
        last[durable ? 'durable' : 'first'] = await workspace.snapshot({ durable });
      },
    });
    const tasks = {
      'cp -a': { ...freshTarget, fn: async () => cpA(src, target) },
      'fs.promises.cp': { ...freshTarget, fn: async () => nodeCp(src, target) },
      cloneTree: {
        ...freshTarget,
        fn: async () => {
          last.clone = await cloneTree(src, target);
        },
      },
      snapshot: snapshotTask(false),
      ...(name === '10000x1KB' ? { 'snapshot durable': snapshotTask(true) } : {}),
      're-snapshot': {
        beforeEach: async () => {
          await freshWorkspace();
          await sleep(50);
          await workspace.snapshot({ durable: false });
          await sleep(50);
          settle();
        },
        fn: async () => {
          last.second = await workspace.snapshot({ durable: false });
        },
      },
    };
    const times = await measure(`${label}: ${name} (${tree.files} files)`, tasks);
    for (const descriptor of [last.first, last.second, last.durable].filter(Boolean)) {
      if (descriptor.files !== tree.files || descriptor.bytes !== tree.bytes) throw new Error(`${label}/${name}: a snapshot holds ${descriptor.files} files, ${descriptor.bytes} bytes; the tree ${tree.files}, ${tree.bytes}`);
    }
    if (last.clone.files !== tree.files || last.clone.bytes !== tree.bytes) throw new Error(`${label}/${name}: cloneTree copied ${last.clone.files} files, ${last.clone.bytes} bytes`);
    const row = {
      files: tree.files,
      bytes: tree.bytes,
      snapshotMs: times.snapshot,
      ...(times['snapshot durable'] !== undefined ? { snapshotDurableMs: times['snapshot durable'] } : {}),
      resnapshotMs: times['re-snapshot'],
      cloneTreeMs: times.cloneTree,
      cpMs: times['cp -a'],
      fsCpMs: times['fs.promises.cp'],
      engine: last.first.engine.used,
      counts: last.first.engine.counts,
      degraded: last.first.engine.degraded,
      resnapshotCounts: last.second.engine.counts,
      cloneTreeEngine: last.clone.engine.used,
      cloneTreeCounts: last.clone.engine.counts,
      ratios: {
        snapshotVsCp: times.snapshot / times['cp -a'],
        ...(times['snapshot durable'] !== undefined ? { snapshotDurableVsCp: times['snapshot durable'] / times['cp -a'] } : {}),
        cloneTreeVsCp: times.cloneTree / times['cp -a'],
        fsCpVsCp: times['fs.promises.cp'] / times['cp -a'],
        resnapshotSpeedup: times.snapshot / times['re-snapshot'],
      },
    };
    rows[name] = row;
  }
  return rows;
}

// ---------------------------------------------------------------- XFS

/** Makes and loop-mounts a reflink XFS under `base`: { mountPoint, unmount } or { skipped: reason }. */
function mountXfs(base) {
  if (!config.xfs) return { skipped: 'BENCH_XFS=0' };
  if (process.getuid?.() !== 0) return { skipped: 'needs root to loop-mount an XFS image with reflink=1' };
  const image = path.join(base, 'xfs.img');
  const mountPoint = path.join(base, 'mnt');
  mkdirSync(mountPoint, { recursive: true });
  try {
    run('truncate', ['-s', config.xfsSize, image]);
    run('mkfs.xfs', ['-q', '-m', 'reflink=1', image]);
    run('mount', ['-o', 'loop', image, mountPoint]);
  } catch (error) {
    remove(base);
    const reason = error.code === 'ENOENT' ? `${error.path} is not installed (apt-get install xfsprogs)` : error.message;
    return { skipped: `cannot make a reflink XFS on this machine: ${reason}` };
  }
  let mounted = true;
  return {
    mountPoint,
    unmount() {
      if (!mounted) return true;
      mounted = false;
      try {
        run('umount', [mountPoint]);
      } catch {
        try {
          run('umount', ['-l', mountPoint]);
        } catch (error) {
          process.stderr.write(`\ncould not unmount ${mountPoint}: ${error.message}; leaving ${base} in place\n`);
          return false;
        }
      }
      return true; // the image goes with the scratch directory at the end
    },
  };
}

// ---------------------------------------------------------------- verify

async function verifyRows(base) {
  const rows = {};
  for (const name of config.verifyTrees) {
    progress(`verify: writing ${name}`);
    const root = path.join(base, name);
    const tree = writeTree(root, name);
    const workspace = await Workspace.init(root, { durable: false });
    const { id } = await workspace.snapshot({ durable: false });
    // One sha256sum per chunk of paths (relative to the tree, in the tree).
    const chunks = [];
    for (let i = 0; i < tree.paths.length; i += 1000) chunks.push(tree.paths.slice(i, i + 1000));
    const sha256sum = () => chunks.forEach((chunk) => run('sha256sum', ['--', ...chunk], { cwd: root }));
    const ours = async () => {
      const report = await workspace.verify(id);
      if (!report.ok || report.files !== tree.files || report.bytes !== tree.bytes) throw new Error(`verify ${name}: ${JSON.stringify(report).slice(0, 300)}`);
    };
    await ours(); // warm page cache: both read everything once
    sha256sum();
    settle();
    // A verify of 10 MB takes milliseconds, so one sample is mostly noise:
    // three times the rounds here (at least 9), still interleaved with sha256sum.
    const times = await measure(`verify: ${name}`, { 'workspace.verify': { fn: ours }, sha256sum: { fn: async () => sha256sum() } }, Math.max(9, 3 * config.rounds));
    const oursMBps = tree.bytes / 1e3 / times['workspace.verify'];
    const sha256sumMBps = tree.bytes / 1e3 / times.sha256sum;
    rows[name] = { files: tree.files, bytes: tree.bytes, oursMs: times['workspace.verify'], sha256sumMs: times.sha256sum, oursMBps, sha256sumMBps, ratio: oursMBps / sha256sumMBps };
  }
  return rows;
}

// ---------------------------------------------------------------- warm up

/** One untimed call of each copier on a tiny tree: native thread pool, JIT, module loading. */
async function warmUp(base) {
  const src = path.join(base, 'src');
  writeTree(src, 'deep');
  await cloneTree(src, path.join(base, 'clone'));
  cpA(src, path.join(base, 'cp'));
  await nodeCp(src, path.join(base, 'fscp'));
  const workspace = await Workspace.init(path.join(base, 'cp'), { durable: false });
  await workspace.snapshot({ durable: false });
  await workspace.verify(workspace.head);
}

// ---------------------------------------------------------------- main

const results = { machine, config, ext4: null, xfs: null, xfsSkipped: null, verify: null };
let xfs = null;
const cleanUp = () => {
  const unmounted = xfs?.unmount?.() ?? true;
  if (unmounted) remove(scratch);
  clearProgress();
};
process.once('SIGINT', () => {
  cleanUp();
  process.exit(130);
});
let ext4Type = 'unknown';
try {
  const found = spawnSync('findmnt', ['-n', '-o', 'FSTYPE', '-T', config.dir], { encoding: 'utf8' });
  if (found.status === 0) ext4Type = found.stdout.trim();
} catch {
  // No findmnt: the report says 'unknown'.
}
try {
  progress('warming up');
  await warmUp(path.join(scratch, 'warm-up'));
  results.ext4 = await filesystemRows('ext4', path.join(scratch, 'ext4'));
  xfs = mountXfs(path.join(scratch, 'xfs'));
  if (xfs.skipped) {
    results.xfsSkipped = xfs.skipped;
    xfs = null;
  } else {
    results.xfs = await filesystemRows('xfs', path.join(xfs.mountPoint, 'bench'));
    xfs.unmount();
    xfs = null;
  }
  results.verify = await verifyRows(path.join(scratch, 'verify'));
} finally {
  cleanUp();
}

const ms = (value) => (value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2));
const countsOf = (counts) =>
  Object.entries(counts)
    .filter(([, n]) => n > 0)
    .map(([engine, n]) => `${engine} ${n}`)
    .join(', ') || 'none';
/** "faster than" or "slower than", for a time of ours against a peer's. */
const against = (ours, theirs) => (ours < theirs ? 'faster than' : 'slower than');
/** The lowest and highest of `values` by tree, as "1.2x (a) to 3.4x (b)". */
function ratioRange(entries, digits) {
  const sorted = [...entries].sort((a, b) => a[1] - b[1]);
  const at = ([name, value]) => `${value.toFixed(digits)}x (${name})`;
  return sorted.length === 1 ? at(sorted[0]) : `${at(sorted[0])} to ${at(sorted[sorted.length - 1])}`;
}

function printFilesystem(label, where, rows) {
  console.log(`${label} — ${where} (median ms of ${config.rounds}; ratios are of the medians)`);
  printTable(
    Object.entries(rows).map(([name, row]) => ({
      tree: name,
      files: row.files,
      snapshot: ms(row.snapshotMs),
      're-snapshot': ms(row.resnapshotMs),
      cloneTree: ms(row.cloneTreeMs),
      'cp -a': ms(row.cpMs),
      'fs.promises.cp': ms(row.fsCpMs),
      'snap/cp': ratio(row.snapshotMs, row.cpMs),
      'clone/cp': ratio(row.cloneTreeMs, row.cpMs),
      'fs.cp/cp': ratio(row.fsCpMs, row.cpMs),
      're-snap x': ratio(row.snapshotMs, row.resnapshotMs),
      'snapshot engine (counts)': `${row.engine} (${countsOf(row.counts)})${row.degraded ? ' degraded' : ''}`,
    })),
  );
  const big = rows['10000x1KB'];
  if (big) {
    console.log(`10000x1KB snapshot with durable: true: ${ms(big.snapshotDurableMs)} ms (${ratio(big.snapshotDurableMs, big.cpMs)}x cp -a)`);
    console.log(`10000x1KB snapshot: ${ratio(big.snapshotMs, big.cpMs)}x the time of cp -a (${against(big.snapshotMs, big.cpMs)} cp -a)`);
  }
  console.log(`re-snapshot speed-up over the first snapshot: ${ratioRange(Object.entries(rows).map(([name, row]) => [name, row.ratios.resnapshotSpeedup]), 1)}`);
  const notReused = Object.entries(rows).filter(([, row]) => row.resnapshotCounts.reused !== row.files);
  if (notReused.length > 0) console.log(`note: re-snapshot re-read files in ${notReused.map(([name, row]) => `${name} (${countsOf(row.resnapshotCounts)})`).join(', ')}`);
  console.log(`cloneTree engine: ${Object.entries(rows).map(([name, row]) => `${name} ${row.cloneTreeEngine}`).join(', ')}\n`);
}

console.log(`arenacache workspace snapshot benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.platform}, ${machine.date}`);
console.log(
  `${config.rounds} rounds (median shown); scale 1/${config.scale}; ${config.threads} native threads (snapshot, verify), cloneTree default threads; fresh target per call, sync(1) before each, outside the timed part\n`,
);
printFilesystem('ext4', `${config.dir} (${ext4Type})`, results.ext4);
if (results.xfs) printFilesystem('xfs', `loop-mounted ${config.xfsSize} image, mkfs.xfs -m reflink=1`, results.xfs);
else console.log(`xfs rows skipped: ${results.xfsSkipped}\n`);
console.log(`verify throughput on ${ext4Type} — warm page cache; MB = 10^6 bytes; workspace.verify(id) on ${config.threads} native threads vs one sha256sum process over the worktree's files; median of ${Math.max(9, 3 * config.rounds)} rounds`);
printTable(
  Object.entries(results.verify).map(([name, row]) => ({
    tree: name,
    files: row.files,
    MB: (row.bytes / 1e6).toFixed(1),
    'verify ms': ms(row.oursMs),
    'sha256sum ms': ms(row.sha256sumMs),
    'verify MB/s': row.oursMBps.toFixed(0),
    'sha256sum MB/s': row.sha256sumMBps.toFixed(0),
    'verify/sha256sum': row.ratio.toFixed(2),
  })),
);
console.log(`verify throughput over sha256sum's: ${ratioRange(Object.entries(results.verify).map(([name, row]) => [name, row.ratio]), 2)}`);
if (json) {
  writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`wrote ${json}`);
}

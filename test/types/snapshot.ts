// Type tests of 'arenacache/snapshot' (types/snapshot.d.ts). Compiled,
// never run: `npx tsc -p test/types`. Every `@ts-expect-error` line is a
// misuse that must not compile (tsc reports one that is no longer needed).

import * as main from 'arenacache';
import {
  ArenaCacheError,
  cloneTree,
  codes,
  defaults,
  Workspace,
  type CloneEngine,
  type CloneResult,
  type CorruptHistoryEntry,
  type EngineSummary,
  type GcResult,
  type HistoryEntry,
  type PinRecord,
  type Progress,
  type RecoveredOperation,
  type SkippedEntry,
  type SnapshotCorruptError,
  type SnapshotDescriptor,
  type SnapshotIoError,
  type SnapshotVerifyReport,
  type StoreVerifyReport,
  type WorktreeDirtyError,
  type WorktreeReport,
} from 'arenacache/snapshot';
import { expectExactType } from './expect.js';


// --- the re-exported errors are the main entry's

expectExactType<typeof main.ArenaCacheError>()(ArenaCacheError);
expectExactType<typeof main.codes>()(codes);
expectExactType<'ERR_WORKTREE_DIRTY'>()(codes.ERR_WORKTREE_DIRTY);

// --- defaults

expectExactType<CloneEngine>()(defaults.engine);
expectExactType<number>()(defaults.threads);
expectExactType<number>()(defaults.packBelow);
expectExactType<boolean>()(defaults.durable);
// @ts-expect-error the defaults are frozen
defaults.threads = 8;

// --- init and open

const ws = await Workspace.init('/srv/project', { keepLast: 10, keepWithin: 30 * 24 * 3600 * 1000, durable: true });
await Workspace.init('/srv/other', { repository: '/srv/repos/other' });
const opened = await Workspace.open('/srv/project');
expectExactType<Workspace>()(opened);
expectExactType<string>()(ws.path);
expectExactType<string>()(ws.repositoryPath);
expectExactType<string>()(ws.name);
expectExactType<string | null>()(ws.head);
for (const recovered of opened.recovered) {
  expectExactType<RecoveredOperation>()(recovered);
  if (recovered.outcome !== 'dropped') console.log(`${recovered.op} ${recovered.id}: ${recovered.outcome}`);
}
// @ts-expect-error a Workspace comes from init() or open()
new Workspace('/srv/project');
// @ts-expect-error misspelt option
await Workspace.init('/srv/project', { keeplast: 3 });
// @ts-expect-error keepWithin is a number of ms
await Workspace.init('/srv/project', { keepWithin: '30d' });
// @ts-expect-error open takes no options
await Workspace.open('/srv/project', { repository: '/srv/repos' });
// @ts-expect-error head is read-only
ws.head = null;

// --- snapshot

const snap = await ws.snapshot({
  message: 'before upgrade',
  tags: ['v1'],
  engine: 'auto',
  packBelow: 64 * 1024,
  threads: 8,
  durable: false,
  onProgress: (progress) => {
    expectExactType<Progress<'snapshot'>>()(progress);
    expectExactType<'snapshot'>()(progress.phase);
    process.stderr.write(`\r${progress.done}/${progress.total} files, ${progress.bytes} bytes`);
  },
});
expectExactType<SnapshotDescriptor>()(snap);
const { id, engine, files, bytes, storedBytes, parent, skipped, unstable } = snap;
expectExactType<EngineSummary>()(engine);
console.log(id, engine.used, engine.degraded, engine.counts.reflink, engine.counts.reused, files, bytes, storedBytes, parent, unstable.length);
for (const entry of skipped) {
  expectExactType<SkippedEntry>()(entry);
  if (entry.reason !== 'removed during the snapshot') console.log(`skipped ${entry.path}: ${entry.reason}`);
}
for (const fallback of engine.fallbacks) console.log(fallback.path, fallback.engine, fallback.code ?? 'no errno');
await ws.snapshot();
await ws.snapshot({ onProgress: null });
// @ts-expect-error engine is 'auto', 'reflink' or 'copy'
await ws.snapshot({ engine: 'fast' });
// @ts-expect-error tags is an array of names
await ws.snapshot({ tags: 'v1' });
// @ts-expect-error misspelt option
await ws.snapshot({ mesage: 'typo' });
// @ts-expect-error force belongs to restore
await ws.snapshot({ force: true });

// --- restore and fork

const restored = await ws.restore('v1', { force: true, threads: 2, onProgress: ({ phase, done, total }) => console.log(phase, done / total) });
expectExactType<SnapshotDescriptor>()(restored);
try {
  await ws.restore('head');
} catch (error) {
  if (error instanceof ArenaCacheError && error.code === codes.ERR_WORKTREE_DIRTY) {
    const { changes } = error as WorktreeDirtyError;
    console.log(changes.differ.length, changes.missing, changes.extra);
  } else if (error instanceof ArenaCacheError && error.code === 'ERR_SNAPSHOT_CORRUPT') {
    for (const { path, problem } of (error as SnapshotCorruptError).problems ?? []) console.log(`${path}: ${problem}`);
  } else if (error instanceof ArenaCacheError && error.code === 'ERR_SNAPSHOT_IO') {
    for (const failure of (error as SnapshotIoError).failures) console.log(failure.path, failure.code, failure.errno, failure.syscall);
  }
}
// @ts-expect-error restore takes a reference
await ws.restore();
// @ts-expect-error force is a boolean
await ws.restore('v1', { force: 'yes' });
// @ts-expect-error restore's progress reports phase 'restore'
await ws.restore('v1', { onProgress: (progress: Progress<'snapshot'>) => console.log(progress) });

const fork = await ws.fork('v1', '/srv/project-experiment', { name: 'experiment', durable: true, onProgress: (progress) => expectExactType<'fork'>()(progress.phase) });
expectExactType<Workspace>()(fork);
await fork.snapshot({ message: 'try the new parser' });
// @ts-expect-error fork takes a directory
await ws.fork('v1');

// --- verify and status

const all = await ws.verify();
expectExactType<StoreVerifyReport>()(all);
expectExactType<StoreVerifyReport>()(await ws.verify('all', { threads: 16 }));
for (const report of all.snapshots) {
  if (!report.ok) console.log(report.id, report.descriptor, report.manifest, report.missing, report.differ.map((d) => `${d.path}: ${d.reason}`));
}
console.log(all.extra);
const one = await ws.verify('v1', { onProgress: (progress) => expectExactType<'verify'>()(progress.phase) });
expectExactType<SnapshotVerifyReport>()(one);
const drift = await ws.verify('head', { worktree: true });
expectExactType<WorktreeReport>()(drift);
for (const difference of drift.differ) {
  switch (difference.reason) {
    case 'mode':
    case 'size':
      expectExactType<number>()(difference.actual);
      break;
    case 'type':
      console.log(`${difference.path}: a ${difference.actual || 'nothing'} where a ${difference.expected} was`);
      break;
    case 'target':
      console.log(`${difference.path} -> ${difference.actual}, not ${difference.expected}`);
      break;
    case 'content':
      console.log(`${difference.path} changed`);
      break;
    default:
      expectExactType<`E${string}`>()(difference.reason);
  }
}
const worktree = process.argv.includes('--worktree');
expectExactType<StoreVerifyReport | SnapshotVerifyReport | WorktreeReport>()(await ws.verify('v1', { worktree }));
// @ts-expect-error worktree is a boolean
await ws.verify('head', { worktree: 'yes' });

const status = await ws.status({ threads: 2 });
expectExactType<WorktreeReport>()(status);
expectExactType<string | null>()(status.id);
if (!status.ok) console.log(status.worktree, status.files, status.bytes);
// @ts-expect-error status takes threads only
await ws.status({ onProgress: null });

// --- history, describe, pins, gc

const rows = ws.history({ tag: 'nightly', limit: 10 });
expectExactType<Array<HistoryEntry | CorruptHistoryEntry>>()(rows);
for (const row of rows) {
  if (row.corrupt) console.log(`${row.id}: ${row.error}`);
  else console.log(row.shortId, row.time, row.engine, row.pin?.until ?? 'not pinned', row.heads.join(','));
}
expectExactType<string>()(ws.history({ format: 'table' }));
// @ts-expect-error format is 'json' or 'table'
ws.history({ format: 'csv' });
const described = ws.describe('v1');
expectExactType<SnapshotDescriptor>()(described);
console.log(described.payloadChecksum, described.descriptorChecksum);

const pin = await ws.pin('v1', { until: '2027-01-01' });
expectExactType<PinRecord & { id: string }>()(pin);
await ws.pin('v1', { until: new Date(Date.now() + 86_400_000) });
await ws.pin('v1', { until: Date.now() + 86_400_000, durable: false });
await ws.pin('v1');
expectExactType<Promise<boolean>>()(ws.unpin('v1'));
// @ts-expect-error until is a Date, an ISO string, ms since the epoch or null
await ws.pin('v1', { until: true });

const plan = await ws.gc({ dryRun: true, keepLast: 3, keepWithin: 0 });
expectExactType<GcResult>()(plan);
for (const { id: kept, reasons } of plan.keep) console.log(kept, reasons.join('; '));
console.log(plan.delete, plan.files, plan.bytes, plan.staleWorktrees, plan.retention.keepLast, plan.sweep, plan.sweepBlockedBy);
await ws.gc();
// @ts-expect-error misspelt option
await ws.gc({ dryrun: true });

// --- cloneTree

const copy = await cloneTree('node_modules', '/tmp/nm-copy', { engine: 'reflink', threads: 8, onProgress: (progress) => expectExactType<'clone'>()(progress.phase) });
expectExactType<CloneResult>()(copy);
for (const [path, used] of Object.entries(copy.perFile)) console.log(path, used);
console.log(copy.files, copy.directories, copy.symlinks, copy.bytes, copy.engine.used, copy.skipped.map((s) => s.reason));
await cloneTree('a', 'b');
// @ts-expect-error cloneTree does not pack
await cloneTree('a', 'b', { packBelow: 0 });
// @ts-expect-error source and target are paths
await cloneTree('a', new URL('file:///b'));

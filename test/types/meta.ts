// Type tests of 'arenacache/meta' (types/meta.d.ts). Compiled, never run:
// `npx tsc -p test/types`. Every `@ts-expect-error` line is a misuse that
// must not compile (tsc reports one that is no longer needed).

import * as fsp from 'node:fs/promises';
import { ArenaCacheError, SharedCache } from 'arenacache';
import type { CachedStats } from 'arenacache/fs';
import {
  InodeFS,
  Snapshot,
  type CopyCounts,
  type FsckProblemKind,
  type FsckReport,
  type FsReader,
  type InodeCacheStats,
  type InodeFileHandle,
  type InodeFSOptions,
  type PersistentSnapshotInfo,
  type WalkEntry,
} from 'arenacache/meta';
import { expectExactType } from './expect.js';


// --- opening

const ifs = await InodeFS.open('/var/lib/app/fs.lmdb', { cacheSize: 1000 });
expectExactType<InodeFS>()(ifs);
expectExactType<string>()(ifs.path);
const options: InodeFSOptions = { cacheSize: 0, maxReaders: 256, inlineBytes: 8192, chunkBytes: 1 << 20, durable: false, mode: 0o640 };
const other = await InodeFS.open('/var/lib/app/other.lmdb', options);
// Threads share a store through one SharedCache.
const shared = new SharedCache({ memoryBytes: 64 * 2 ** 20, policy: 'lru' });
const threaded = await InodeFS.open('/var/lib/app/threads.lmdb', { cache: shared });

// @ts-expect-error an InodeFS is made by InodeFS.open()
new InodeFS('/var/lib/app/fs.lmdb', {});
// @ts-expect-error misspelt option
await InodeFS.open('/var/lib/app/fs.lmdb', { cachesize: 10 });
// @ts-expect-error durable is a boolean
await InodeFS.open('/var/lib/app/fs.lmdb', { durable: 'yes' });
// @ts-expect-error cache is a SharedCache
await InodeFS.open('/var/lib/app/fs.lmdb', { cache: new Map() });
// @ts-expect-error the path is a string
await InodeFS.open(new URL('file:///var/lib/app/fs.lmdb'));

// --- files and directories

expectExactType<Promise<string | undefined>>()(ifs.mkdir('/config/app', { recursive: true }));
expectExactType<Promise<undefined>>()(ifs.mkdir('/tmp', { mode: 0o700 }));
expectExactType<string | undefined>()(ifs.mkdirSync('/a/b', { recursive: true, mode: 0o755 }));
expectExactType<undefined>()(ifs.mkdirSync('/c'));
// @ts-expect-error an InodeFS takes { recursive, mode }, not a bare mode
await ifs.mkdir('/d', 0o700);

await ifs.writeFile('/config/app.json', JSON.stringify({ port: 8080 }));
await ifs.writeFile('/notes.txt', 'one', { mode: 0o600 });
await ifs.appendFile('/notes.txt', ' two', 'utf8');
ifs.writeFileSync('/bytes.bin', new Uint8Array([1, 2, 3]));
ifs.appendFileSync('/bytes.bin', Buffer.from([4]));
// @ts-expect-error data is a string or bytes
await ifs.writeFile('/n.json', 42);
// @ts-expect-error writeFile takes encoding and mode only
await ifs.writeFile('/notes.txt', 'x', { flag: 'a' });

expectExactType<Promise<Buffer>>()(ifs.readFile('/config/app.json'));
expectExactType<Promise<string>>()(ifs.readFile('/config/app.json', 'utf8'));
expectExactType<string>()(ifs.readFileSync('/notes.txt', { encoding: 'utf8' }));
expectExactType<Buffer>()(ifs.readFileSync('/bytes.bin'));
const stats = await ifs.stat('/notes.txt');
expectExactType<CachedStats>()(stats);
expectExactType<CachedStats>()(await ifs.lstat('/notes.txt'));
expectExactType<CachedStats>()(ifs.statSync('/config'));
expectExactType<CachedStats>()(ifs.lstatSync('/config'));
console.log(stats.ino, stats.nlink, stats.isFile(), stats.mtime.getTime());
expectExactType<string[]>()(await ifs.readdir('/config'));
expectExactType<string[]>()(ifs.readdirSync('/'));

await ifs.symlink('/config/app.json', '/app.json');
ifs.symlinkSync('config', '/cfg');
expectExactType<string>()(await ifs.readlink('/app.json'));
expectExactType<string>()(ifs.readlinkSync('/cfg'));
await ifs.rename('/notes.txt', '/config/notes.txt');
ifs.renameSync('/config/notes.txt', '/notes.txt');
await ifs.truncate('/notes.txt', 3);
ifs.truncateSync('/notes.txt');
await ifs.chmod('/notes.txt', 0o644);
ifs.chmodSync('/notes.txt', 0o600);
await ifs.utimes('/notes.txt', new Date(), Date.now() / 1000);
ifs.utimesSync('/notes.txt', 0, new Date(0));
await ifs.unlink('/app.json');
ifs.unlinkSync('/cfg');
await ifs.rm('/tmp', { recursive: true, force: true });
ifs.rmSync('/c');
// @ts-expect-error chmod needs a mode number
await ifs.chmod('/notes.txt', 'rw-r--r--');
// @ts-expect-error times are Dates or seconds
ifs.utimesSync('/notes.txt', '2024-01-01', '2024-01-01');
// @ts-expect-error rm takes recursive and force
ifs.rmSync('/x', { recursive: true, retryDelay: 10 });

for await (const entry of ifs.walk('/config')) {
  expectExactType<WalkEntry>()(entry);
  if (entry.stats.isDirectory()) console.log(`${entry.path}/`);
}
for await (const { path, stats: entryStats } of ifs.walk()) console.log(path, entryStats.size);

// --- handles

const handle: InodeFileHandle = await ifs.open('/data.bin', 'w+', 0o600);
const record = Buffer.from('record');
const written = await handle.write(record, 0, record.length, 4096);
expectExactType<number>()(written.bytesWritten);
const buffer = Buffer.alloc(512);
const { bytesRead, buffer: filled } = await handle.read(buffer, 0, 512, 0);
expectExactType<number>()(bytesRead);
expectExactType<typeof buffer>()(filled);
await handle.read(new Uint8Array(16));
await handle.truncate(16);
expectExactType<CachedStats>()(await handle.stat());
expectExactType<Buffer>()(await handle.readFile());
await handle.close();
await (await ifs.open('/created', 'wx')).close();
// @ts-expect-error InodeFS handles have no descriptor
console.log(handle.fd);
// @ts-expect-error not a node:fs flag
await ifs.open('/data.bin', 'rw');
// @ts-expect-error readFile of a handle takes no encoding
await handle.readFile('utf8');

// --- snapshots

const snap = ifs.createSnapshot('before-update');
expectExactType<Snapshot>()(snap);
expectExactType<string>()(snap.name);
expectExactType<number>()(snap.createdAt);
expectExactType<boolean>()(snap.persistent);
for await (const { path, stats: entryStats } of snap.walk('/')) console.log(path, entryStats.size);
const counts = await snap.copyTo(ifs, '/config-restore', { from: '/config' });
expectExactType<CopyCounts>()(counts);
console.log(counts.files, counts.directories, counts.symlinks, counts.bytes);
await snap.copyToDir('/tmp/restore');
// Any node:fs/promises-shaped target: here node:fs/promises itself.
await snap.copyTo(fsp, '/tmp/restore-2', { from: '/' });
await snap.copyTo(other, '/copy');
const old: string = await snap.readFile('/config/app.json', 'utf8');
console.log(old, snap.readFileSync('/bytes.bin').length, snap.statSync('/').isDirectory(), await snap.lstat('/'));
console.log(snap.readdirSync('/'), await snap.readdir('/'), snap.lstatSync('/'), await snap.stat('/'));
const snapHandle = await snap.open('/data.bin');
await snapHandle.read(Buffer.alloc(4), 0, 4, 0);
await snapHandle.close();
await (await snap.open('/data.bin', 'r')).close();
// @ts-expect-error a snapshot is read-only: no write flags
await snap.open('/data.bin', 'w');
// @ts-expect-error copyTo needs a filesystem target (mkdir, writeFile, symlink, readdir)
await snap.copyTo({ mkdir() {} }, '/x');
// @ts-expect-error misspelt option
await snap.copyToDir('/tmp/restore', { form: '/config' });
// @ts-expect-error the target path is a string
await snap.copyTo(ifs, 42);

// Writes to a snapshot fail (EROFS): their results are never.
expectExactType<never>()(snap.writeFileSync('/x', 'y'));
expectExactType<Promise<never>>()(snap.writeFile('/x', 'y'));
expectExactType<Promise<never>>()(snap.appendFile('/x', 'y'));
expectExactType<never>()(snap.appendFileSync('/x', 'y'));
expectExactType<Promise<never>>()(snap.mkdir('/x', { recursive: true }));
expectExactType<never>()(snap.mkdirSync('/x'));
expectExactType<Promise<never>>()(snap.symlink('/a', '/x'));
expectExactType<never>()(snap.symlinkSync('/a', '/x'));
expectExactType<Promise<never>>()(snap.unlink('/x'));
expectExactType<never>()(snap.unlinkSync('/x'));
expectExactType<Promise<never>>()(snap.rm('/x', { force: true }));
expectExactType<never>()(snap.rmSync('/x'));
expectExactType<Promise<never>>()(snap.rename('/x', '/y'));
expectExactType<never>()(snap.renameSync('/x', '/y'));
expectExactType<Promise<never>>()(snap.truncate('/x', 0));
expectExactType<never>()(snap.truncateSync('/x'));
expectExactType<Promise<never>>()(snap.chmod('/x', 0o600));
expectExactType<never>()(snap.chmodSync('/x', 0o600));
expectExactType<Promise<never>>()(snap.utimes('/x', 0, 0));
expectExactType<never>()(snap.utimesSync('/x', new Date(), new Date()));
snap.release();
expectExactType<boolean>()(snap.released);
// @ts-expect-error snapshots come from createSnapshot() and openSnapshot()
new Snapshot();

const persistent = ifs.createSnapshot('release-41', { persist: true });
persistent.release();
const listed = ifs.listSnapshots();
expectExactType<PersistentSnapshotInfo[]>()(listed);
for (const { name, createdAt } of listed) console.log(name, new Date(createdAt));
const reopened = ifs.openSnapshot('release-41');
reopened.release();
expectExactType<Promise<number>>()(ifs.deleteSnapshot('release-41'));
// @ts-expect-error persist is a boolean
ifs.createSnapshot('s', { persist: 1 });
// @ts-expect-error misspelt option
ifs.createSnapshot('s', { persistent: true });

// Code written for any view of a store takes the InodeFS and its snapshots.
async function sizeOf(view: FsReader, path: string): Promise<number> {
  return (await view.stat(path)).size;
}
await sizeOf(ifs, '/notes.txt');
await sizeOf(ifs.createSnapshot('now'), '/notes.txt');

try {
  ifs.openSnapshot('missing');
} catch (error) {
  if (error instanceof ArenaCacheError && error.code === 'ERR_SNAPSHOT_NOT_FOUND') console.log('no such snapshot');
}

// --- fsck, the inode cache, close

const report = ifs.fsck();
expectExactType<FsckReport>()(report);
if (!report.ok) for (const problem of report.problems) console.error(problem.kind, problem.ino, problem.path, problem.message);
const kind: FsckProblemKind = 'dangling-dirent';
console.log(kind, report.checked.inodes, report.checked.history);

const cacheStats = ifs.cacheStats();
expectExactType<InodeCacheStats>()(cacheStats);
console.log(cacheStats.hitRate, cacheStats.maxSize);
ifs.setCacheSize(5000);
ifs.flushCache();
// @ts-expect-error the size is a number of entries
ifs.setCacheSize('5000');

expectExactType<Promise<void> | undefined>()(ifs.close());
await other.close();
await threaded.close();

// Type tests of 'arenacache/fs' (types/fs.d.ts). Compiled, never run:
// `npx tsc -p test/types`. Every `@ts-expect-error` line is a misuse that
// must not compile (tsc reports one that is no longer needed).

import type { Stats } from 'node:fs';
import { Registry } from 'prom-client';
import { ArenaCacheError, BlockStore, SharedCache } from 'arenacache';
import {
  CacheFS,
  type BatchStatsEntry,
  type CachedStats,
  type CacheFileHandle,
  type CacheFSOptions,
  type CacheFSStats,
  type FlushErrorEvent,
  type FlushFailedError,
  type OpenFlags,
  type WarmFailedEvent,
  type WarmJob,
  type WarmProgressEvent,
  type WarmSummary,
  type WriteMode,
} from 'arenacache/fs';
import { InodeFS } from 'arenacache/meta';
import { expectExactType } from './expect.js';


const cache = new SharedCache({ memoryBytes: 256 * 2 ** 20 });
const blocks = BlockStore.open('/dev/shm/assets.blocks', { memoryBytes: 64 * 2 ** 20, blockBytes: 4096 });

// --- construction and options

const cfs = new CacheFS({ root: '/srv/assets', cache, writeMode: 'write-through', validateMs: 500 });
const writeBack = new CacheFS({
  root: '/srv/assets',
  cache,
  blocks,
  writeMode: 'write-back',
  flushIntervalMs: 0,
  blockBytes: 64 * 1024,
  maxFileBytes: 2 ** 20,
  nearCacheBytes: 0,
  accessStatsPath: '/var/tmp/assets.access.json',
  accessStatsLimit: 5000,
});
// Every CacheFS of a root shares the block store, whatever its mode.
const around = new CacheFS({ root: '/srv/assets', cache, blocks, writeMode: 'write-around' });
const mode: WriteMode = process.env.WRITE_BACK ? 'write-back' : 'write-through';
const chosen = new CacheFS({ root: '/srv/assets', cache, blocks, writeMode: mode });
const options: CacheFSOptions = { root: '/srv/assets', cache };
new CacheFS(options);
expectExactType<string>()(cfs.root);
expectExactType<WriteMode>()(chosen.writeMode);

// Over an InodeFS: its whole tree, through the same cache.
const ifs = await InodeFS.open('/var/lib/app/fs.lmdb');
const overInodes = new CacheFS({ root: ifs, cache });

// @ts-expect-error root and cache are required
new CacheFS({ root: '/srv/assets' });
// @ts-expect-error no options at all
new CacheFS();
// @ts-expect-error write-back needs a BlockStore
new CacheFS({ root: '/srv/assets', cache, writeMode: 'write-back' });
// @ts-expect-error writeMode is one of three strings
new CacheFS({ root: '/srv/assets', cache, writeMode: 'write-behind' });
// @ts-expect-error misspelt option
new CacheFS({ root: '/srv/assets', cache, validateMS: 500 });
// @ts-expect-error validateMs is a number of ms
new CacheFS({ root: '/srv/assets', cache, validateMs: '1s' });
// @ts-expect-error root is a path or an InodeFS
new CacheFS({ root: new URL('file:///srv/assets'), cache });
// @ts-expect-error cache is a SharedCache
new CacheFS({ root: '/srv/assets', cache: new Map() });
// @ts-expect-error blocks is a BlockStore
new CacheFS({ root: '/srv/assets', cache, blocks: cache, writeMode: 'write-back' });

// --- reads

expectExactType<Promise<Buffer>>()(cfs.readFile('css/site.css'));
expectExactType<Promise<Buffer>>()(cfs.readFile('css/site.css', { encoding: null }));
expectExactType<Promise<string>>()(cfs.readFile('css/site.css', 'utf8'));
expectExactType<Promise<string>>()(cfs.readFile('css/site.css', { encoding: 'base64' }));
const encoding = process.env.ENCODING as BufferEncoding | undefined;
expectExactType<Promise<string | Buffer>>()(cfs.readFile('css/site.css', { encoding }));
expectExactType<Buffer>()(cfs.readFileSync('/index.html'));
expectExactType<string>()(cfs.readFileSync('/index.html', 'latin1'));
// @ts-expect-error not an encoding
cfs.readFile('css/site.css', 'utf-9');
// @ts-expect-error readFile takes no flag
cfs.readFile('css/site.css', { encoding: 'utf8', flag: 'r' });
// @ts-expect-error paths are strings
cfs.readFile(Buffer.from('css/site.css'));

const stats = await cfs.stat('css/site.css');
expectExactType<CachedStats>()(stats);
const size: number = stats.size;
const modified: Date = stats.mtime;
if (stats.isFile() && !stats.isDirectory()) console.log(size, modified.toISOString(), stats.mtimeMs, stats.ino);
const syncStats: CachedStats = cfs.statSync('css');
// CachedStats is Stats-shaped: code written for node:fs Stats takes it.
const asNodeStats: Stats = syncStats;
void asNodeStats;

expectExactType<Promise<string[]>>()(cfs.readdir('css'));
const names = cfs.readdirSync('/');
names.sort();
// @ts-expect-error readdir has no options (no withFileTypes)
cfs.readdir('css', { withFileTypes: true });

// --- writes and structure

await cfs.writeFile('reports/today.json', JSON.stringify({ ok: true }));
await cfs.writeFile('reports/today.bin', new Uint8Array([1, 2, 3]), { mode: 0o600 });
await cfs.writeFile('reports/today.txt', 'aGk=', 'base64');
await cfs.appendFile('logs/app.log', 'line\n', { encoding: 'utf8' });
await cfs.appendFile('logs/app.bin', new DataView(new ArrayBuffer(8)));
// @ts-expect-error data is a string or bytes
await cfs.writeFile('a.json', { ok: true });
// @ts-expect-error writeFile takes encoding and mode only
await cfs.writeFile('a.txt', 'x', { flag: 'a' });
// @ts-expect-error mode is a number
await cfs.writeFile('a.txt', 'x', { mode: '0644' });

expectExactType<Promise<string | undefined>>()(cfs.mkdir('a/b/c', { recursive: true }));
expectExactType<Promise<undefined>>()(cfs.mkdir('a'));
expectExactType<Promise<undefined>>()(cfs.mkdir('a', 0o700));
expectExactType<Promise<undefined>>()(cfs.mkdir('a', { mode: 0o700 }));
const recursive = process.argv.includes('-p');
expectExactType<Promise<string | undefined>>()(cfs.mkdir('a/b', { recursive }));
// @ts-expect-error recursive is a boolean
await cfs.mkdir('a', { recursive: 'yes' });
await cfs.unlink('a.txt');
await cfs.rm('build', { recursive: true, force: true });
await cfs.rm('old.txt');
// @ts-expect-error rm retries nothing
await cfs.rm('build', { recursive: true, maxRetries: 3 });
await cfs.rename('a.txt', 'b.txt');

// --- handles

const handle: CacheFileHandle = await cfs.open('data/log.bin', 'r+');
const record = Buffer.from('record');
const written = await handle.write(record, 0, record.length, 4096);
expectExactType<number>()(written.bytesWritten);
// The buffer passed in comes back with its own type.
expectExactType<typeof record>()(written.buffer);
const view = new Uint8Array(4096);
const read = await handle.read(view, 0, 4096, 0);
expectExactType<number>()(read.bytesRead);
expectExactType<typeof view>()(read.buffer);
await handle.read(Buffer.alloc(16), null, null, null);
await handle.write(record);
await handle.truncate(1024);
await handle.truncate();
expectExactType<CachedStats>()(await handle.stat());
expectExactType<number | undefined>()(handle.fd);
await handle.close();
await (await cfs.open('new.txt', 'wx', 0o600)).close();
await (await cfs.open('new.txt', 'a+x')).close();
const flags: OpenFlags = 'w+';
await (await cfs.open('new.txt', flags)).close();
// @ts-expect-error not a node:fs flag
await cfs.open('a.txt', 'rw');
// @ts-expect-error numeric flags are refused
await cfs.open('a.txt', 2);
// @ts-expect-error a handle reads into a Buffer or Uint8Array
await handle.read(new DataView(new ArrayBuffer(8)));
// @ts-expect-error positions are numbers
await handle.write(record, 0, record.length, 10n);

// --- warming and batch operations

const job: WarmJob = cfs.warmDir('assets', { recursive: true, pattern: '**/*.{css,js}', signal: AbortSignal.timeout(30_000) });
job.on('progress', (event) => {
  expectExactType<WarmProgressEvent>()(event);
  console.log(`warmed ${event.done}/${event.total}: ${event.path} (${event.bytes} bytes)`);
});
job.once('failed', ({ path, error }) => console.warn(path, error.message));
const failedListener = (event: WarmFailedEvent): void => console.warn(event.path);
job.off('failed', failedListener);
// @ts-expect-error not an event of a WarmJob
job.on('done', () => {});
const summary = await job.finished;
expectExactType<WarmSummary>()(summary);
if (summary.cancelled) console.log(`${summary.skipped} of ${summary.total} skipped`);
expectExactType<number>()(job.summary.warmed);

cfs.warm(['index.html', 'css/site.css'], { concurrency: 8 });
cfs.warmFromList('/etc/app/warm.txt');
const fromStats = writeBack.warmFromStats({ limit: 100, concurrency: 2 });
await fromStats.finished;
await writeBack.saveAccessStats();
// @ts-expect-error concurrency is a number
cfs.warm(['a'], { concurrency: '8' });
// @ts-expect-error misspelt option
cfs.warmDir('assets', { recursve: true });
// @ts-expect-error limit belongs to warmFromStats
cfs.warm(['a'], { limit: 10 });
// @ts-expect-error paths are an array
cfs.warm('index.html');

expectExactType<number>()(cfs.invalidate(['css/site.css']));
cfs.invalidate({ prefix: 'assets/css' });
cfs.invalidate({ pattern: '**/*.css' });
// @ts-expect-error exactly one of prefix and pattern
cfs.invalidate({ prefix: 'assets', pattern: '*.css' });
// @ts-expect-error one of prefix and pattern is needed
cfs.invalidate({});

const entries: BatchStatsEntry[] = await cfs.batchStats(['a.txt', 'missing.txt']);
for (const entry of entries) {
  if (entry.error !== undefined) console.warn(entry.path, entry.error.message);
  else expectExactType<CachedStats>()(entry.stats);
}

// --- write-back, events, counters, metrics

writeBack.on('flushError', (event) => {
  expectExactType<FlushErrorEvent>()(event);
  console.warn(`${event.path} stays dirty: ${event.error.code}`);
});
// @ts-expect-error not an event of a CacheFS
writeBack.on('flush', () => {});
try {
  expectExactType<Promise<number>>()(writeBack.flush(['reports/today.json']));
  const flushed: number = await writeBack.flush();
  console.log(flushed);
} catch (error) {
  if (error instanceof ArenaCacheError && error.code === 'ERR_FLUSH_FAILED') {
    for (const { path, error: cause } of (error as FlushFailedError).failures) console.warn(path, cause.code);
  }
}
// @ts-expect-error paths are an array
await writeBack.flush('reports/today.json');

const counters = writeBack.stats();
expectExactType<CacheFSStats>()(counters);
console.log(counters.readHits / Math.max(1, counters.reads), counters.dirtyBytes, counters.lostWrites);

const registry = new Registry();
const unregister = cfs.registerMetrics(registry, { name: 'assets' });
expectExactType<() => void>()(unregister);
unregister();
// @ts-expect-error registerMetrics takes name and prefix
cfs.registerMetrics(registry, { label: 'assets' });

await Promise.all([cfs.close(), writeBack.close(), around.close(), chosen.close(), overInodes.close()]);
expectExactType<Promise<void>>()(cfs.close());

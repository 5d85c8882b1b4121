// CacheFS where timestamps are coarser than the writes they describe (git's
// "racily clean" problem): a version of a file whose mtime or ctime is
// within the file system's timestamp granularity of the read may still
// change without its stats changing, and a read that overlapped an in-place
// write may be a mix of two versions that no stat before and after can
// tell. Such a version is read from the disk and never kept; once its stamps
// are old enough, the file is cached again.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setImmediate as yieldNow, setTimeout as sleep } from 'node:timers/promises';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { BlockStore, SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { coarseTimesMount } from './helpers/coarse-times.js';
import { tempDir } from './helpers/fs-tree.js';
import { openFs } from './helpers/inode-fs.js';
import { untilCacheable } from './helpers/racy.js';
import { versionContent, versionOf } from './helpers/versioned-content.js';
import { KiB, MiB } from './helpers/units.js';
import { CLOCK_MARGIN_MS, COARSE_GRANULARITY_MS, FINE_GRANULARITY_MS, isRacy } from '../lib/fs/racy.js';

const writer = fileURLToPath(new URL('./fixtures/inplace-writer.js', import.meta.url));

test('with 1 s timestamps, files rewritten in place by another process are never served torn, nor stale once it stops', async (t) => {
  const mount = coarseTimesMount(t);
  if (mount === null) return;
  const root = path.join(mount, 'root');
  mkdirSync(root);
  const COUNT = 4;
  const SIZE = 256 * KiB;
  const WRITE_MS = 3000;
  // Past the writer's stop: the default validateMs, then the window of a file stamped in whole seconds, then some.
  const AFTER_MS = 3500;
  for (let i = 0; i < COUNT; i++) writeFileSync(path.join(root, `f${i}`), versionContent(i, 0, SIZE));
  const reader = (name, options, { sync, reload }) => ({
    name,
    cfs: new CacheFS({ root, cache: new SharedCache({ memoryBytes: 16 * MiB }), ...options }),
    sync,
    reload,
    trustMs: options.validateMs ?? 1000,
  });
  const readers = [
    // Reads as they come: a version cached in a second the writer goes on writing in.
    reader('validateMs 0, readFile', { validateMs: 0 }, { sync: false, reload: false }),
    reader('default validateMs, readFileSync', {}, { sync: true, reload: false }),
    // Every other round the file is dropped first, so that its next read is
    // a disk read (overlapping a write now and then), and the one after
    // tells whether what it read was kept.
    reader('validateMs 0, reloading', { validateMs: 0 }, { sync: false, reload: true }),
    reader('default validateMs, reloading', {}, { sync: false, reload: true }),
  ];
  for (const reader of readers) {
    Object.assign(reader, { reads: 0, hits: 0, tornHits: 0, tornFromDisk: 0, wrongAfterStop: [] });
    t.after(() => reader.cfs.close());
  }
  const expected = Array.from({ length: COUNT }, () => new Map());
  const readOnce = async (reader, file) => {
    const hitsBefore = reader.cfs.stats().readHits;
    const bytes = reader.sync ? reader.cfs.readFileSync(`f${file}`) : await reader.cfs.readFile(`f${file}`);
    const hit = reader.cfs.stats().readHits > hitsBefore;
    const version = versionOf(file, bytes, SIZE, expected[file]);
    reader.reads++;
    if (hit) reader.hits++;
    if (version === -1 && hit) reader.tornHits++;
    return { version, hit };
  };

  const child = spawn(process.execPath, [writer, root, String(COUNT), String(SIZE), String(WRITE_MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk));
  let writing = true;
  const exited = once(child, 'exit').finally(() => (writing = false));
  t.after(() => child.kill());
  // For comparison: node:fs's own reads of the same files meanwhile.
  const plain = { reads: 0, torn: 0 };
  for (let round = 0; writing; round++) {
    for (let file = 0; file < COUNT; file++) {
      for (let again = 0; again < 2; again++) {
        plain.reads++;
        if (versionOf(file, readFileSync(path.join(root, `f${file}`)), SIZE, expected[file]) === -1) plain.torn++;
      }
    }
    for (const reader of readers) {
      for (let file = 0; file < COUNT; file++) {
        if (reader.reload && round % 2 === 0) reader.cfs.invalidate([`f${file}`]);
        for (let again = 0; again < 2; again++) {
          const { version, hit } = await readOnce(reader, file);
          // A read from the disk that overlapped a write gets what the kernel
          // gives (node:fs would get the same mix); it must never be kept.
          if (version === -1 && !hit) reader.tornFromDisk++;
        }
      }
    }
    await yieldNow();
  }
  const [code] = await exited;
  assert.equal(code, 0, 'the writer finished');
  const stoppedAt = Date.now();
  const { versions, writes } = JSON.parse(output);
  for (let file = 0; file < COUNT; file++) assert.equal(versionOf(file, readFileSync(path.join(root, `f${file}`)), SIZE), versions, `the disk holds f${file}'s last version`);

  while (Date.now() - stoppedAt < AFTER_MS) {
    for (const reader of readers) {
      for (let file = 0; file < COUNT; file++) {
        const startedMs = Date.now() - stoppedAt;
        const { version, hit } = await readOnce(reader, file);
        // Within validateMs of the stop, a cached whole version may still be served (the documented trade-off); after it, only the disk's.
        if (version === -1 || (startedMs >= reader.trustMs && version !== versions)) {
          reader.wrongAfterStop.push({ file, version, last: versions, hit, afterStopMs: startedMs });
        }
      }
    }
    await sleep(10);
  }
  // The rule costs caching only while the stamps are recent: every file is cached again now.
  for (const reader of readers) {
    for (let file = 0; file < COUNT; file++) await readOnce(reader, file);
    for (let file = 0; file < COUNT; file++) reader.resumed = (reader.resumed ?? 0) + ((await readOnce(reader, file)).hit ? 1 : 0);
  }

  t.diagnostic(`writer: ${writes} in-place writes, ${versions} versions of ${COUNT} files in ${WRITE_MS} ms`);
  t.diagnostic(`node:fs readFileSync meanwhile: ${plain.reads} reads, ${plain.torn} torn`);
  for (const { name, reads, hits, tornHits, tornFromDisk, wrongAfterStop, resumed } of readers) {
    t.diagnostic(`${name}: ${reads} reads, ${hits} from the cache, ${tornHits} torn from the cache, ${tornFromDisk} torn reads of the disk while it was written, ${wrongAfterStop.length} wrong after the stop, ${resumed}/${COUNT} cached again`);
  }
  for (const reader of readers) {
    assert.equal(reader.tornHits, 0, `${reader.name}: a torn mix was served from the cache`);
    assert.deepEqual(reader.wrongAfterStop.slice(0, 5), [], `${reader.name}: after the writer stopped, ${reader.wrongAfterStop.length} reads were not the disk's version (first ones shown)`);
    assert.equal(reader.resumed, COUNT, `${reader.name}: files whose stamps are old are cached again`);
  }
});

/** Resolves just after the next whole second, so that what follows at once shares its 1 s stamps. */
async function startOfSecond() {
  await sleep(1000 - (Date.now() % 1000) + 20);
}

/**
 * Runs `first()` and then `second()` until the change `second()` makes
 * leaves the stats of `file` as `first()` left them (both within one tick
 * of 1 s stamps), at most 3 times.
 */
async function sameStamps(file, first, second) {
  for (let tries = 0; tries < 3; tries++) {
    await startOfSecond();
    await first();
    const before = statSync(file);
    await second();
    const after = statSync(file);
    if (before.size === after.size && before.mtimeMs === after.mtimeMs && before.ctimeMs === after.ctimeMs) return;
  }
  assert.fail(`could not change ${file} within one tick of its 1 s timestamps`);
}

test('with 1 s timestamps, a change within the tick of what CacheFS wrote, cached or listed is seen at once with validateMs 0', async (t) => {
  const mount = coarseTimesMount(t);
  if (mount === null) return;
  const root = path.join(mount, 'root');
  mkdirSync(path.join(root, 'd'), { recursive: true });
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB }), validateMs: 0 });
  t.after(() => cfs.close());

  // Its own write-through write, then another program's of the same size in the same second.
  await sameStamps(
    path.join(root, 'd/w'),
    () => cfs.writeFile('d/w', 'written by CacheFS'),
    () => writeFileSync(path.join(root, 'd/w'), 'WRITTEN BY ANOTHER'),
  );
  // A handle's read first: a readFile would replace the cached record.
  const handle = await cfs.open('d/w');
  const buffer = Buffer.alloc(18);
  await handle.read(buffer, 0, 18, 0);
  await handle.close();
  assert.equal(buffer.toString(), 'WRITTEN BY ANOTHER', 'a handle\'s read');
  assert.equal(await cfs.readFile('d/w', 'utf8'), 'WRITTEN BY ANOTHER', 'readFile');

  // A file made, a listing, then another file made in the same second: the
  // listing is not kept, not even for an instance that trusts what it
  // keeps for a minute (validateMs), and not trusted on revalidation.
  const patient = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB }), validateMs: 60_000 });
  t.after(() => patient.close());
  let made = 0;
  await sameStamps(
    path.join(root, 'd'),
    async () => {
      writeFileSync(path.join(root, `d/new${made++}`), 'x');
      await cfs.readdir('d');
      await patient.readdir('d');
    },
    () => writeFileSync(path.join(root, `d/new${made++}`), 'x'),
  );
  const listing = readdirSync(path.join(root, 'd')).sort();
  assert.deepEqual((await cfs.readdir('d')).sort(), listing, 'readdir, validateMs 0');
  assert.deepEqual((await patient.readdir('d')).sort(), listing, 'readdir, validateMs 60000');
  assert.ok(cfs.stats().racyReads > 0);
});

test('a file read just after it changed is served from the disk and not kept; once its stamps are old enough it is cached', async (t) => {
  const root = tempDir(t);
  // Checking every call, and trusting what it keeps for a minute: neither
  // keeps a racy version. A window of a second, so that a loaded machine
  // still reads within it.
  const instances = [0, 60_000].map((validateMs) => new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB }), validateMs, timestampGranularityMs: 1000 }));
  t.after(() => Promise.all(instances.map((cfs) => cfs.close())));
  writeFileSync(path.join(root, 'f'), 'fresh');
  for (const cfs of instances) {
    assert.equal(await cfs.readFile('f', 'utf8'), 'fresh');
    assert.equal(cfs.readFileSync('f', 'utf8'), 'fresh');
  }
  for (const cfs of instances) {
    const { readHits, readMisses, racyReads } = cfs.stats();
    assert.deepEqual({ readHits, readMisses, racyReads }, { readHits: 0, readMisses: 2, racyReads: 2 });
  }
  while (isRacy(statSync(path.join(root, 'f')), Date.now(), 1000)) await sleep(20);
  for (const cfs of instances) {
    assert.equal(await cfs.readFile('f', 'utf8'), 'fresh');
    assert.equal(await cfs.readFile('f', 'utf8'), 'fresh');
    const { readHits, readMisses, racyReads } = cfs.stats();
    assert.deepEqual({ readHits, readMisses, racyReads }, { readHits: 1, readMisses: 3, racyReads: 2 });
  }
});

test('the window is judged per file from its ctime: whole seconds (or 10 ms steps) are coarse, anything else fine', () => {
  const at = 1_800_000_000_000;
  const window = (granularity) => granularity + CLOCK_MARGIN_MS;
  const stamped = (ctimeMs, mtimeMs = ctimeMs) => ({ ctimeMs, mtimeMs });
  // A fine stamp (sub-10 ms digits): racy within 50 ms of the read, not after.
  const fine = at - 7.123456;
  assert.equal(isRacy(stamped(fine), fine + window(FINE_GRANULARITY_MS), 0), true);
  assert.equal(isRacy(stamped(fine), fine + window(FINE_GRANULARITY_MS) + 1, 0), false);
  // Whole seconds (ext2, ext4 with 128-byte inodes), FAT's two seconds, exFAT's 10 ms: about 2 s.
  for (const coarse of [at - 1000, at - 2000, at - 30]) {
    assert.equal(isRacy(stamped(coarse), coarse + window(COARSE_GRANULARITY_MS), 0), true, `ctime ${coarse}`);
    assert.equal(isRacy(stamped(coarse), coarse + window(COARSE_GRANULARITY_MS) + 1, 0), false, `ctime ${coarse}`);
  }
  // The later of mtime and ctime counts; a stamp after the read is racy whatever its distance.
  assert.equal(isRacy(stamped(fine - 10_000, fine), fine + 40, 0), true);
  assert.equal(isRacy(stamped(fine - 10_000, at + 3_600_000), at, 0), true);
  assert.equal(isRacy(stamped(at + 3_600_000.5), at, 0), true);
  // options.timestampGranularityMs raises both; it never lowers them.
  assert.equal(isRacy(stamped(fine), fine + 500, 1000), true);
  assert.equal(isRacy(stamped(fine), fine + 1031, 1000), false);
  assert.equal(isRacy(stamped(at - 1000), at + 100, 5), true);
  // A stamp that is not a number is never trusted.
  assert.equal(isRacy(stamped(Number.NaN), at, 0), true);
});

test('an append never caches the cached bytes plus its own: another program may have rewritten them at the same size', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'log'), 'aaaa');
  await untilCacheable(root);
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB }), validateMs: 0 });
  t.after(() => cfs.close());
  assert.equal(await cfs.readFile('log', 'utf8'), 'aaaa');
  writeFileSync(path.join(root, 'log'), 'bbbb');
  await cfs.appendFile('log', 'cc');
  assert.equal(await cfs.readFile('log', 'utf8'), 'bbbbcc');
  await untilCacheable(root);
  assert.equal(await cfs.readFile('log', 'utf8'), 'bbbbcc', 'nor once its stamps are old');
});

test('options.timestampGranularityMs widens the window (another machine\'s clock), and must be an integer from 0 to 86400000', async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'f'), 'on a server whose clock is behind');
  await untilCacheable(root);
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const cfs = new CacheFS({ root, cache, validateMs: 0, timestampGranularityMs: 60_000 });
  t.after(() => cfs.close());
  for (let i = 0; i < 3; i++) await cfs.readFile('f');
  assert.deepEqual([cfs.stats().readHits, cfs.stats().racyReads], [0, 3]);
  const judged = new CacheFS({ root, cache, validateMs: 0 });
  t.after(() => judged.close());
  for (let i = 0; i < 3; i++) await judged.readFile('f');
  assert.deepEqual([judged.stats().readHits, judged.stats().racyReads], [2, 0]);
  for (const [value, error] of [
    [-1, RangeError],
    [1.5, RangeError],
    [86_400_001, RangeError],
    ['5', TypeError],
  ]) {
    const shown = typeof value === 'string' ? `"${value}"` : String(value);
    const message =
      error === TypeError
        ? `options.timestampGranularityMs must be a number (got ${shown})`
        : `options.timestampGranularityMs must be an integer from 0 (CacheFS's own judgement) to 86400000 milliseconds (got ${shown})`;
    assert.throws(() => new CacheFS({ root, cache, timestampGranularityMs: value }), { name: error.name, message });
  }
});

test('over an InodeFS, whose every change gets new times, a file is cached at once', async (t) => {
  const ifs = await openFs(t);
  const cfs = new CacheFS({ root: ifs, cache: new SharedCache({ memoryBytes: 4 * MiB }), validateMs: 0 });
  t.after(() => cfs.close());
  await ifs.writeFile('/f', 'just written');
  for (let i = 0; i < 3; i++) assert.equal(await cfs.readFile('f', 'utf8'), 'just written');
  assert.deepEqual([cfs.stats().readHits, cfs.stats().racyReads], [2, 0]);
});

test('write-back: a same-size write in the same millisecond as the one before is never hidden by a read in flight', async (t) => {
  const root = tempDir(t);
  const blocks = new BlockStore({ memoryBytes: MiB, blockBytes: 4096 });
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * MiB }), blocks, writeMode: 'write-back', validateMs: 0, flushIntervalMs: 0 });
  await cfs.writeFile('f', 'v000');
  let sameMillisecond = 0;
  const wrong = [];
  for (let i = 1; i <= 100; i++) {
    const started = Date.now();
    // A dirty version is named by its size and the millisecond of its write:
    // the read in flight finds the first version's record, and the store
    // naming the second, of the same size and millisecond, when it checks.
    await cfs.writeFile('f', `a${String(i).padStart(3, '0')}`);
    const reading = cfs.readFile('f', 'utf8');
    await cfs.writeFile('f', `b${String(i).padStart(3, '0')}`);
    if (Date.now() === started) sameMillisecond++;
    await reading;
    const read = await cfs.readFile('f', 'utf8');
    if (read !== `b${String(i).padStart(3, '0')}`) wrong.push(read);
  }
  // Flushed before the tree goes (an after hook would run after tempDir's).
  await cfs.close();
  blocks.close();
  assert.ok(sameMillisecond > 0, 'some pairs of writes fell in one millisecond');
  assert.deepEqual(wrong, [], `${wrong.length} reads after the second write of a pair were not it (${sameMillisecond} pairs in one millisecond)`);
});

// npm run bench:hit-ratio's recorded-trace mode: the trace formats (text
// lines, ARC .lis lines, big-endian 64-bit and 32-bit keys, libCacheSim's
// oracleGeneral records) read from a directory, compressed or not (gzip, xz,
// bzip2); the reference policies it computes (an
// exact LRU and S3-FIFO) on traces small enough to count by hand; and a run
// of the benchmark over such a directory.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { lruHitRatio, s3fifoHitRatio } from '../bench/hit-ratio/references.js';
import { readTraceDirectory, readTraceFile } from '../bench/hit-ratio/trace-files.js';

function tempDir(t) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'arenacache-traces-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function int64Keys(keys) {
  const bytes = Buffer.alloc(keys.length * 8);
  keys.forEach((key, i) => bytes.writeBigInt64BE(BigInt(key), i * 8));
  return bytes;
}

function int32Keys(keys) {
  const bytes = Buffer.alloc(keys.length * 4);
  keys.forEach((key, i) => bytes.writeInt32BE(key, i * 4));
  return bytes;
}

/** libCacheSim's oracleGeneral records (24 bytes, little-endian) of [time, id, size] requests; next access -1 throughout. */
function oracleGeneralRecords(requests) {
  const bytes = Buffer.alloc(requests.length * 24);
  requests.forEach(([time, id, size], i) => {
    bytes.writeUInt32LE(time, i * 24);
    bytes.writeBigUInt64LE(BigInt(id), i * 24 + 4);
    bytes.writeUInt32LE(size, i * 24 + 12);
    bytes.writeBigInt64LE(-1n, i * 24 + 16);
  });
  return bytes;
}

const missing = (command) => spawnSync(command, ['--version']).error && `the ${command} command is not installed`;

/** Keys read twice, a few requests apart, in blocks of `block` new keys then the same again (the Corda trace's pattern). */
function readTwice(blocks, block) {
  const trace = [];
  for (let b = 0; b < blocks; b++) {
    const keys = Array.from({ length: block }, (_, i) => b * block + i);
    trace.push(...keys, ...keys);
  }
  return Uint32Array.from(trace);
}

test('trace files: text lines, ARC .lis lines and 64-bit keys, plain or gzip, become dense ids in order of first request', (t) => {
  const dir = tempDir(t);
  writeFileSync(path.join(dir, 'ids.txt'), 'a\nb\n\na\nc\nb\n');
  writeFileSync(path.join(dir, 'pages.lis'), '100 3 0 0\n101 2 0 1\n');
  writeFileSync(path.join(dir, 'keys.gz'), zlib.gzipSync(int64Keys([-1, 2 ** 40, -1, 7])));
  writeFileSync(path.join(dir, 'README.md'), 'not a trace');
  const traces = readTraceDirectory(dir);
  assert.deepEqual(
    traces.map(({ name, format, trace, objects }) => ({ name, format, trace: [...trace], objects })),
    [
      { name: 'ids.txt', format: 'text', trace: [0, 1, 0, 2, 1], objects: 3 },
      { name: 'keys', format: 'int64', trace: [0, 1, 0, 2], objects: 3 },
      { name: 'pages.lis', format: 'arc', trace: [0, 1, 2, 1, 2], objects: 3 },
    ],
  );
  writeFileSync(path.join(dir, 'odd.bin'), Buffer.from([0, 1, 2]));
  assert.throws(() => readTraceFile(path.join(dir, 'odd.bin')), /odd\.bin: neither text lines, an ARC \.lis file, nor 64-bit keys \(3 bytes, not a multiple of 8\)/);
  writeFileSync(path.join(dir, 'bad.lis'), 'x y\n');
  assert.throws(() => readTraceFile(path.join(dir, 'bad.lis')), /bad\.lis: not an ARC trace line: "x y"/);
  assert.throws(() => readTraceDirectory(tempDir(t)), /holds no trace files/);
});

test('trace files compressed with xz are read through the xz command', { skip: missing('xz') }, (t) => {
  const dir = tempDir(t);
  writeFileSync(path.join(dir, 'ids.txt.xz'), execFileSync('xz', ['-c'], { input: 'x\ny\nx\n' }));
  const [trace] = readTraceDirectory(dir);
  assert.deepEqual({ name: trace.name, trace: [...trace.trace] }, { name: 'ids.txt', trace: [0, 1, 0] });
});

test('trace files compressed with bzip2 are read through the bzip2 command', { skip: missing('bzip2') }, (t) => {
  const dir = tempDir(t);
  writeFileSync(path.join(dir, 'keys.int32.bz2'), execFileSync('bzip2', ['-c'], { input: int32Keys([5, 6, 5, 5]) }));
  const [trace] = readTraceDirectory(dir);
  assert.deepEqual({ name: trace.name, format: trace.format, trace: [...trace.trace] }, { name: 'keys.int32', format: 'int32', trace: [0, 1, 0, 0] });
  writeFileSync(path.join(dir, 'broken.txt.bz2'), 'not bzip2');
  assert.throws(() => readTraceFile(path.join(dir, 'broken.txt.bz2')), /broken\.txt\.bz2: could not decompress with the bzip2 command/);
});

test('32-bit keys and oracleGeneral records are told by the name: NAME.int32, NAME.oracleGeneral(.bin), NAME.int64', (t) => {
  const dir = tempDir(t);
  // cache2k's keys are signed (the type in the top bits), CloudPhysics' unsigned: the same 4 bytes, the same key.
  writeFileSync(path.join(dir, 'orm.int32.gz'), zlib.gzipSync(int32Keys([-268435455, 7, -268435455, 2 ** 31 - 1, 7, 0])));
  // Records of size 0 are no request (libCacheSim skips them); ids are 64-bit, and equal low halves are not the same id.
  writeFileSync(path.join(dir, 'io.oracleGeneral.bin'), oracleGeneralRecords([[1, 42, 512], [1, 2n ** 40n + 42n, 512], [2, 9, 0], [2, 42, 4096], [3, 9, 512]]));
  writeFileSync(path.join(dir, 'io.oracleGeneral.gz'), zlib.gzipSync(oracleGeneralRecords([[1, 3, 1], [2, 3, 1]])));
  // Named int64, bytes that are also text are still keys: "abcdefgh" twice.
  writeFileSync(path.join(dir, 'ascii.int64'), 'abcdefghabcdefgh');
  writeFileSync(path.join(dir, 'lirs.trace'), '0\n1\n*\n0\n*\n');
  assert.deepEqual(
    readTraceDirectory(dir).map(({ name, format, trace, objects }) => ({ name, format, trace: [...trace], objects })),
    [
      { name: 'ascii.int64', format: 'int64', trace: [0, 0], objects: 1 },
      { name: 'io.oracleGeneral.bin', format: 'oracleGeneral', trace: [0, 1, 0, 2], objects: 3 },
      { name: 'io.oracleGeneral', format: 'oracleGeneral', trace: [0, 0], objects: 1 },
      { name: 'lirs.trace', format: 'text', trace: [0, 1, 0], objects: 2 },
      { name: 'orm.int32', format: 'int32', trace: [0, 1, 0, 2, 1, 3], objects: 4 },
    ],
  );
  // Unnamed, an even number of 32-bit keys reads as 64-bit keys: the reason for the name.
  writeFileSync(path.join(dir, 'unnamed'), int32Keys([1, 2, 1, 2]));
  assert.equal(readTraceFile(path.join(dir, 'unnamed')).format, 'int64');
  writeFileSync(path.join(dir, 'short.int32'), Buffer.alloc(6));
  assert.throws(() => readTraceFile(path.join(dir, 'short.int32')), /short\.int32: named as int32, but 6 bytes are not a whole number of 32-bit keys of 4 bytes \(2 bytes over\)/);
  writeFileSync(path.join(dir, 'short.oracleGeneral'), Buffer.alloc(40));
  assert.throws(() => readTraceFile(path.join(dir, 'short.oracleGeneral')), /short\.oracleGeneral: named as oracleGeneral, but 40 bytes are not a whole number of libCacheSim's oracleGeneral records of 24 bytes \(16 bytes over\)/);
  writeFileSync(path.join(dir, 'empty.oracleGeneral'), oracleGeneralRecords([[1, 5, 0]]));
  assert.throws(() => readTraceFile(path.join(dir, 'empty.oracleGeneral')), /empty\.oracleGeneral: no requests/);
});

test('the references: an exact LRU, and S3-FIFO whose small FIFO loses keys read twice a few requests apart', () => {
  // LRU of 2: 1 miss, 2 miss, 1 hit, 3 miss (evicts 2), 2 miss (evicts 1), 1 miss.
  assert.equal(lruHitRatio(Uint32Array.from([1, 2, 1, 3, 2, 1]), 2), 1 / 6);
  // Blocks of 5 new keys read twice: an LRU of 10 hits every second read.
  // Once the cache is full, S3-FIFO's small FIFO of 1 entry (10% of 10)
  // drops each key before its second read, which then enters the main FIFO
  // from the ghost, a miss: it hits only the 10 second reads of the keys
  // that filled the cache, 10 of 500.
  const corda = readTwice(50, 5);
  assert.equal(lruHitRatio(corda, 10), 0.5);
  assert.equal(s3fifoHitRatio(corda, 10), 10 / 500);
  // With a small FIFO of 5 keys (half of 10), the second reads hit.
  assert.equal(s3fifoHitRatio(corda, 10, 0.5), 0.5);
  // Frequent keys survive a scan in S3-FIFO's main FIFO; an LRU of 4 loses them.
  const scan = [];
  for (let round = 0; round < 20; round++) scan.push(1, 2, 1, 2, 100 + 3 * round, 101 + 3 * round, 102 + 3 * round, 1, 2);
  assert.ok(s3fifoHitRatio(Uint32Array.from(scan), 4) > lruHitRatio(Uint32Array.from(scan), 4));
});

test('the benchmark replays every trace of a directory beside an exact LRU, S3-FIFO and Belady (tiny traces)', { timeout: 120_000 }, (t) => {
  const dir = tempDir(t);
  writeFileSync(path.join(dir, 'corda-like'), int64Keys([...readTwice(200, 5)]));
  writeFileSync(path.join(dir, 'ids.txt'), Array.from({ length: 3000 }, (_, i) => `k${(i * 7919) % 500}`).join('\n'));
  const json = path.join(tempDir(t), 'hit-ratio.json');
  const script = fileURLToPath(new URL('../bench/hit-ratio.js', import.meta.url));
  const output = execFileSync(process.execPath, [script, '--traces', dir, '--json', json], { encoding: 'utf8', env: { ...process.env, HIT_SIZES: '1,10' } });
  const result = JSON.parse(readFileSync(json, 'utf8'));
  assert.equal(result.mode, 'recorded');
  assert.deepEqual(result.policies, ['lru', 'hybrid']);
  assert.deepEqual(result.rows.map(({ trace, size }) => `${trace} ${size}`), ['corda-like 1%', 'corda-like 10%', 'ids.txt 1%', 'ids.txt 10%']);
  for (const row of result.rows) {
    for (const name of ['lru', 'hybrid', 'exact LRU', 'S3-FIFO', 'belady']) assert.ok(row[name] >= 0 && row[name] <= 1, `${row.trace} ${row.size} ${name}: ${row[name]}`);
    assert.ok(row.belady >= row['exact LRU'] && row.belady >= row['S3-FIFO']);
  }
  // 2000 keys read twice: at 10% (200 entries) an exact LRU hits every second read.
  assert.equal(result.rows[1]['exact LRU'], 0.5);
  assert.match(output, /^trace\s+requests \/ objects\s+size\s+entries\s+lru\s+hybrid\s+exact LRU\s+S3-FIFO\s+belady\s+hybrid − best of LRU, S3-FIFO/m);
});

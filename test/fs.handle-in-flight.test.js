// A CacheFS handle's descriptor stays open while a call on it waits for the
// thread pool, as node:fs FileHandle's does: neither garbage collection of
// a handle dropped with a call in flight nor close() during one closes it
// under the call (which would then fail with EBADF, or read another file
// that took the descriptor's number meanwhile; or a write's fstat after it
// would find the descriptor gone). The first test runs in a child:
// --expose-gc, and a thread pool of one thread, held in open(2) of a FIFO
// until the script lets it go, so a call waits as long as the script needs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { tempDir } from './helpers/fs-tree.js';

const script = `
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedCache } from ${JSON.stringify(new URL('../lib/index.js', import.meta.url).href)};
import { CacheFS } from ${JSON.stringify(new URL('../lib/fs/index.js', import.meta.url).href)};
const root = fs.mkdtempSync('/tmp/arenacache-inflight-');
fs.writeFileSync(root + '/mine', 'MINE');
fs.writeFileSync(root + '/other', 'OTHER');
const fifo = root + '.fifo';
execFileSync('mkfifo', [fifo]);
const descriptors = () => fs.readdirSync('/proc/self/fd').length;
const before = descriptors();
const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * 2 ** 20 }) });
const leaks = [];
process.on('warning', (warning) => {
  if (warning.code === 'ARENACACHE_HANDLE_LEAK') leaks.push(warning.message);
});
// The pool's only thread waits in open(2) of the FIFO until a writer opens it.
const holdPool = () => new Promise((resolve) => fs.open(fifo, 'r', (error, fd) => resolve(error ?? fs.closeSync(fd))));
const releasePool = (held) => {
  fs.closeSync(fs.openSync(fifo, 'w'));
  return held;
};
const collect = async () => {
  for (let i = 0; i < 5; i++) {
    globalThis.gc();
    await sleep(10);
  }
};
// What a read through the descriptor (position null: never from the cache) gave.
const text = (read, buffer) => read.then(({ bytesRead }) => buffer.toString('utf8', 0, bytesRead), (error) => error.code);

async function readAndDrop(buffer) {
  const handle = await cfs.open('mine');
  const held = holdPool();
  return { read: handle.read(buffer, 0, 16, null), held };
}
const buffer = Buffer.alloc(16);
const dropped = await readAndDrop(buffer);
const droppedText = text(dropped.read, buffer);
await collect();
const leaksWhileReading = leaks.length;
let other = fs.openSync(root + '/other', 'r');
await releasePool(dropped.held);
const collected = { text: await droppedText, leaksWhileReading };
fs.closeSync(other);
await collect();
collected.leaksAfter = leaks.length;

const handle = await cfs.open('mine');
const held = holdPool();
const closingText = text(handle.read(buffer, 0, 16, null), buffer);
let closed = false;
const closing = handle.close().then(() => (closed = true));
await sleep(20);
const closedWhileReading = closed;
other = fs.openSync(root + '/other', 'r');
await releasePool(held);
const closedEarly = { text: await closingText, closedWhileReading };
await closing;
fs.closeSync(other);

await cfs.close();
console.log(JSON.stringify({ collected, closedEarly, descriptorsLeft: descriptors() - before }));
fs.rmSync(root, { recursive: true });
fs.rmSync(fifo);
`;

test('a handle collected or closed while its read waits for the thread pool reads its own file', { skip: !nativeAvailable && 'the native addon is not loaded' }, () => {
  const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
    timeout: 30_000,
  });
  assert.equal(run.status, 0, run.stderr);
  const { collected, closedEarly, descriptorsLeft } = JSON.parse(run.stdout);
  assert.deepEqual(collected, { text: 'MINE', leaksWhileReading: 0, leaksAfter: 1 }, 'a dropped handle is collected (with its warning) only once its read is done');
  assert.deepEqual(closedEarly, { text: 'MINE', closedWhileReading: false }, 'close() waits for the read in flight');
  assert.equal(descriptorsLeft, 0, 'every descriptor is closed in the end');
});

test('a write, truncate or stat followed at once by close() completes, as node:fs\'s does; calls after close() are ERR_HANDLE_CLOSED', { skip: !nativeAvailable && 'the native addon is not loaded' }, async (t) => {
  const root = tempDir(t);
  writeFileSync(path.join(root, 'f'), 'abcdef');
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * 2 ** 20 }) });
  t.after(() => cfs.close());
  // The answer of a call, or its error code.
  const settle = (call, value) => call.then(value, (error) => error.code);
  for (let i = 0; i < 5; i++) {
    const handle = await cfs.open('f', 'r+');
    const write = settle(handle.write(Buffer.from(`${i}${i}`), 0, 2, 0), (result) => result.bytesWritten);
    const truncate = settle(handle.truncate(4), () => 'truncated');
    const stat = settle(handle.stat(), (stats) => stats.isFile());
    const closing = handle.close();
    const closingAgain = handle.close();
    const later = settle(handle.read(Buffer.alloc(1), 0, 1, 0), () => 'read');
    assert.deepEqual(await Promise.all([write, truncate, stat, later]), [2, 'truncated', true, 'ERR_HANDLE_CLOSED']);
    assert.equal(closingAgain, closing, 'closing again gives the same promise');
    await closing;
    assert.equal(readFileSync(path.join(root, 'f'), 'utf8'), `${i}${i}cd`);
  }
});

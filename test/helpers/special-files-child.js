// A FIFO and a Unix socket inside a CacheFS root: every call on them must
// answer at once (ERR_FS_SPECIAL_FILE), never block a thread-pool thread or
// the event loop, also when write-back's flush finds a dirty file replaced
// by a FIFO. Run in a child process with a timeout: a regression hangs.
// Prints the outcome of each call as JSON.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { BlockStore, SharedCache } from '../../lib/index.js';
import { CacheFS } from '../../lib/fs/index.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'arenacache-special-'));
const server = net.createServer();
try {
  execFileSync('mkfifo', [path.join(root, 'fifo')]);
  await new Promise((resolve) => server.listen(path.join(root, 'socket'), resolve));
  writeFileSync(path.join(root, 'dirty.txt'), 'old');
  const blocks = new BlockStore({ memoryBytes: 2 ** 21 });
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 2 ** 22 }), writeMode: 'write-back', blocks, flushIntervalMs: 0 });
  const outcome = async (run) => {
    try {
      await run();
      return 'ok';
    } catch (error) {
      return `${error.code}: ${error.message}`;
    }
  };
  const results = {};
  // More calls than the thread pool has threads: blocked ones would starve the rest.
  for (let i = 0; i < 6; i++) results[`readFile ${i}`] = await outcome(() => cfs.readFile('fifo'));
  results.readFileSync = await outcome(() => cfs.readFileSync('fifo'));
  results.open = await outcome(() => cfs.open('fifo', 'r'));
  results.openForWriting = await outcome(() => cfs.open('fifo', 'w'));
  results.socket = await outcome(() => cfs.readFile('socket'));
  results.writeFile = await outcome(() => new CacheFS({ root, cache: new SharedCache({ memoryBytes: 2 ** 22 }) }).writeFile('fifo', 'x'));
  results.stat = await outcome(async () => {
    if (!(await cfs.stat('fifo')).isFIFO()) throw new Error('not a FIFO');
  });
  // A dirty file replaced by a FIFO before its flush: the flush fails (the file stays dirty), nothing blocks.
  await cfs.writeFile('dirty.txt', 'new');
  unlinkSync(path.join(root, 'dirty.txt'));
  execFileSync('mkfifo', [path.join(root, 'dirty.txt')]);
  results.flush = await outcome(() => cfs.flush());
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  await new Promise((resolve) => setTimeout(resolve, 200));
  clearInterval(timer);
  results.eventLoopTurned = ticks > 5;
  // node:fs on a regular file still works: no pool thread is stuck.
  results.poolFree = await outcome(() => import('node:fs/promises').then((fsp) => fsp.readFile(path.join(root, 'socket')).catch(() => fsp.stat(root))));
  await cfs.close().catch(() => {});
  console.log(JSON.stringify(results));
} finally {
  server.close();
  rmSync(root, { recursive: true, force: true });
}

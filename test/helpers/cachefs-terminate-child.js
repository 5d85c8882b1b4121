// Worker threads busy with CacheFS calls on the thread pool (reads, stats,
// listings, opens) are terminated, as a worker pool does on a timeout or a
// recycle; calls that complete while a worker is being torn down must not
// abort the process, nor leave the descriptors they opened. Prints
// { terminations, descriptorsBefore, descriptorsAfter } as JSON.
import { readdirSync } from 'node:fs';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

if (!isMainThread) {
  const { SharedCache } = await import('../../lib/index.js');
  const { CacheFS } = await import('../../lib/fs/index.js');
  const cfs = new CacheFS({ root: workerData.root, cache: new SharedCache({ memoryBytes: 2 ** 21 }), validateMs: 0 });
  parentPort.postMessage('ready');
  for (;;) {
    await Promise.all([
      cfs.readFile('big').catch(() => {}),
      cfs.stat('big'),
      cfs.readdir(''),
      cfs.open('big').then((handle) => handle.close()),
    ]);
  }
} else {
  const count = Number(process.argv[2] ?? 40);
  const base = mkdtempSync(path.join(os.tmpdir(), 'arenacache-terminate-'));
  const root = path.join(base, 'root');
  mkdirSync(root);
  // Larger than the cache: every read goes to the disk, through the thread pool.
  writeFileSync(path.join(root, 'big'), Buffer.alloc(8 * 2 ** 20, 1));
  const descriptors = () => readdirSync('/proc/self/fd').length;
  const descriptorsBefore = descriptors();
  for (let i = 0; i < count; i++) {
    const worker = new Worker(new URL(import.meta.url), { workerData: { root } });
    await new Promise((resolve) => worker.once('message', resolve));
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 30));
    await worker.terminate();
  }
  // Calls still on the pool when their worker went finish on their own.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const descriptorsAfter = descriptors();
  rmSync(base, { recursive: true, force: true });
  console.log(JSON.stringify({ terminations: count, descriptorsBefore, descriptorsAfter }));
}

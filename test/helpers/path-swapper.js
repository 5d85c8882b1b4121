// An attacker for race tests: a worker thread that exchanges two paths
// (renameat2 RENAME_EXCHANGE, through the addon) as fast as it can, so that
// a directory is a symbolic link for about half of any moment, until
// stopped. Each exchange is atomic: both names always exist.
import { once } from 'node:events';
import { isMainThread, Worker, workerData } from 'node:worker_threads';
import { exchangePaths } from '../../lib/native.js';

/**
 * Starts exchanging `a` and `b`; `stop()` resolves to the number of
 * exchanges made, with `a` and `b` back where they started.
 */
export async function startSwapper(a, b) {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(new URL(import.meta.url), { workerData: { swapper: { a, b, flag } } });
  await once(worker, 'message');
  return {
    async stop() {
      Atomics.store(flag, 0, 1);
      const [swaps] = await once(worker, 'message');
      await once(worker, 'exit');
      return swaps;
    },
  };
}

if (!isMainThread && workerData?.swapper) {
  const { a, b, flag } = workerData.swapper;
  const { parentPort } = await import('node:worker_threads');
  parentPort.postMessage('started');
  let swaps = 0;
  while (Atomics.load(flag, 0) === 0) {
    exchangePaths(a, b);
    swaps++;
  }
  if (swaps % 2 === 1) exchangePaths(a, b);
  parentPort.postMessage(swaps);
}

// An attacker for race tests: a worker thread that exchanges two paths
// (renameat2 RENAME_EXCHANGE, through the addon) as fast as it can, so that
// a directory is a symbolic link for about half of any moment, until
// stopped. Each exchange is atomic: both names always exist.
import { Worker } from 'node:worker_threads';

const swapperFile = new URL('../fixtures/path-swapper-worker.js', import.meta.url);

/**
 * Starts exchanging `a` and `b`; `stop()` resolves to the number of
 * exchanges made, with `a` and `b` back where they started.
 */
export async function startSwapper(a, b) {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(swapperFile, { workerData: { a, b, flag } });
  // One listener for the worker's whole life: with once() per message, the
  // count posted just before the worker exits was sometimes never delivered
  // (seen on Node 20 when the main thread had been busy without yielding).
  let swaps = null;
  let started;
  const ready = new Promise((resolve) => {
    started = resolve;
  });
  worker.on('message', (message) => {
    if (message === 'started') started();
    else swaps = message;
  });
  const exited = new Promise((resolve, reject) => {
    worker.once('exit', resolve);
    worker.once('error', reject);
  });
  await Promise.race([ready, exited]);
  return {
    async stop() {
      Atomics.store(flag, 0, 1);
      await exited;
      return swaps;
    },
  };
}

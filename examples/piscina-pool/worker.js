// The pool's task: an expensive report, computed once for the whole pool
// through the shared cache.
import { threadId } from 'node:worker_threads';
import { workerData } from 'piscina';
import { SharedCache } from 'arenacache';

// Once per worker thread: every task of this thread reuses the instance.
const cache = SharedCache.attach(workerData.handle);

/** Something worth caching: the primes below a limit that depends on the id (a few ms of CPU). */
function buildReport(id) {
  const limit = 200_000 + id * 10_000;
  const composite = new Uint8Array(limit);
  let count = 0;
  let largest = 0;
  for (let n = 2; n < limit; n++) {
    if (composite[n]) continue;
    count++;
    largest = n;
    for (let m = n * n; m < limit; m += n) composite[m] = 1;
  }
  return { id, limit, primes: count, largest, builtBy: threadId };
}

export default async function task({ id }) {
  const report = await cache.fetch(`report:${id}`, () => buildReport(id), { ttl: 60_000 });
  return { report, thread: threadId };
}

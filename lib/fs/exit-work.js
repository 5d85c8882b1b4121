// Synchronous work that CacheFS instances left open must still do when the
// process (or worker) exits: write-back flushes, access statistics. Only
// synchronous work runs then; close() takes an instance's work off the list.

const exitWork = new Set();
let exitHooked = false;

/** Runs `work` at exit, unless cancelAtExit(work) comes first. */
export function runAtExit(work) {
  exitWork.add(work);
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const each of exitWork) each();
  });
}

export function cancelAtExit(work) {
  exitWork.delete(work);
}

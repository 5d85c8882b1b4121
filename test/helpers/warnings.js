// Catching the process warnings some code emits.
import { setImmediate as tick } from 'node:timers/promises';

/**
 * The warnings with `code` that `run` (sync or async) emits. Process
 * warnings arrive on a later tick: earlier tests' are let through first, and
 * `run`'s are waited for.
 */
export async function warningsOf(t, code, run) {
  await tick();
  const seen = [];
  const listener = (warning) => {
    if (warning.code === code) seen.push(warning);
  };
  process.on('warning', listener);
  t.after(() => process.off('warning', listener));
  await run();
  await tick();
  await tick();
  process.off('warning', listener);
  return seen;
}

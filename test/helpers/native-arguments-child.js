// Runs the wrong-argument cases of native-argument-cases.js against the raw
// addon, from case number argv[3] on, and writes one JSON line per case as
// soon as it is done (writeSync: a line written is not lost if a later case
// aborts the process, so the parent knows which case did).
//   node native-arguments-child.js <addon binary> <first case>
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { argumentCases, asyncExports } from './native-argument-cases.js';

const [binary, first] = process.argv.slice(2);
const addon = createRequire(import.meta.url)(binary);
const cases = argumentCases();

// A call that returned a Promise instead of throwing is awaited (bounded),
// so that a crash on the thread pool is charged to the case that caused it.
const SETTLE_MS = 2000;
// An async export that threw may still have queued work (it did, before
// the addon checked its arguments: the work then crashed the process on
// its return); a moment lets that happen within its own case.
const AFTER_THROW_MS = 5;

function settle(promise) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve({ outcome: 'pending' }), SETTLE_MS);
  });
  const settled = promise.then(
    (value) => ({ outcome: 'resolved', value: typeof value }),
    (error) => ({ outcome: 'rejected', name: error?.name, message: error?.message }),
  );
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer));
}

for (let index = Number(first); index < cases.length; index++) {
  const { fn, label, args } = cases[index];
  let result;
  try {
    const value = addon[fn](...args());
    result = value instanceof Promise ? await settle(value) : { outcome: 'returned', value: typeof value };
  } catch (error) {
    result = { outcome: 'threw', name: error?.name, message: error?.message };
    if (asyncExports.has(fn)) await new Promise((resolve) => setTimeout(resolve, AFTER_THROW_MS));
  }
  writeSync(1, `${JSON.stringify({ index, fn, label, ...result })}\n`);
}
// The addon still works after all those errors.
writeSync(1, `${JSON.stringify({ done: true, tid: addon.currentThreadId() })}\n`);

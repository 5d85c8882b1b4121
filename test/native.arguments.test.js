// Every export of the raw native addon, called with wrong arguments (none,
// too few, too many, each argument of a wrong type or out of range, values
// inside its objects and arrays, getters that throw or detach a buffer),
// throws a TypeError or RangeError naming the argument, and the process
// lives on. lib/native/ checks arguments before they cross; these are the
// addon's own checks, for every other caller. The calls run in a child
// process, so that an abort or a crash is seen as the child's exit.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'node:test';
import { nativeAvailable, nativeBinary } from '../lib/native/addon.js';
import { argumentCases, coveredExports } from './helpers/native-argument-cases.js';

const skip = !nativeAvailable && 'native addon unavailable';
const child = fileURLToPath(new URL('./fixtures/native-arguments-child.js', import.meta.url));

/**
 * What each case did: its JSON line, or { outcome: 'crashed', ... } for the
 * case a child died in (a fresh child then carries on after it).
 */
function runCases(count) {
  const results = new Array(count);
  let first = 0;
  let finished = null;
  while (first <= count && finished === null) {
    const run = spawnSync(process.execPath, [child, nativeBinary, String(first)], { encoding: 'utf8', timeout: 60_000 });
    const lines = run.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
    for (const line of lines) {
      if (line.done) finished = line;
      else results[line.index] = line;
    }
    const last = lines.filter((line) => !line.done).at(-1);
    const next = last === undefined ? first : last.index + 1;
    if (run.status === 0 && run.signal === null) break;
    if (next < count) {
      const stderr = run.stderr.trim().split('\n').slice(0, 3).join(' | ');
      results[next] = { outcome: 'crashed', status: run.status, signal: run.signal, stderr };
    }
    first = next + 1;
  }
  return { results, finished };
}

test('every function the addon exports has wrong-argument cases', { skip }, () => {
  const addon = createRequire(import.meta.url)(nativeBinary);
  const functions = Object.keys(addon).filter((name) => typeof addon[name] === 'function').sort();
  assert.deepEqual(functions, [...coveredExports].sort());
  const cases = argumentCases();
  for (const fn of coveredExports) {
    assert.ok(cases.some((c) => c.fn === fn && /^\d+ arguments?$/.test(c.label)), `${fn} has no case with a wrong number of arguments`);
  }
});

test('each addon export called with wrong arguments throws, and the process survives', { skip }, () => {
  const cases = argumentCases();
  const { results, finished } = runCases(cases.length);
  const wrong = [];
  cases.forEach(({ fn, label, error }, index) => {
    const result = results[index] ?? { outcome: 'not run' };
    const expected = { outcome: 'threw', name: error.name, message: error.message };
    const actual = { outcome: result.outcome, name: result.name, message: result.message };
    if (result.outcome === 'crashed') Object.assign(actual, { status: result.status, signal: result.signal, stderr: result.stderr });
    try {
      assert.deepEqual(actual, expected);
    } catch {
      wrong.push({ call: `${fn}: ${label}`, expected, actual });
    }
  });
  assert.deepEqual(wrong, [], `${wrong.length} of ${cases.length} calls did not throw as expected`);
  assert.ok(finished !== null && Number.isInteger(finished.tid), 'the child did not finish its cases');
});

// Pages of a mapping past the end of its file fault with SIGBUS when read:
// the addon refuses such a size rather than hand out a buffer that crashes
// the process at its first read there.
test('fileMap refuses a size beyond the file', { skip }, (t) => {
  const addon = createRequire(import.meta.url)(nativeBinary);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'arenacache-filemap-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'small');
  writeFileSync(file, Buffer.alloc(100));
  const fd = openSync(file, 'r+');
  t.after(() => closeSync(fd));
  assert.throws(() => addon.fileMap(fd, 4096, 0), {
    name: 'RangeError',
    message: "fileMap: argument 2 (size) must be at most the file's size, 100 bytes (got 4096)",
  });
  assert.throws(() => addon.fileMap(fd, 101, 0), {
    name: 'RangeError',
    message: "fileMap: argument 2 (size) must be at most the file's size, 100 bytes (got 101)",
  });
});

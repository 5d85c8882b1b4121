// A worker terminated while its CacheFS calls are on the thread pool: their
// completion meets a torn-down environment, which must neither abort the
// process (node-addon-api's fatal error on a failed napi call) nor leak
// what the calls opened. In a child process, since the failure is an abort.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { nativeAvailable } from '../lib/native/addon.js';

const child = fileURLToPath(new URL('./fixtures/cachefs-terminate-child.js', import.meta.url));

test('terminating workers in the middle of CacheFS calls neither aborts the process nor leaks descriptors', { skip: !nativeAvailable && 'the native addon is not loaded' }, () => {
  const run = spawnSync(process.execPath, [child, process.env.STRESS === '1' ? '200' : '40'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(run.signal, null, `the process died of ${run.signal}: ${run.stderr.slice(-600)}`);
  assert.equal(run.status, 0, run.stderr.slice(-600));
  // Handles' descriptors are the addon's: node:fs must not be asked to close them in a worker.
  assert.doesNotMatch(run.stderr, /closed but not opened/);
  const { terminations, descriptorsBefore, descriptorsAfter } = JSON.parse(run.stdout);
  assert.ok(terminations >= 40);
  // Each terminated worker's root descriptor is closed by node with the worker; opened files must be too.
  assert.ok(descriptorsAfter <= descriptorsBefore + 2, `descriptors: ${descriptorsBefore} before, ${descriptorsAfter} after`);
});

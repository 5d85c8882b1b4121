// The component walk holds one directory descriptor at a time, whatever the
// depth: a tree deeper than the descriptor limit (anyone who can write in
// the root can make one) must not make a read fail with EMFILE, nor starve
// the process of descriptors while it resolves.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { nativeAvailable } from '../lib/native/addon.js';

const child = fileURLToPath(new URL('./fixtures/deep-walk-child.js', import.meta.url));

test('a path 1000 directories deep resolves through the walk under a limit of 256 descriptors', { skip: !nativeAvailable && 'the native addon is not loaded' }, () => {
  const run = spawnSync('sh', ['-c', `ulimit -n 256 && exec "${process.execPath}" "${child}" 1000`], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr.slice(-600));
  assert.equal(JSON.parse(run.stdout), 'at the bottom');
});

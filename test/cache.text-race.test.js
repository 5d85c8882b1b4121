// A string value read while another thread rewrites it in place: the read
// returns the old or the new string, and never crashes the process (V8's
// UTF-8 decoder, given shared memory that changes between its two passes,
// wrote past the end of the string it had sized: SIGSEGV).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import test from 'node:test';
import { STRESS } from './helpers/seeded-random.js';

test('reading a string while another thread rewrites it returns one of the two and never crashes', () => {
  const child = new URL('./fixtures/text-race-child.js', import.meta.url).pathname;
  for (const length of [40, 2000]) {
    const run = spawnSync(process.execPath, [child, String(length), String(STRESS ? 10_000 : 1500)], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.signal, null, `the reader died of ${run.signal} (strings of ${2 * length} bytes)`);
    assert.equal(run.status, 0, run.stderr);
    assert.ok(JSON.parse(run.stdout).reads > 1000);
  }
});

// The demo (demo/cache) runs its three modes (no cache, a private LRU, the
// shared cache) at tiny sizes with counts that add up, and rejects bad flags
// with a clear message.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'node:test';

test('the demo runs its three modes and the counts add up (tiny sizes)', () => {
  const data = mkdtempSync(path.join(os.tmpdir(), 'arenacache-demo-test-'));
  try {
    const output = execFileSync(
      process.execPath,
      [fileURLToPath(new URL('../demo/cache/index.js', import.meta.url)), '--json', '--requests', '400', '--keys', '300', '--workers', '2', '--cache-entries', '100', '--data', data],
      { encoding: 'utf8' },
    );
    const { results } = JSON.parse(output);
    assert.deepEqual(results.map((r) => r.mode), ['none', 'lru', 'shared']);
    for (const result of results) {
      assert.equal(result.requests, 400);
      assert.equal(result.hits + result.queries, result.requests);
      assert.ok(result.elapsedMs > 0 && result.rssBytes > 0);
    }
    assert.equal(results[0].queries, 400, 'without a cache every request queries the database');
    assert.ok(results[1].hits > 0 && results[2].hits > 0);
    assert.equal(results[2].sharedStats.fetchLoads, results[2].queries, 'with the shared cache every query ran as a fetch() loader');
    assert.equal(results[2].sharedStats.fetches, results[2].requests);
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
});

test('the demo rejects bad flags with a clear message', () => {
  assert.throws(
    () => execFileSync(process.execPath, [fileURLToPath(new URL('../demo/cache/index.js', import.meta.url)), '--workers', 'two'], { encoding: 'utf8', stdio: 'pipe' }),
    (error) => {
      assert.equal(error.status, 2);
      assert.match(error.stderr, /--workers \(DEMO_WORKERS\) must be a positive integer \(got "two"\)/);
      return true;
    },
  );
});

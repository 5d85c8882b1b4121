// Each CacheFS on a directory holds its root open (every path is resolved
// beneath that descriptor). close() lets go of it; so does garbage
// collection of a CacheFS dropped without close(), as node:fs does for a
// FileHandle. In a child, for --expose-gc.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import test from 'node:test';
import { nativeAvailable } from '../lib/native/addon.js';

const script = `
import fs from 'node:fs';
import { SharedCache } from ${JSON.stringify(new URL('../lib/index.js', import.meta.url).href)};
import { CacheFS } from ${JSON.stringify(new URL('../lib/fs/index.js', import.meta.url).href)};
const root = fs.mkdtempSync('/tmp/arenacache-rootfd-');
fs.writeFileSync(root + '/f', 'x');
const cache = new SharedCache({ memoryBytes: 4 * 2 ** 20 });
const count = () => fs.readdirSync('/proc/self/fd').length;
const before = count();
for (let i = 0; i < 200; i++) await new CacheFS({ root, cache }).readFile('f');
const dropped = count();
for (let i = 0; i < 10 && count() > before + 2; i++) {
  globalThis.gc();
  await new Promise((resolve) => setTimeout(resolve, 20));
}
const collected = count();
for (let i = 0; i < 200; i++) {
  const cfs = new CacheFS({ root, cache });
  await cfs.readFile('f');
  await cfs.close();
}
console.log(JSON.stringify({ before, dropped, collected, closed: count() }));
fs.rmSync(root, { recursive: true });
`;

test('a CacheFS lets go of its root descriptor on close(), and when collected without it', { skip: !nativeAvailable && 'the native addon is not loaded' }, () => {
  const run = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
  const { before, dropped, collected, closed } = JSON.parse(run.stdout);
  assert.ok(dropped >= before + 200, `each CacheFS holds its root while alive (${before} before, ${dropped} after 200)`);
  assert.ok(collected <= before + 2, `collected ones let go (${collected} left)`);
  assert.ok(closed <= collected + 2, `closed ones let go (${closed} left)`);
});

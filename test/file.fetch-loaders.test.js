// fetch() in several processes: a loader running in another process is
// waited for while it lives, in this PID namespace or another, and its
// flight abandoned at once when its process dies.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath } from './helpers/arena-files.js';
import { unshareMissing } from './helpers/unshare.js';

const child = fileURLToPath(new URL('./fixtures/fetch-loader-child.js', import.meta.url));
const skip = !nativeAvailable && 'native addon unavailable';

/** Starts the child (in a new PID namespace with `unshare`) and resolves once its loader runs. */
async function startLoader(path, key, unshare) {
  const command = unshare ? 'unshare' : process.execPath;
  const args = [...(unshare ? ['-p', '-f', '--kill-child', '--mount-proc', process.execPath] : []), child, JSON.stringify({ path, key })];
  const loader = spawn(command, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const [first] = await once(createInterface({ input: loader.stdout }), 'line');
  assert.equal(first, 'loading');
  return { loader };
}

for (const unshare of [false, true]) {
  const where = unshare ? 'in another PID namespace' : 'in this PID namespace';
  test(`a live loader ${where} is waited for, not abandoned`, { skip: unshare ? unshareMissing() : skip }, async (t) => {
    const path = arenaPath(t);
    const cache = SharedCache.open(path, { memoryBytes: 4 * 2 ** 20, fetchTimeoutMs: 60_000 });
    t.after(() => cache.close());
    const { loader } = await startLoader(path, 'k', unshare);
    const exited = once(loader, 'exit');
    let ownLoads = 0;
    const fetched = cache.fetch('k', () => {
      ownLoads++;
      return 'loaded here';
    });
    // Several polls of the flight (every 10 ms for a file) pass meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 300));
    loader.stdin.write('resolve\n');
    assert.equal(await fetched, 'from the child');
    assert.equal(ownLoads, 0);
    assert.deepEqual(await exited, [0, null]);
  });

  test(`a loader killed ${where} is abandoned at once`, { skip: unshare ? unshareMissing() : skip }, async (t) => {
    const path = arenaPath(t);
    const cache = SharedCache.open(path, { memoryBytes: 4 * 2 ** 20, fetchTimeoutMs: 60_000 });
    t.after(() => cache.close());
    const { loader } = await startLoader(path, 'k', unshare);
    const exited = once(loader, 'exit');
    loader.kill('SIGKILL');
    await exited;
    const started = performance.now();
    assert.equal(await cache.fetch('k', () => 'loaded here'), 'loaded here');
    assert.ok(performance.now() - started < 2000, `waited ${performance.now() - started} ms for a dead loader`);
  });
}

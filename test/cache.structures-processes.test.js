// Object shapes live in the arena file: a process decodes objects whose
// shapes another process added, both ways, and a cache reopened after every
// process closed it decodes what was stored before.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import test from 'node:test';
import { nativeAvailable } from '../lib/native/addon.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { readShapes, writeShapes } from './helpers/shapes.js';
import { MiB } from './helpers/units.js';

const skip = !nativeAvailable && 'native addon unavailable';
const childFile = new URL('./fixtures/shape-child.js', import.meta.url);

async function runChild(settings) {
  const child = fork(childFile, [JSON.stringify(settings)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit');
  const [message] = await once(child, 'message');
  const [code] = await exited;
  assert.equal(code, 0);
  return message;
}

test('a child process adds shapes that this process decodes, and decodes the shapes this process adds', { skip }, async (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 16 * MiB });
  t.after(() => cache.close());
  const written = await runChild({ mode: 'write', path, tag: 'child', from: 0, to: 300 });
  assert.deepEqual(written.verify, { ok: true, problems: [] });
  assert.deepEqual(readShapes(cache, 'child', 0, 300), { ok: 300, missing: 0, wrong: 0 });
  writeShapes(cache, 'parent', 0, 300);
  const { counts } = await runChild({ mode: 'read', path, tag: 'parent', from: 0, to: 300 });
  assert.deepEqual(counts, { ok: 300, missing: 0, wrong: 0 });
});

test('two processes adding shapes at once: each decodes the other\'s', { skip }, async (t) => {
  const path = arenaPath(t);
  const cache = SharedCache.open(path, { memoryBytes: 16 * MiB });
  t.after(() => cache.close());
  await Promise.all(['one', 'two'].map((tag) => runChild({ mode: 'write', path, tag, from: 0, to: 300 })));
  const reports = await Promise.all(['one', 'two'].map((tag) => runChild({ mode: 'read', path, tag: tag === 'one' ? 'two' : 'one', from: 0, to: 300 })));
  for (const { counts, verify } of reports) {
    assert.deepEqual(counts, { ok: 300, missing: 0, wrong: 0 });
    assert.deepEqual(verify, { ok: true, problems: [] });
  }
});

test('reopened after every process closed it, the cache decodes the objects stored before', { skip }, async (t) => {
  const path = arenaPath(t);
  SharedCache.open(path, { memoryBytes: 4 * MiB }).close();
  await runChild({ mode: 'write', path, tag: 'before', from: 0, to: 200 });
  const reopened = SharedCache.open(path);
  assert.deepEqual(readShapes(reopened, 'before', 0, 200), { ok: 200, missing: 0, wrong: 0 });
  // New shapes after the restart go after the old ones; both decode in a new process.
  writeShapes(reopened, 'after', 0, 100);
  reopened.close();
  const first = await runChild({ mode: 'read', path, tag: 'before', from: 0, to: 200 });
  const second = await runChild({ mode: 'read', path, tag: 'after', from: 0, to: 100 });
  assert.deepEqual(first.counts, { ok: 200, missing: 0, wrong: 0 });
  assert.deepEqual(second.counts, { ok: 100, missing: 0, wrong: 0 });
});

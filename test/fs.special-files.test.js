// FIFOs, sockets and devices inside a CacheFS root: anyone who can write in
// the root can put one where a file was. node:fs would block on a FIFO
// forever (a thread-pool thread per read, the event loop for a sync call or
// write-back's flush); CacheFS refuses them at once with ERR_FS_SPECIAL_FILE.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { nativeAvailable } from '../lib/native/addon.js';

const child = fileURLToPath(new URL('./fixtures/special-files-child.js', import.meta.url));

test('a FIFO or a socket in the root is refused at once, by every call, and never blocks a thread', { skip: !nativeAvailable && 'the native addon is not loaded' }, () => {
  const run = spawnSync(process.execPath, [child], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.signal, null, `the child hung and was killed: ${run.stderr.slice(-400)}`);
  assert.equal(run.status, 0, run.stderr.slice(-600));
  const results = JSON.parse(run.stdout);
  const refused = (kind, name) => `ERR_FS_SPECIAL_FILE: path "${name}" is ${kind}, not a regular file: CacheFS reads, writes and opens regular files only`;
  for (let i = 0; i < 6; i++) assert.equal(results[`readFile ${i}`], refused('a FIFO', 'fifo'));
  assert.equal(results.readFileSync, refused('a FIFO', 'fifo'));
  assert.equal(results.open, refused('a FIFO', 'fifo'));
  assert.equal(results.openForWriting, refused('a FIFO, a socket or a device', 'fifo'));
  assert.equal(results.socket, refused('a FIFO, a socket or a device', 'socket'));
  assert.equal(results.writeFile, refused('a FIFO, a socket or a device', 'fifo'));
  assert.equal(results.stat, 'ok', 'stat() of a FIFO works as node:fs does');
  assert.match(results.flush, /^ERR_FLUSH_FAILED: 1 dirty file\(s\) could not be written to disk and stay dirty, to be retried: dirty\.txt \(ERR_FS_SPECIAL_FILE\)$/);
  assert.equal(results.eventLoopTurned, true);
  assert.equal(results.poolFree, 'ok');
});

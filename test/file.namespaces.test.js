// Processes in different PID namespaces (containers sharing /dev/shm) use
// one arena file. A pid from another namespace means nothing here: kill(pid,
// 0) says "no such process" for a live process there, or names an unrelated
// one. Lock holders are therefore recognised by a kernel lock each thread
// holds on a byte of the file, which the kernel drops when the thread's
// process dies, whatever namespace asks: no live holder's lock is taken
// over, no healthy shard reset.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { unshareMissing } from './helpers/unshare.js';

const run = promisify(execFile);
const hammer = fileURLToPath(new URL('./fixtures/namespace-hammer.js', import.meta.url));

test('two processes in different PID namespaces share one shard without taking over each other\'s locks', { skip: unshareMissing() }, async (t) => {
  const path = arenaPath(t);
  // One shard: every write of both processes contends for the same lock.
  SharedCache.open(path, { memoryBytes: 4 * 2 ** 20, shards: 1 }).close();
  const settings = (writer) => JSON.stringify({ path, ms: 1500, writer });
  const [inside, outside] = await Promise.all([
    run('unshare', ['-p', '-f', '--mount-proc', process.execPath, hammer, settings(1)]),
    run(process.execPath, [hammer, settings(2)]),
  ]);
  const reports = [inside, outside].map(({ stdout }) => JSON.parse(stdout));
  for (const report of reports) {
    assert.ok(report.ops > 1000, `only ${report.ops} operations`);
    assert.equal(report.torn, 0);
    assert.equal(report.foreign, 0);
    assert.deepEqual(report.problems, []);
  }
  assert.ok(reports[0].pid < 10, `the first process runs in a namespace of its own (pid ${reports[0].pid} there)`);
  // Stats are arena-wide: neither process took over a lock or reset a shard.
  assert.equal(reports[1].lockRecoveries, 0);
  assert.equal(reports[1].shardRepairs, 0);
  const cache = SharedCache.open(path);
  t.after(() => cache.close());
  assert.equal(cache.stats().lockRecoveries, 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

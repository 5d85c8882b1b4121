// The readers of a group- or world-readable arena file (a mode open()
// accepts) may take read locks on it: the kernel grants them to anyone who
// may open the file. A thread holds a write lock on its claim's byte while
// it lives; a reader's read lock on the byte of an owner that
// died must not make that owner look alive (its lock would then never be
// taken over, and the writers of its shard would give up, call after call).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import test from 'node:test';
import { openArenaFile } from '../lib/arena/common/file.js';
import { CACHE_ARENA } from '../lib/cache/open.js';
import { M_OWNER_TID } from '../lib/arena/common/shard-meta.js';
import { releaseMappedArena } from '../lib/arena/common/file-backing.js';
import { SharedCache } from '../lib/index.js';
import { nativeAvailable } from '../lib/native/addon.js';
import { arenaPath, killProcess, startProcess } from './helpers/arena-files.js';
import { MiB } from './helpers/units.js';

const skip = (!nativeAvailable && 'native addon unavailable') || (process.getuid?.() !== 0 && 'needs root to read-lock the file as another user (uid 65534)');

/** Where a claim's liveness byte lies in the file (src/native/mapped_file.cc kLivenessBase). */
const LIVENESS_BASE = 2 ** 40;

/** A process of user 65534 that opens `path` read-only and read-locks `length` bytes from `offset`; resolves once it holds the lock. */
async function readLockAs65534(t, path, offset, length = 1) {
  const code = [
    'import fcntl, os, sys, time',
    'fd = os.open(sys.argv[1], os.O_RDONLY)',
    'fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB, int(sys.argv[3]), int(sys.argv[2]), 0)',
    'print("locked", flush=True)',
    'time.sleep(120)',
  ].join('\n');
  const reader = spawn('python3', ['-c', code, path, String(offset), String(length)], { uid: 65534, gid: 65534, stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => reader.kill('SIGKILL'));
  const lines = createInterface({ input: reader.stdout });
  const [line] = await Promise.race([
    once(lines, 'line'),
    once(reader, 'exit').then(([status]) => {
      throw new Error(`the reader exited (${status}) before locking`);
    }),
  ]);
  assert.equal(line, 'locked');
}

test('a reader\'s read lock on the slot byte of a holder that died does not keep its lock from being taken over', { skip }, async (t) => {
  const path = arenaPath(t);
  // World-readable on purpose (open() warns), and a lease of a minute: only recognising the dead holder gets a writer through.
  const onWarning = () => {};
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const cache = SharedCache.open(path, { memoryBytes: 4 * MiB, shards: 1, lockLeaseMs: 60_000, mode: 0o644 });
  t.after(() => cache.close());
  cache.set('before', 'kept');
  const { child } = await startProcess({ mode: 'hold-lock', path, shard: 0 });
  // The claim the holder recorded with its lock (its owner id is the claim id, negated).
  const { arena } = openArenaFile(path, { plan: null, reset: false, mode: 0o600, populate: false, kind: CACHE_ARENA });
  const claimId = -arena.shards[0].meta[M_OWNER_TID];
  releaseMappedArena(arena);
  assert.ok(claimId >= 1, 'the holder recorded its claim');
  await killProcess(child);
  await readLockAs65534(t, path, LIVENESS_BASE + claimId);

  const started = performance.now();
  cache.set('after', 'works');
  const took = performance.now() - started;
  assert.ok(took < 1000, `took ${Math.round(took)} ms`);
  assert.equal(cache.get('after'), 'works');
  assert.equal(cache.get('before'), 'kept');
  const stats = cache.stats();
  assert.equal(stats.lockRecoveries, 1);
  assert.equal(stats.lockTimeouts, 0);
  assert.deepEqual(cache.verify(), { ok: true, problems: [] });
});

test('a reader that read-locks every claim byte keeps new threads out with a clear error, never with an identity that cannot be told', { skip }, async (t) => {
  const path = arenaPath(t);
  const onWarning = () => {};
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  SharedCache.open(path, { memoryBytes: 4 * MiB, mode: 0o644 }).close();
  await readLockAs65534(t, path, LIVENESS_BASE + 1, 2 ** 30);
  assert.throws(() => SharedCache.open(path), {
    name: 'ArenaCacheError',
    code: 'ERR_ARENA_BUSY',
    message:
      'could not claim a thread identity in the arena file: 64 random claim bytes were all locked (a process that may read the file holds locks on them: keep arena files 0o600)',
  });
});

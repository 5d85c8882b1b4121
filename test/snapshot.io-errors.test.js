// Workspace snapshots, verify, status and cloneTree fail on I/O with
// ERR_SNAPSHOT_IO, naming the path, with the OS error as the cause: never
// with a raw errno error. The race: another thread keeps exchanging a
// directory of the tree with a symbolic link to a directory outside it;
// beyond failing cleanly, no snapshot or clone may hold a byte from
// outside. STRESS=1 runs the race for 20 s instead of 1.5 s.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { getSystemErrorMap } from 'node:util';
import { nativeAvailable } from '../lib/native/addon.js';
import { JOB_HASH } from '../lib/native/file-jobs.js';
import { JobList } from '../lib/snapshot/engine.js';
import { ArenaCacheError, cloneTree, codes, Workspace } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { startSwapper } from './helpers/path-swapper.js';
import { readTree, writeTree } from './helpers/workspace-tree.js';

const skip = !nativeAvailable && 'native addon unavailable';
const DURATION_MS = process.env.STRESS === '1' ? 20_000 : 1500;
const OUTSIDE = 'outside data, never to be snapshotted\n';
const sha256 = (text) => createHash('sha256').update(text).digest('hex');
const describeErrno = (errno) => getSystemErrorMap().get(errno)[1];

/** A worktree whose `sub` has the same names as `outside`, and `parked`, a link to outside, to exchange with `sub`. */
function raceTree(t) {
  const root = tempDir(t, 'swap-race');
  const dir = path.join(root, 'ws');
  const inside = { 'a.txt': 'a', 'sub/deep/g.txt': 'inside g' };
  const outside = {};
  for (let i = 0; i < 40; i++) {
    inside[`sub/f${i}.txt`] = `inside ${i}`;
    outside[`f${i}.txt`] = OUTSIDE;
  }
  outside['deep/g.txt'] = OUTSIDE;
  mkdirSync(dir);
  writeTree(dir, inside);
  writeTree(path.join(root, 'outside'), outside);
  symlinkSync(path.join(root, 'outside'), path.join(root, 'parked'));
  return { root, dir, sub: path.join(dir, 'sub'), parked: path.join(root, 'parked') };
}

/**
 * Asserts that `error` is ERR_SNAPSHOT_IO as the race may cause it, for an
 * operation whose messages start with `what`: the scan met a replaced
 * entry, or file jobs failed; returns the errno code.
 */
function checkRaceFailure(error, what, dir) {
  assert.ok(error instanceof ArenaCacheError, `not an ArenaCacheError: ${error?.stack}`);
  assert.equal(error.code, codes.ERR_SNAPSHOT_IO, error.message);
  const { cause } = error;
  assert.ok(cause instanceof Error, `cause ${cause}`);
  assert.match(cause.code, /^E[A-Z]+$/);
  assert.equal(cause.message, `${cause.code}: ${describeErrno(cause.errno)}, ${cause.syscall} '${cause.path}'`);
  const [first] = error.failures;
  if (error.message.includes(' file(s) ')) {
    // File jobs: the paths are relative to the tree, the first failure is the cause.
    const verb = what === 'snapshot failed' ? 'could not be read or stored' : 'failed';
    assert.equal(error.message, `${what}: ${error.failures.length} file(s) ${verb}, first ${first.path} (${first.code} in ${first.syscall})`);
    assert.deepEqual([cause.path, cause.code, -cause.errno, cause.syscall], [first.path, first.code, first.errno, first.syscall]);
  } else {
    // The scan: the cause is the scan's own error, with the full path.
    const where = path.relative(dir, cause.path);
    assert.match(where, /^sub(\/deep)?$/);
    assert.equal(error.message, `${what}: could not read ${where} (${cause.code} in ${cause.syscall}); it was replaced while the tree was being read`);
    assert.deepEqual(error.failures, [{ path: where, code: cause.code, errno: -cause.errno, syscall: cause.syscall }]);
  }
  assert.match(first.path, /^sub(\/|$)/);
  return cause.code;
}

test('snapshot, verify, status and cloneTree raced against a directory/symlink exchange fail only with ERR_SNAPSHOT_IO, and never take outside data', { skip }, async (t) => {
  const { root, dir, sub, parked } = raceTree(t);
  const workspace = await Workspace.init(dir);
  const first = await workspace.snapshot({ durable: false });
  const swapper = await startSwapper(sub, parked);
  const outcomes = {};
  let round = 0;
  const count = (key) => (outcomes[key] = (outcomes[key] ?? 0) + 1);
  try {
    const deadline = performance.now() + DURATION_MS;
    while (performance.now() < deadline) {
      const kind = ['snapshot', 'verify', 'status', 'cloneTree'][round++ % 4];
      let what;
      try {
        if (kind === 'snapshot') {
          what = 'snapshot failed';
          const { id } = await workspace.snapshot({ durable: false, packBelow: round % 8 === 1 ? 0 : 65536 });
          const manifest = JSON.parse(readFileSync(path.join(workspace.repositoryPath, 'manifests', `${id}.json`), 'utf8'));
          for (const entry of manifest.entries) {
            if (entry[1] === 'f') assert.notEqual(entry[6], sha256(OUTSIDE), `snapshot ${id} stored ${entry[0]} from outside`);
          }
        } else if (kind === 'verify') {
          what = `cannot compare the worktree with snapshot ${first.id}`;
          await workspace.verify(first.id, { worktree: true });
        } else if (kind === 'status') {
          what = `cannot compare the worktree with snapshot ${workspace.head}`;
          await workspace.status();
        } else {
          what = 'cloneTree';
          const target = path.join(root, `clone-${round}`);
          await cloneTree(dir, target);
          for (const [where, shape] of Object.entries(readTree(target))) {
            assert.ok(!shape.endsWith(Buffer.from(OUTSIDE).toString('hex')), `the clone copied ${where} from outside`);
          }
        }
        count(`${kind} ok`);
      } catch (error) {
        count(`${kind} ${checkRaceFailure(error, what, dir)}`);
      }
    }
  } finally {
    const swaps = await swapper.stop();
    t.diagnostic(`${swaps} exchanges; ${JSON.stringify(outcomes)}`);
  }
  // Once the exchanges stop, everything works again.
  const last = await workspace.snapshot({ durable: false });
  assert.equal(last.files, 42);
  assert.equal((await workspace.verify(last.id, { worktree: true })).ok, true);
});

// Root reads everything, so as root the failures are made in a child
// process without the capabilities that let it (setpriv, from util-linux).
// It stays root, so it can load the package wherever it is installed
// (another user, such as nobody, may not be allowed into the checkout).
const DROP_READ_CAPABILITIES = ['--bounding-set=-dac_override,-dac_read_search', '--'];
const asRoot = process.getuid() === 0;
function setprivMissing() {
  if (!asRoot) return false;
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    return false;
  } catch {
    return 'as root this needs setpriv (util-linux) to give up the capabilities that read everything';
  }
}
const CHILD = `
import { cloneTree } from ${JSON.stringify(new URL('../lib/snapshot/index.js', import.meta.url).href)};
try {
  await cloneTree(process.argv[1], process.argv[2]);
  console.log(JSON.stringify(null));
} catch (error) {
  const { name, code, message, failures, cause } = error;
  console.log(JSON.stringify({ name, code, message, failures, cause: { message: cause?.message, code: cause?.code, errno: cause?.errno, syscall: cause?.syscall, path: cause?.path } }));
}`;

function cloneAsUser(source, target) {
  const command = [process.execPath, '--input-type=module', '-e', CHILD, source, target];
  const output = asRoot ? execFileSync('setpriv', [...DROP_READ_CAPABILITIES, ...command], { encoding: 'utf8' }) : execFileSync(command[0], command.slice(1), { encoding: 'utf8' });
  return JSON.parse(output);
}

test('a file or directory that cannot be read is ERR_SNAPSHOT_IO naming it, with the OS error as its cause', { skip: skip || setprivMissing() }, (t) => {
  const base = tempDir(t, 'io-errors');
  const source = path.join(base, 'src');
  writeTree(source, { 'ok.txt': 'ok', 'secret.txt': { content: 'secret', mode: 0o000 } });
  chmodSync(source, 0o755);
  assert.deepEqual(cloneAsUser(source, path.join(base, 'copy')), {
    name: 'ArenaCacheError',
    code: 'ERR_SNAPSHOT_IO',
    message: 'cloneTree: 1 file(s) failed, first secret.txt (EACCES in open)',
    failures: [{ path: 'secret.txt', code: 'EACCES', errno: 13, syscall: 'open' }],
    cause: { message: "EACCES: permission denied, open 'secret.txt'", code: 'EACCES', errno: -13, syscall: 'open', path: 'secret.txt' },
  });

  const closed = path.join(base, 'closed-src');
  writeTree(closed, { 'a.txt': 'a', 'shut/b.txt': 'b' });
  chmodSync(closed, 0o755);
  chmodSync(path.join(closed, 'shut'), 0o000);
  assert.deepEqual(cloneAsUser(closed, path.join(base, 'copy2')), {
    name: 'ArenaCacheError',
    code: 'ERR_SNAPSHOT_IO',
    message: 'cloneTree: could not read shut (EACCES in open)',
    failures: [{ path: 'shut', code: 'EACCES', errno: 13, syscall: 'open' }],
    cause: { message: `EACCES: permission denied, open '${path.join(closed, 'shut')}'`, code: 'EACCES', errno: -13, syscall: 'open', path: path.join(closed, 'shut') },
  });
});

test('a tree that is missing, or not a directory, is ERR_SNAPSHOT_IO naming it', { skip }, async (t) => {
  const base = tempDir(t, 'io-errors');
  const missing = path.join(base, 'missing');
  await assert.rejects(cloneTree(missing, path.join(base, 'copy')), (error) => {
    assert.equal(error.code, codes.ERR_SNAPSHOT_IO);
    assert.equal(error.message, `cloneTree: could not read ${missing} (ENOENT in open)`);
    assert.deepEqual(error.failures, [{ path: missing, code: 'ENOENT', errno: 2, syscall: 'open' }]);
    assert.equal(error.cause.message, `ENOENT: no such file or directory, open '${missing}'`);
    return true;
  });
  const file = path.join(base, 'file');
  writeFileSync(file, '');
  await assert.rejects(cloneTree(file, path.join(base, 'copy')), (error) => {
    assert.equal(error.code, codes.ERR_SNAPSHOT_IO);
    assert.equal(error.message, `cloneTree: could not read ${file} (ENOTDIR in open)`);
    assert.equal(error.cause.message, `ENOTDIR: not a directory, open '${file}'`);
    return true;
  });
});

test('a run of file jobs that cannot start is ERR_SNAPSHOT_IO with the OS error as its cause', { skip }, async (t) => {
  const missing = path.join(tempDir(t, 'io-errors'), 'gone');
  const jobs = new JobList();
  jobs.push(JOB_HASH, 'a.txt');
  await assert.rejects(jobs.run({ hash: true, sourceRoot: missing }, null, 'verify'), (error) => {
    assert.ok(error instanceof ArenaCacheError);
    assert.equal(error.code, codes.ERR_SNAPSHOT_IO);
    assert.equal(error.message, `verify failed: ENOENT: no such file or directory, open '${missing}'`);
    assert.deepEqual(error.failures, [{ path: missing, code: 'ENOENT', errno: 2, syscall: 'open' }]);
    assert.equal(error.cause.code, 'ENOENT');
    return true;
  });
  await assert.rejects(async () => jobs.run({ hash: 'yes' }), { name: 'TypeError', message: 'options.hash must be a boolean (got "yes")' }, 'argument errors stay as they are');
});

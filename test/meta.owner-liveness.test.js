// Who owns an InodeFS store: a killed owner that its parent has not reaped
// (a zombie, as under a pid 1 that never waits, in a container without an
// init) must not keep the store busy; a live owner must, with or without the
// native addon on either side; and a record naming a pid that a live but
// unrelated process now has (pid reuse, or another PID namespace's numbering)
// must not keep it busy when the owner lock says nobody holds the store.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { open } from 'lmdb';
import { InodeFS } from '../lib/inode-fs/index.js';
import { fileClose, fileLock, fileOpen, LOCK_NONE, LOCK_SHARED } from '../lib/native/mapped-file.js';
import { tempDir } from './helpers/fs-tree.js';

const fixture = (name) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const OWNER = fixture('inodefs-owner.js');
const OPENER = fixture('inodefs-opener.js');
const ZOMBIE_PARENT = fixture('zombie-parent.js');

const environment = (native) => (native ? { ...process.env, ARENACACHE_NATIVE: '' } : { ...process.env, ARENACACHE_NATIVE: 'off' });

/** Fields of /proc/<pid>/stat after the command name: [0] is the state (field 3), [19] the start time (field 22). */
/** How many threads of `pid` /proc still lists. */
function threadCount(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 0;
  }
}

function procStat(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The lines a child prints, one at a time. */
function lines(child) {
  const iterator = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return async () => (await iterator.next()).value;
}

async function stop(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

/** A process owning the store at `file` (with the addon or not), with its printed lines. */
async function liveOwner(t, file, native) {
  const child = spawn(process.execPath, [OWNER, file], { stdio: ['pipe', 'pipe', 'inherit'], env: environment(native) });
  t.after(() => stop(child));
  const next = lines(child);
  assert.equal(await next(), 'open');
  return { child, next };
}

/**
 * An owner of the store at `file` killed with SIGKILL and left unreaped:
 * its parent blocks its event loop, so the pid stays a zombie until the
 * test ends. Returns the zombie's pid, checked to be a zombie.
 */
async function zombieOwner(t, file, native) {
  const parent = spawn(process.execPath, [ZOMBIE_PARENT, process.execPath, OWNER, file], { stdio: ['pipe', 'pipe', 'inherit'], env: environment(native) });
  t.after(async () => {
    const exited = once(parent, 'exit');
    parent.stdin.end(); // the parent reaps the zombie and exits
    await exited;
  });
  const next = lines(parent);
  const pid = Number(await next());
  assert.equal(await next(), 'open');
  const start = procStat(pid)[19];
  process.kill(pid, 'SIGKILL');
  // Dead means every thread gone, not only the main one: a killed process's
  // main thread shows "Z" while its other threads may still be exiting and
  // holding its files (and with them the owner lock). Its last thread
  // closes them; then /proc lists the main thread alone.
  for (let waited = 0; procStat(pid)?.[0] !== 'Z' || threadCount(pid) !== 1; waited += 10) {
    assert.ok(waited < 10_000, `process ${pid} did not become a zombie whose threads have all exited`);
    await sleep(10);
  }
  // What the old liveness check saw: the pid answers kill(pid, 0), with the start time the owner recorded.
  assert.doesNotThrow(() => process.kill(pid, 0));
  assert.equal(procStat(pid)[19], start);
  return pid;
}

/** Opens the store at `file` in a new process (with the addon or not) and reports { nativeAvailable, opened, owner, code, message }. */
async function openElsewhere(file, native) {
  const child = spawn(process.execPath, [OPENER, file], { stdio: ['ignore', 'pipe', 'inherit'], env: environment(native) });
  const next = lines(child);
  const result = JSON.parse(await next());
  await once(child, 'exit');
  assert.equal(result.nativeAvailable, native);
  return result;
}

for (const ownerNative of [true, false]) {
  for (const openerNative of [true, false]) {
    const owner = ownerNative ? 'an owner with the addon (owner lock)' : 'an owner without the addon (owner record only)';
    const opener = openerNative ? 'an opener with the addon' : 'an opener without it';
    test(`${owner}, killed and not reaped (a zombie), does not keep the store busy for ${opener}`, async (t) => {
      const file = path.join(tempDir(t), 'fs.lmdb');
      const pid = await zombieOwner(t, file, ownerNative);
      if (!openerNative) {
        assert.deepEqual(await openElsewhere(file, false), { nativeAvailable: false, opened: true, owner: String(pid) });
        return;
      }
      const ifs = await InodeFS.open(file);
      t.after(() => ifs.close());
      assert.equal(await ifs.readFile('/owner', 'utf8'), String(pid));
      assert.equal(ifs.fsck().ok, true);
    });
  }
}

for (const ownerNative of [true, false]) {
  test(`a live owner ${ownerNative ? 'with' : 'without'} the addon keeps the store busy for openers with and without it, until it closes the store`, async (t) => {
    const file = path.join(tempDir(t), 'fs.lmdb');
    const { child, next } = await liveOwner(t, file, ownerNative);
    const busy = `${file} is open in process ${child.pid}; an InodeFS store is used by one process at a time (its threads share it)`;
    await assert.rejects(InodeFS.open(file), { code: 'ERR_INODEFS_BUSY', message: busy });
    assert.deepEqual(await openElsewhere(file, false), { nativeAvailable: false, opened: false, code: 'ERR_INODEFS_BUSY', message: busy });
    // Closed, the store is free while its former owner lives on.
    child.stdin.write('close\n');
    assert.equal(await next(), 'closed');
    assert.deepEqual(await openElsewhere(file, false), { nativeAvailable: false, opened: true, owner: String(child.pid) });
    const ifs = await InodeFS.open(file);
    assert.equal(await ifs.readFile('/owner', 'utf8'), String(child.pid));
    ifs.close();
  });
}

test('an owner record whose pid and start time now belong to an unrelated live process does not keep the store busy: the owner lock is free', async (t) => {
  const file = path.join(tempDir(t), 'fs.lmdb');
  (await InodeFS.open(file)).close();
  // What a dead owner leaves when its pid is now another live process's
  // (reused, or numbered in another PID namespace sharing the file): kill(pid, 0) succeeds.
  const stranger = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
  t.after(() => stop(stranger));
  await once(stranger, 'spawn');
  const env = open({ path: file, noSubdir: true, maxDbs: 12 });
  await env.openDB('meta').put('owner', { pid: stranger.pid, start: procStat(stranger.pid)[19], opens: 1, privateOpens: 1, locked: true });
  await env.close();
  const ifs = await InodeFS.open(file);
  t.after(() => ifs.close());
  await ifs.writeFile('/taken', 'over');
  assert.equal(await ifs.readFile('/taken', 'utf8'), 'over');
});

test('a store whose owner lock is held without an owner record (a foreign holder) is ERR_INODEFS_BUSY', async (t) => {
  const file = path.join(tempDir(t), 'fs.lmdb');
  (await InodeFS.open(file)).close();
  // An OFD lock belongs to its open file description: this one conflicts with InodeFS's own, in this process too.
  const { fd } = fileOpen(file, 0, 'the test');
  t.after(() => fileClose(fd));
  assert.equal(fileLock(fd, LOCK_SHARED, false), true);
  await assert.rejects(InodeFS.open(file), {
    code: 'ERR_INODEFS_BUSY',
    message: `${file} is open in another process; an InodeFS store is used by one process at a time (its threads share it)`,
  });
  fileLock(fd, LOCK_NONE, false);
  (await InodeFS.open(file)).close();
});

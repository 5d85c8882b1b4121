// Opening an InodeFS store: a corrupt file, another program's lmdb file and
// a store open in another live process are refused with clear errors.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { open } from 'lmdb';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';

test('a file that is not lmdb is ERR_INODEFS_STORE', async (t) => {
  const file = path.join(tempDir(t), 'junk.lmdb');
  writeFileSync(file, Buffer.alloc(64 * 1024, 0x5a));
  await assert.rejects(InodeFS.open(file), {
    code: 'ERR_INODEFS_STORE',
    message: `${file} cannot be opened as an InodeFS store: it is not an lmdb file (no lmdb meta page at its start)`,
  });
});

test("another program's lmdb file is ERR_INODEFS_STORE, and stays untouched", async (t) => {
  const file = path.join(tempDir(t), 'other.lmdb');
  const other = open({ path: file, noSubdir: true });
  other.putSync('user', { name: 'x' });
  await other.close();
  await assert.rejects(InodeFS.open(file), {
    code: 'ERR_INODEFS_STORE',
    message: `${file} cannot be opened as an InodeFS store: it is an lmdb file of something else (it holds "user")`,
  });
});

test('a store open in another live process is ERR_INODEFS_BUSY; a killed owner is replaced', async (t) => {
  const file = path.join(tempDir(t), 'fs.lmdb');
  const script = `import { InodeFS } from ${JSON.stringify(new URL('../lib/inode-fs/index.js', import.meta.url).href)};
    const ifs = await InodeFS.open(${JSON.stringify(file)}); await ifs.writeFile('/f', 'child'); console.log('open'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  await once(child.stdout, 'data');
  await assert.rejects(InodeFS.open(file), {
    code: 'ERR_INODEFS_BUSY',
    message: `${file} is open in process ${child.pid}; an InodeFS store is used by one process at a time (its threads share it)`,
  });
  child.kill('SIGKILL');
  await once(child, 'exit');
  const ifs = await InodeFS.open(file);
  t.after(() => ifs.close());
  assert.equal(await ifs.readFile('/f', 'utf8'), 'child');
});

test('an owner record of this pid from an earlier process (a reused pid) is replaced, not taken for this process', async (t) => {
  const file = path.join(tempDir(t), 'fs.lmdb');
  (await InodeFS.open(file)).close();
  // What a process killed with its store open leaves, if this process got its pid (pid 1 in a restarted container).
  const env = open({ path: file, noSubdir: true, maxDbs: 12 });
  const meta = env.openDB('meta');
  await meta.put('owner', { pid: process.pid, start: 'an earlier start', opens: 1, privateOpens: 1 });
  await env.close();
  const ifs = await InodeFS.open(file);
  await ifs.writeFile('/ok', 'opened');
  ifs.close();
});

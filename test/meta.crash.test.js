// InodeFS after kill -9: a child process writing to the store is killed
// mid-write again and again; each time the store opens (the dead owner is
// replaced), fsck() is clean, and every file, in the live tree and in every
// persistent snapshot, is whole (its checksum matches).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { InodeFS } from '../lib/inode-fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';

const WRITER = fileURLToPath(new URL('./fixtures/inodefs-writer.js', import.meta.url));
const KILLS = STRESS ? 200 : 50;

async function checkWhole(reader, label) {
  let files = 0;
  for await (const { path: p, stats } of reader.walk('/')) {
    if (!stats.isFile()) continue;
    const data = await reader.readFile(p);
    // open(path, 'w') and its write() are two transactions: killed between them, the file is empty.
    if (data.length === 0) continue;
    const payload = data.subarray(0, data.length - 32);
    assert.deepEqual(data.subarray(data.length - 32), createHash('sha256').update(payload).digest(), `${label}: ${p} is torn`);
    files++;
  }
  return files;
}

test(`a writer killed mid-write ${KILLS} times leaves a store that opens, is fsck-clean and holds only whole files`, { timeout: 240_000 }, async (t) => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const file = path.join(tempDir(t), 'fs.lmdb');
  let seen = 0;
  for (let kill = 0; kill < KILLS; kill++) {
    const child = spawn(process.execPath, [WRITER, file, String(random.int(2 ** 31))], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const exited = once(child, 'exit');
    await once(child.stdout, 'data');
    await new Promise((resolve) => setTimeout(resolve, 5 + random.int(60)));
    child.kill('SIGKILL');
    const [code, signal] = await exited;
    assert.equal(signal, 'SIGKILL', `the writer failed on its own (exit code ${code}, SEED=${seed}): ${stderr}`);

    const ifs = await InodeFS.open(file, { inlineBytes: 512, chunkBytes: 4096 });
    try {
      const report = ifs.fsck();
      assert.equal(report.ok, true, `after kill ${kill} (SEED=${seed}): ${JSON.stringify(report.problems)}`);
      seen += await checkWhole(ifs, `kill ${kill}`);
      for (const { name } of ifs.listSnapshots()) {
        const snap = ifs.openSnapshot(name);
        await checkWhole(snap, `kill ${kill}, snapshot ${name}`);
        snap.release();
      }
    } finally {
      ifs.close();
    }
  }
  assert.ok(seen > 0, 'the writer wrote files before being killed');
});

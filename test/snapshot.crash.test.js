// kill -9 in the middle of restore (and snapshot): the worktree is always
// wholly the old tree or wholly the new one, and the next open leaves a
// consistent workspace (head names the tree, nothing half-made listed).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Workspace } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { readTree, writeTree } from './helpers/workspace-tree.js';

const child = fileURLToPath(new URL('./fixtures/workspace-child.js', import.meta.url));
const ROUNDS = STRESS ? 100 : 20;

function treeOf(variant) {
  const spec = { 'big.bin': Buffer.alloc(2 * 2 ** 20, variant) };
  for (let d = 0; d < 10; d++) for (let f = 0; f < 30; f++) spec[`d${d}/f${f}.txt`] = `${variant}:${d}:${f}\n`.repeat(variant + 1);
  if (variant === 2) spec['only-in-b/x.txt'] = 'b';
  return spec;
}

/** Runs the child and kills it `delay` ms after it is ready (or lets it finish when the delay outlasts it). */
function runAndKill(args, delay) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timer = null;
    let readyAt = 0;
    let doneAt = 0;
    proc.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (timer === null && stdout.includes('ready')) {
        readyAt = performance.now();
        timer = setTimeout(() => proc.kill('SIGKILL'), delay);
      }
      if (doneAt === 0 && stdout.includes('done')) doneAt = performance.now();
    });
    proc.stderr.on('data', (chunk) => (stderr += chunk));
    proc.on('error', reject);
    proc.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (signal === null && code !== 0) reject(new Error(`child failed (${code}): ${stderr}`));
      else resolve({ killed: signal === 'SIGKILL', finished: stdout.includes('done'), took: doneAt - readyAt });
    });
  });
}

test(`restore killed with SIGKILL at random moments (${ROUNDS} times): wholly old or wholly new`, { timeout: 300_000 }, async (t) => {
  const seed = testSeed();
  t.diagnostic(`SEED=${seed}`);
  const random = seededRandom(seed);
  const dir = tempDir(t, 'crash');
  writeTree(dir, treeOf(1));
  const workspace = await Workspace.init(dir);
  const a = await workspace.snapshot({ durable: false });
  const treeA = readTree(dir);
  rmSync(dir + '/d0', { recursive: true });
  writeTree(dir, treeOf(2));
  const b = await workspace.snapshot({ durable: false });
  const treeB = readTree(dir);
  assert.notDeepEqual(treeA, treeB);

  // How long an uninterrupted restore takes here (from the child's "ready"
  // to its "done"), to spread the kills over it.
  const first = await runAndKill([dir, 'restore', a.id, 'fast'], 1e9);
  const second = await runAndKill([dir, 'restore', b.id, 'durable'], 1e9);
  await runAndKill([dir, 'restore', a.id, 'fast'], 1e9);
  const span = Math.max(5, Math.min(first.took, second.took));
  t.diagnostic(`an uninterrupted restore takes ${first.took.toFixed(1)} ms (fast), ${second.took.toFixed(1)} ms (durable)`);
  assert.deepEqual(readTree(dir), treeA);

  let killedMidway = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const current = (await Workspace.open(dir)).head;
    const target = current === a.id ? b : a;
    const outcome = await runAndKill([dir, 'restore', target.id, round % 2 ? 'durable' : 'fast'], Math.floor(random() * span));
    // Before any recovery: the worktree path shows one whole tree.
    const seen = readTree(dir);
    const whole = JSON.stringify(seen) === JSON.stringify(treeA) ? 'a' : JSON.stringify(seen) === JSON.stringify(treeB) ? 'b' : null;
    assert.notEqual(whole, null, `round ${round}: the worktree is a mixture of the two trees`);
    const reopened = await Workspace.open(dir);
    assert.deepEqual(readTree(dir), whole === 'a' ? treeA : treeB, `round ${round}: recovery changed the tree`);
    assert.equal(reopened.head, whole === 'a' ? a.id : b.id, `round ${round}: the head does not name the tree shown`);
    assert.equal((await reopened.status()).ok, true);
    assert.deepEqual(readdirSync(path.dirname(dir)).filter((name) => name.startsWith(`.${path.basename(dir)}.arenacache`)), [], `round ${round}: staging left over`);
    assert.deepEqual(readdirSync(path.join(reopened.repositoryPath, 'intents')), []);
    if (outcome.killed && !outcome.finished) killedMidway++;
  }
  t.diagnostic(`${killedMidway} of ${ROUNDS} restores were killed before they finished`);
  assert.ok(killedMidway >= ROUNDS / 4, `too few kills landed mid-restore (${killedMidway})`);
});

test('snapshot killed with SIGKILL: never listed half-made; the next open removes what it left', { timeout: 120_000 }, async (t) => {
  const seed = testSeed();
  t.diagnostic(`SEED=${seed}`);
  const random = seededRandom(seed);
  const dir = tempDir(t, 'crash-snap');
  writeTree(dir, treeOf(1));
  const workspace = await Workspace.init(dir);
  const base = await workspace.snapshot({ durable: false });
  for (let round = 0; round < 8; round++) {
    writeFileSync(path.join(dir, `new-${round}.bin`), Buffer.alloc(512 * 1024, round));
    await runAndKill([dir, 'snapshot', '', 'durable'], Math.floor(random() * 60));
    const reopened = await Workspace.open(dir);
    for (const row of reopened.history()) {
      assert.equal(row.corrupt, undefined);
      assert.equal((await reopened.verify(row.id)).ok, true, `round ${round}: listed snapshot ${row.id} is not whole`);
    }
    assert.deepEqual(readdirSync(path.join(reopened.repositoryPath, 'intents')), []);
    assert.deepEqual(readdirSync(path.join(reopened.repositoryPath, 'tmp')), []);
    const all = await reopened.verify('all');
    // Objects a killed snapshot stored before it died are extra until gc.
    for (const report of all.snapshots) assert.equal(report.ok, true);
    await reopened.gc({ keepLast: 100 });
    assert.equal((await reopened.verify('all')).ok, true, 'gc removed what the killed snapshots left');
  }
  assert.ok(base.id);
});

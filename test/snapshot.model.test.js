// Randomized model test: random edits of a real tree (files rewritten in
// place within the same clock tick at the same size, the case incremental
// hashing can get wrong), snapshots, restores and gc, checked against a
// plain Map of what the tree should hold.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { Workspace } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';
import { readTree } from './helpers/workspace-tree.js';

const STEPS = STRESS ? 600 : 120;

/** The tree the model says: the same rendering as readTree. */
function render(model) {
  return Object.fromEntries([...model].sort(([a], [b]) => (a < b ? -1 : 1)));
}

test(`random edits, snapshots, restores and gc agree with a Map (${STEPS} steps)`, { timeout: 300_000 }, async (t) => {
  const seed = testSeed();
  t.diagnostic(`SEED=${seed}`);
  const random = seededRandom(seed);
  const dir = tempDir(t, 'model');
  const workspace = await Workspace.init(dir);
  const model = new Map();
  const snapshots = new Map(); // id -> rendered model
  const dirs = () => ['', ...[...model].filter(([, v]) => v.startsWith('d ')).map(([k]) => k)];
  const files = () => [...model].filter(([, v]) => v.startsWith('f ')).map(([k]) => k);
  const content = (size) => {
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i += 997) bytes[i] = random.int(256);
    return bytes;
  };
  const sizes = [0, 1, 5, 100, 4096, 70 * 1024, 200 * 1024];

  for (let step = 0; step < STEPS; step++) {
    const roll = random();
    const where = (name) => {
      const parent = random.pick(dirs());
      return parent === '' ? name : `${parent}/${name}`;
    };
    if (roll < 0.3) {
      const name = where(`f${random.int(8)}`);
      if (model.has(name) && !model.get(name).startsWith('f ')) continue;
      const bytes = content(random.pick(sizes));
      writeFileSync(path.join(dir, name), bytes);
      model.set(name, `f ${model.get(name)?.split(' ')[1] ?? '644'} ${bytes.toString('hex')}`);
    } else if (roll < 0.42 && files().length > 0) {
      // Same size, new bytes, right away: identity (size, mtime) may not change.
      const name = random.pick(files());
      const old = Buffer.from(model.get(name).split(' ')[2] ?? '', 'hex');
      if (old.length === 0) continue;
      old[random.int(old.length)] ^= 0x5a;
      writeFileSync(path.join(dir, name), old);
      model.set(name, `f ${model.get(name).split(' ')[1]} ${old.toString('hex')}`);
    } else if (roll < 0.5) {
      const name = where(`d${random.int(4)}`);
      if (model.has(name)) continue;
      mkdirSync(path.join(dir, name));
      model.set(name, 'd 755');
    } else if (roll < 0.55) {
      const name = where(`l${random.int(3)}`);
      if (model.has(name)) continue;
      const target = random.pick(['f0', '../outside', '/etc/hostname', 'd0/f1']);
      symlinkSync(target, path.join(dir, name));
      model.set(name, `l -> ${target}`);
    } else if (roll < 0.6 && model.size > 0) {
      const name = random.pick([...model.keys()]);
      rmSync(path.join(dir, name), { recursive: true, force: true });
      for (const key of [...model.keys()]) if (key === name || key.startsWith(`${name}/`)) model.delete(key);
    } else if (roll < 0.65 && files().length > 0) {
      const name = random.pick(files());
      const mode = random.pick(['600', '644', '755', '400']);
      chmodSync(path.join(dir, name), parseInt(mode, 8));
      const [, , hex] = model.get(name).split(' ');
      model.set(name, `f ${mode} ${hex}`);
    } else if (roll < 0.85) {
      const descriptor = await workspace.snapshot({ durable: false, packBelow: random.pick([0, 1024, 65536]) });
      snapshots.set(descriptor.id, render(model));
      assert.equal((await workspace.status()).ok, true, `step ${step}: status right after a snapshot`);
    } else if (roll < 0.95 && snapshots.size > 0) {
      const id = random.pick([...snapshots.keys()]);
      await workspace.restore(id, { force: true, durable: false });
      model.clear();
      for (const [key, value] of Object.entries(snapshots.get(id))) model.set(key, value);
    } else if (snapshots.size > 2) {
      const plan = await workspace.gc({ keepLast: random.int(3), keepWithin: 0, durable: false });
      for (const id of plan.delete) snapshots.delete(id);
    }
    assert.deepEqual(readTree(dir), render(model), `step ${step}: the tree differs from the model`);
  }
  // Every snapshot left restores to exactly what the model had, and verifies.
  for (const [id, expected] of snapshots) {
    assert.equal((await workspace.verify(id)).ok, true, `verify ${id}`);
    await workspace.restore(id, { force: true, durable: false });
    assert.deepEqual(readTree(dir), expected, `restore ${id}`);
  }
  assert.equal((await workspace.verify('all')).ok, true);
});

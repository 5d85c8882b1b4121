// Randomized model test: BlockStore against a plain Map of blocks. With room
// for everything (no eviction), every read, dirty list and error must be
// exactly what the model predicts. SEED=<n> replays a run.
import assert from 'node:assert/strict';
import test from 'node:test';
import { BlockStore } from '../lib/index.js';
import { seededRandom, STRESS, testSeed } from './helpers/seeded-random.js';

const BLOCK = 4096;
const OPERATIONS = STRESS ? 200_000 : 20_000;

class ModelStore {
  constructor() {
    this.blocks = new Map(); // "file:index" -> { from, to, bytes, dirty }
  }

  /** Writes block by block; stops (and reports) at the first block a gap forbids, like the store. */
  write(file, position, data) {
    let done = 0;
    while (done < data.length) {
      const at = position + done;
      const index = Math.floor(at / BLOCK);
      const offset = at % BLOCK;
      const n = Math.min(BLOCK - offset, data.length - done);
      const key = `${file}:${index}`;
      let block = this.blocks.get(key);
      if (block === undefined) {
        block = { from: offset, to: offset + n, bytes: Buffer.alloc(BLOCK), dirty: false };
        this.blocks.set(key, block);
      } else if (offset > block.to || offset + n < block.from) {
        if (block.dirty) return 'gap';
        block.from = offset;
        block.to = offset + n;
      } else {
        block.from = Math.min(block.from, offset);
        block.to = Math.max(block.to, offset + n);
      }
      data.copy(block.bytes, offset, done, done + n);
      block.dirty = true;
      done += n;
    }
    return 'ok';
  }

  read(file, position, length) {
    const out = Buffer.alloc(length);
    let done = 0;
    while (done < length) {
      const at = position + done;
      const index = Math.floor(at / BLOCK);
      const offset = at % BLOCK;
      const n = Math.min(BLOCK - offset, length - done);
      const block = this.blocks.get(`${file}:${index}`);
      if (block === undefined || block.from > offset || block.to < offset + n) return undefined;
      block.bytes.copy(out, done, offset, offset + n);
      done += n;
    }
    return out;
  }

  dirty() {
    return [...this.blocks.entries()]
      .filter(([, block]) => block.dirty)
      .map(([key, block]) => {
        const [file, index] = key.split(':').map(Number);
        return [file, index * BLOCK + block.from, block.to - block.from];
      })
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  }
}

test(`${OPERATIONS} random operations agree with a Map model`, () => {
  const seed = testSeed();
  const random = seededRandom(seed);
  const store = new BlockStore({ memoryBytes: 16 * 2 ** 20, blockBytes: BLOCK, stripes: 4 });
  const model = new ModelStore();
  const context = () => `SEED=${seed}`;
  for (let op = 0; op < OPERATIONS; op++) {
    const file = random.int(4);
    const roll = random();
    if (roll < 0.45) {
      const position = random.int(10 * BLOCK);
      const data = Buffer.alloc(1 + random.int(random() < 0.8 ? 600 : 3 * BLOCK), op & 0xff);
      const expected = model.write(file, position, data);
      let actual = 'ok';
      try {
        store.write(file, position, data);
      } catch (error) {
        assert.equal(error.code, 'ERR_BLOCK_GAP', context());
        actual = 'gap';
      }
      assert.equal(actual, expected, `write(${file}, ${position}, ${data.length}) ${context()}`);
    } else if (roll < 0.85) {
      const position = random.int(10 * BLOCK);
      const length = random.int(2 * BLOCK);
      const expected = model.read(file, position, length);
      const actual = store.read(file, position, length);
      if (expected === undefined) assert.equal(actual, undefined, `read(${file}, ${position}, ${length}) ${context()}`);
      else assert.ok(actual?.equals(expected), `read(${file}, ${position}, ${length}) ${context()}`);
    } else if (roll < 0.97) {
      // Write some dirty blocks back.
      for (const range of store.dirty()) {
        if (random() < 0.5) continue;
        assert.equal(store.markClean(range), true, context());
        model.blocks.get(`${range.file}:${range.block}`).dirty = false;
      }
    } else {
      const dropped = store.drop(file);
      let expected = 0;
      for (const key of [...model.blocks.keys()]) {
        if (key.startsWith(`${file}:`)) {
          model.blocks.delete(key);
          expected++;
        }
      }
      assert.equal(dropped, expected, context());
    }
    if (op % 500 === 0) {
      assert.deepEqual(store.dirty().map((r) => [r.file, r.position, r.length]), model.dirty(), context());
      const stats = store.stats();
      assert.equal(stats.usedBlocks, model.blocks.size, context());
      assert.equal(stats.evictions, 0, context());
    }
  }
});

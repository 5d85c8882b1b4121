// BlockStore: byte ranges of files in blocks; dirty blocks pinned until
// marked clean; clean blocks evicted; every error message.
import assert from 'node:assert/strict';
import test from 'node:test';
import { BlockStore } from '../lib/index.js';
import { KiB, MiB } from './helpers/units.js';

function bytes(length, seed) {
  const out = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) out[i] = (i * 31 + seed * 7) & 0xff;
  return out;
}

test('writes across block boundaries read back exactly; missing bytes are a miss', () => {
  const store = new BlockStore({ memoryBytes: 4 * MiB, blockBytes: 4 * KiB });
  const data = bytes(10_000, 1);
  store.write(7, 3000, data);
  assert.ok(store.read(7, 3000, 10_000).equals(data));
  assert.ok(store.read(7, 4096, 100).equals(data.subarray(1096, 1196)));
  assert.equal(store.read(7, 2999, 10), undefined, 'byte 2999 was never written');
  assert.equal(store.read(8, 3000, 10), undefined, 'another file');
  assert.equal(store.read(7, 3000, 10_001), undefined, 'one byte past the end');
  assert.equal(store.read(7, 5000, 0).length, 0);
  // Overwriting part of it and extending it.
  const patch = bytes(6000, 2);
  store.write(7, 9000, patch);
  const expected = Buffer.concat([data.subarray(0, 6000), patch]);
  assert.ok(store.read(7, 3000, 12_000).equals(expected));
});

test('dirty() lists what to write back, in order; markClean() ignores a range written again since', () => {
  const store = new BlockStore({ memoryBytes: 4 * MiB, blockBytes: 4 * KiB });
  store.write(2, 0, bytes(5000, 1));
  store.write(1, 100, bytes(50, 2));
  const dirty = store.dirty();
  assert.deepEqual(
    dirty.map(({ file, position, length }) => [file, position, length]),
    [
      [1, 100, 50],
      [2, 0, 4096],
      [2, 4096, 904],
    ],
  );
  assert.deepEqual(store.dirty({ file: 1 }).length, 1);
  store.write(2, 4096, bytes(10, 3)); // the second block of file 2 changes after it was listed
  assert.equal(store.markClean(dirty[0]), true);
  assert.equal(store.markClean(dirty[0]), false, 'already clean');
  assert.equal(store.markClean(dirty[1]), true);
  assert.equal(store.markClean(dirty[2]), false, 'written again since it was listed');
  assert.deepEqual(store.dirty().map((r) => r.position), [4096]);
  assert.equal(store.stats().dirtyBlocks, 1);
});

test('only clean blocks are evicted; with every block dirty a write is ERR_BLOCKS_FULL', () => {
  const store = new BlockStore({ memoryBytes: MiB, blockBytes: 64 * KiB, stripes: 1 });
  const { blocks } = store.stats();
  for (let i = 0; i < blocks; i++) store.write(1, i * 64 * KiB, bytes(64 * KiB, i));
  assert.throws(() => store.write(2, 0, bytes(10, 0)), {
    name: 'ArenaCacheError',
    code: 'ERR_BLOCKS_FULL',
    message: 'every block of stripe 0 is dirty: write dirty blocks back and markClean() them, or give the store more memoryBytes',
  });
  // Write back the first half: those blocks may now make room.
  const half = Math.floor(blocks / 2);
  for (const range of store.dirty().slice(0, half)) store.markClean(range);
  store.write(2, 0, bytes(64 * KiB, 99));
  assert.ok(store.read(2, 0, 64 * KiB).equals(bytes(64 * KiB, 99)));
  assert.equal(store.stats().evictions, 1);
  for (let i = half; i < blocks; i++) assert.ok(store.read(1, i * 64 * KiB, 64 * KiB).equals(bytes(64 * KiB, i)), `dirty block ${i} kept`);
});

test('a write that would leave a gap in a dirty block is refused; in a clean block it replaces the data', () => {
  const store = new BlockStore({ memoryBytes: MiB, blockBytes: 4 * KiB });
  store.write(1, 100, bytes(100, 1));
  assert.throws(() => store.write(1, 1000, bytes(10, 2)), {
    name: 'ArenaCacheError',
    code: 'ERR_BLOCK_GAP',
    message: 'a write at byte 1000 of file 1 would leave a gap in a dirty block (it holds bytes 100 to 200); write the block back and markClean() it first',
  });
  store.write(1, 200, bytes(10, 3)); // adjacent: extends the range
  assert.ok(store.read(1, 100, 110));
  for (const range of store.dirty()) store.markClean(range);
  store.write(1, 1000, bytes(10, 2));
  assert.equal(store.read(1, 100, 10), undefined, 'the clean data was replaced');
  assert.ok(store.read(1, 1000, 10).equals(bytes(10, 2)));
});

test('drop() removes a file\'s blocks, dirty or not', () => {
  const store = new BlockStore({ memoryBytes: 2 * MiB, blockBytes: 4 * KiB });
  store.write(5, 0, bytes(20_000, 1));
  store.write(6, 0, bytes(100, 1));
  assert.equal(store.drop(5), 5);
  assert.equal(store.read(5, 0, 10), undefined);
  assert.ok(store.read(6, 0, 100));
  assert.equal(store.stats().usedBlocks, 1);
  assert.equal(store.stats().dirtyBlocks, 1);
  assert.equal(store.drop(5), 0);
});

test('another thread\'s view through the handle sees the same blocks', async () => {
  const store = new BlockStore({ memoryBytes: 2 * MiB });
  const other = BlockStore.attach(structuredClone(store.handle));
  store.write(1, 0, bytes(1000, 4));
  assert.ok(other.read(1, 0, 1000).equals(bytes(1000, 4)));
  assert.equal(other.stats().dirtyBlocks, 1);
  await other.flush(); // in memory: nothing to do
  other.close();
  assert.throws(() => other.read(1, 0, 1), { code: 'ERR_CACHE_CLOSED', message: 'the block store is closed: close() was called on this instance' });
  assert.ok(store.read(1, 0, 1000));
});

test('BlockStore input errors name what was expected', () => {
  assert.throws(() => new BlockStore(), { name: 'TypeError', message: 'options.memoryBytes is required: new BlockStore({ memoryBytes: 256 * 2 ** 20 })' });
  assert.throws(() => new BlockStore({ memoryBytes: MiB, blockBytes: 5000 }), {
    name: 'RangeError',
    message: 'options.blockBytes must be a power of two from 4096 to 16777216 (got 5000)',
  });
  assert.throws(() => new BlockStore({ memoryBytes: MiB, blockBytes: 2048 }), {
    name: 'RangeError',
    message: 'options.blockBytes must be a power of two from 4096 to 16777216 (got 2048)',
  });
  assert.throws(() => new BlockStore({ memoryBytes: MiB, stripes: 3 }), {
    name: 'RangeError',
    message: 'options.stripes must be 0 (automatic) or a power of two up to 1024 (got 3)',
  });
  assert.throws(() => new BlockStore({ memoryBytes: MiB, blockBytes: 1024 * KiB }), {
    name: 'RangeError',
    message: 'options.memoryBytes (1048576) holds fewer than 2 blocks of 1048576 bytes per stripe; raise memoryBytes or lower blockBytes',
  });
  assert.throws(() => new BlockStore({ memoryBytes: MiB, blockbytes: 4096 }), { name: 'TypeError', message: 'options.blockbytes is not a known option; did you mean blockBytes?' });
  const store = new BlockStore({ memoryBytes: MiB, blockBytes: 4 * KiB });
  assert.throws(() => store.write('a', 0, Buffer.alloc(1)), { name: 'TypeError', message: 'file must be a number, the file\'s id (got "a")' });
  assert.throws(() => store.write(-1, 0, Buffer.alloc(1)), { name: 'RangeError', message: 'file must be an integer from 0 to 4294967295 (got -1)' });
  assert.throws(() => store.write(1, 1.5, Buffer.alloc(1)), { name: 'RangeError', message: 'position must be a non-negative integer (got 1.5)' });
  assert.throws(() => store.write(1, 0, 'text'), { name: 'TypeError', message: 'data must be a Buffer or Uint8Array (got "text")' });
  assert.throws(() => store.write(1, 2 ** 52, Buffer.alloc(1)), { name: 'RangeError', message: /^position \+ data\.length must stay below 17592186044416/ });
  assert.throws(() => store.read(1, 0, -1), { name: 'RangeError', message: 'length must be a non-negative integer (got -1)' });
  assert.throws(() => store.markClean({}), { name: 'TypeError', message: 'range must be an entry of dirty() ({ file, block, generation, ... }) (got an instance of Object)' });
  assert.throws(() => store.dirty({ files: 1 }), { name: 'TypeError', message: 'options.files is not a known option; did you mean file?' });
  assert.throws(() => BlockStore.attach({}), { name: 'TypeError', message: 'handle must be a BlockStore handle (store.handle) (got an instance of Object)' });
});

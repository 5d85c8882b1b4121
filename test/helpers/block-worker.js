// A worker thread (or, with a path, a child process) hammering a BlockStore
// with whole self-checking blocks: writes, reads (checking every block it
// gets), and writes back (markClean) so that clean blocks can be evicted.
import { parentPort, workerData } from 'node:worker_threads';
import { BlockStore } from '../../lib/index.js';
import { checkBlock, makeBlock } from './block-value.js';
import { seededRandom } from './random.js';

const { handle, files, blocksPerFile, writer, seed, ms } = workerData;
const store = BlockStore.attach(handle);
const size = store.blockBytes;
const random = seededRandom(seed);
const counts = { writes: 0, reads: 0, ok: 0, torn: 0, foreign: 0, misses: 0, full: 0 };
const until = performance.now() + ms;
let sequence = 0;
while (performance.now() < until) {
  const file = random.int(files);
  const index = random.int(blocksPerFile);
  const roll = random();
  if (roll < 0.4) {
    try {
      store.write(file, index * size, makeBlock(size, file, index, writer, ++sequence));
      counts.writes++;
    } catch (error) {
      if (error.code !== 'ERR_BLOCKS_FULL') throw error;
      counts.full++;
    }
  } else if (roll < 0.95) {
    const block = store.read(file, index * size, size);
    counts.reads++;
    if (block === undefined) counts.misses++;
    else counts[checkBlock(block, file, index)]++;
  } else {
    for (const range of store.dirty()) store.markClean(range);
  }
}
parentPort.postMessage(counts);

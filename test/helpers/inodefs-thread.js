// Worker for meta.threads.test.js: opens the InodeFS in workerData with the
// shared inode cache, then writes and reads the same few files as the other
// threads. Every file is <writer id, sequence, filler> + its SHA-256; a read
// that does not check out is reported.
import { createHash } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import { SharedCache } from '../../lib/index.js';
import { InodeFS } from '../../lib/meta/index.js';
import { seededRandom } from './random.js';

const { file, handle, id, steps, paths, seed } = workerData;
const random = seededRandom(seed);
const cache = SharedCache.attach(handle);
const ifs = await InodeFS.open(file, { cache, inlineBytes: 256, chunkBytes: 4096 });

export function checkedBody(writer, sequence, size) {
  const payload = Buffer.alloc(size, writer);
  payload.writeUInt32LE(writer, 0);
  payload.writeUInt32LE(sequence, 4);
  return Buffer.concat([payload, createHash('sha256').update(payload).digest()]);
}

let writes = 0;
let reads = 0;
const bad = [];
for (let step = 0; step < steps; step++) {
  const target = random.pick(paths);
  if (random() < 0.4) {
    await ifs.writeFile(target, checkedBody(id, step, 8 + (random() < 0.7 ? random.int(200) : random.int(9000))));
    writes++;
  } else {
    try {
      const data = await ifs.readFile(target);
      const payload = data.subarray(0, data.length - 32);
      if (!createHash('sha256').update(payload).digest().equals(data.subarray(data.length - 32))) bad.push(`${target} (${data.length} bytes)`);
      const stats = await ifs.stat(target);
      if (stats.size < 40) bad.push(`${target}: stat size ${stats.size}`);
      reads++;
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
  }
}
// The race: every thread rewrites one file back to back, so commits and
// the cache updates after them interleave across threads.
for (let i = 0; i < 300; i++) {
  await ifs.writeFile('/shared/race', checkedBody(id, steps + i, 8 + (i % 50)));
  writes++;
}
ifs.close();
parentPort.postMessage({ writes, reads, bad });

// The writer npm run bench:scale kills mid-writes: opens the cache file given
// as argv[2], says "ready" on stdout, then overwrites random keys of the
// argv[3] that the bench filled with new 64 B values until it is killed
// (SIGKILL, by the bench), saying "writing" once the first 10,000 are done.
// It only overwrites, so the cache keeps exactly the bench's entries.

import { exitIfOrphaned } from '../../test/helpers/exit-with-parent.js';
import { SharedCache } from '../../lib/index.js';

const [file, entriesArg] = process.argv.slice(2);
const entries = Number(entriesArg);
const cache = SharedCache.open(file, { nearCache: 0 });
process.stdout.write('ready\n');

const value = Buffer.alloc(64);
let state = 0x9e3779b9;
for (let n = 0; ; n++) {
  // xorshift32: a random key of the whole key space for every write.
  state ^= state << 13;
  state ^= state >>> 17;
  state ^= state << 5;
  const k = (state >>> 0) % entries;
  value.writeUInt32LE(n, 0);
  cache.set(`key:${k}`, value);
  // Pipes are synchronous on Linux: the line is out before the next write.
  if (n === 10_000) process.stdout.write('writing\n');
  // Timers never run in this loop; the bench's death is checked here.
  if ((n & 0xffff) === 0) exitIfOrphaned();
}

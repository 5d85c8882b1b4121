// The writer npm run bench:scale kills: opens the cache file given as
// argv[2], says "ready" on stdout, then, in mode argv[4] 'writes' (the
// default), overwrites random keys of the argv[3] that the bench filled with
// new 64 B values until it is killed (SIGKILL, by the bench), saying
// "writing" once the first 10,000 are done. It only overwrites, so the cache
// keeps exactly the bench's entries. In mode 'in-lock' it takes shard 0's
// lock, says "writing", and waits inside it to be killed: the worst case of
// a kill, whose shard the next opener rebuilds.

import { openArenaFile } from '../../lib/arena/common/file.js';
import { CACHE_ARENA } from '../../lib/cache/open.js';
import { exitIfOrphaned } from '../../test/helpers/exit-with-parent.js';
import { SharedCache } from '../../lib/index.js';

const [file, entriesArg, mode = 'writes'] = process.argv.slice(2);
const entries = Number(entriesArg);

if (mode === 'in-lock') {
  // The arena itself (as a cache's lock holder would be), so as to stop inside the lock.
  const { arena } = openArenaFile(file, { plan: null, reset: false, mode: 0o600, populate: false, kind: CACHE_ARENA });
  process.stdout.write('ready\n');
  arena.lock.acquire(arena.shards[0]);
  process.stdout.write('writing\n');
  setInterval(exitIfOrphaned, 500);
} else {
  writeUntilKilled();
}

function writeUntilKilled() {
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
}

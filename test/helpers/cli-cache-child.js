// A process that uses a cache file while the test runs the arenacache
// command on it (test/cli.cache.test.js). Started with fork(path, keys,
// seed); talks to the parent over IPC.
//
// It opens the file (near cache on), sets "sticky:<i>" once to strings that
// its near cache keeps, then until told to stop sets and gets "live:<i>"
// with values that carry their key's hash and a checksum (checked-value.js),
// counting every read: a miss, or a hit that is whole ('ok'), torn or of
// another key ('foreign').
//
//   'check' -> { ops, sets, sticky, roundFailures, counts }: how many sticky
//              keys it still reads (0 once the cache was reset elsewhere), and
//              a round that sets every live key and reads it back at once
//              (every read must be that value)
//   'stop'  -> { counts, verify }, then it exits 0
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { SharedCache } from '../../lib/index.js';
import { asText, checkValue, countRead, makeValue } from './checked-value.js';
import { seededRandom } from './random.js';

const [path, keyCount, seed] = process.argv.slice(2);
const cache = SharedCache.open(path, { nearCache: 1000 });
const random = seededRandom(Number(seed));
const live = Array.from({ length: Number(keyCount) }, (_, i) => `live:${i}`);
const sticky = Array.from({ length: 10 }, (_, i) => `sticky:${i}`);
const counts = { ops: 0, sets: 0, hits: 0, misses: 0, ok: 0, torn: 0, foreign: 0 };
const WRITER = process.pid;
let sequence = 0;

function set(key) {
  const value = makeValue(key, WRITER, ++sequence, 20 + random.int(300));
  // Every other value as a string, which the near cache keeps.
  cache.set(key, sequence % 2 === 0 ? asText(value) : value);
  counts.sets++;
  return value;
}

for (const key of sticky) {
  cache.set(key, asText(makeValue(key, WRITER, ++sequence, 40)));
  cache.get(key); // now in the near cache
}
for (const key of live) set(key);

let stop = false;
const requests = [];
process.on('message', (message) => requests.push(message));
process.send({ ready: true });

function check() {
  let stickyLeft = 0;
  for (const key of sticky) {
    const value = cache.get(key);
    if (value !== undefined) stickyLeft++;
  }
  let roundFailures = 0;
  for (const key of live) {
    const value = set(key);
    const read = cache.get(key);
    if (read === undefined || checkValue(key, read) !== 'ok' || !Buffer.from(read, typeof read === 'string' ? 'latin1' : undefined).equals(value)) roundFailures++;
  }
  return { ops: counts.ops, sets: counts.sets, sticky: stickyLeft, roundFailures, counts: { ...counts } };
}

while (!stop) {
  for (let i = 0; i < 64; i++) {
    const key = live[random.int(live.length)];
    if (random() < 0.3) set(key);
    else countRead(counts, key, cache.get(key));
    counts.ops++;
  }
  await yieldToEvents();
  while (requests.length > 0) {
    const request = requests.shift();
    if (request === 'check') process.send(check());
    else if (request === 'stop') stop = true;
  }
}
process.send({ counts, verify: cache.verify() });
cache.close();
process.disconnect();

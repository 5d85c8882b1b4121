// A process that sets and reads self-checking values in a file-backed cache
// for a while, then prints what it saw as JSON. Run by
// test/file.namespaces.test.js, once in this PID namespace and once in a
// new one (unshare -p), on the same file.
import { SharedCache } from '../../lib/index.js';
import { checkValue, makeValue } from './checked-value.js';

const { path, ms, writer } = JSON.parse(process.argv[2]);
const cache = SharedCache.open(path, { nearCache: 0 });
const keys = Array.from({ length: 64 }, (_, i) => `key:${i}`);
const seen = { ops: 0, ok: 0, torn: 0, foreign: 0 };
const end = performance.now() + ms;
let sequence = 0;
while (performance.now() < end) {
  for (const key of keys) {
    cache.set(key, makeValue(key, writer, ++sequence, 64 + (sequence % 512)));
    const value = cache.get(key);
    if (value !== undefined) seen[checkValue(key, value)]++;
    seen.ops += 2;
  }
}
const { lockRecoveries, shardRepairs } = cache.stats();
const { ok, problems } = cache.verify();
cache.close();
console.log(JSON.stringify({ ...seen, pid: process.pid, lockRecoveries, shardRepairs, verified: ok, problems }));

// Run with ARENACACHE_NATIVE=off: the in-memory cache works, native features
// explain why they are unavailable.
import { statSync } from 'node:fs';
import os from 'node:os';
import { currentThreadId, isThreadAlive, nativeAvailable, nativeUnavailableReason } from '../../lib/native.js';
import { SharedCache } from '../../lib/index.js';
import { CacheFS } from '../../lib/fs/index.js';

const cache = new SharedCache({ memoryBytes: 2 ** 20 });
cache.set('k', { works: true });
let error = null;
const path = `/dev/shm/arenacache-native-off-${process.pid}.arena`;
try {
  SharedCache.open(path, { memoryBytes: 2 ** 20 });
} catch (e) {
  error = { name: e.name, code: e.code, message: e.message };
}
let fileCreated = true;
try {
  statSync(path);
} catch {
  fileCreated = false;
}
// CacheFS resolves paths beneath its root only through the addon: a directory is refused.
let fsError = null;
try {
  new CacheFS({ root: os.tmpdir(), cache });
} catch (e) {
  fsError = { name: e.name, code: e.code, message: e.message };
}
await cache.flush();
console.log(
  JSON.stringify({
    nativeAvailable,
    nativeUnavailableReason,
    value: cache.get('k'),
    tid: currentThreadId(),
    alive: isThreadAlive(process.pid, 1),
    error,
    fileCreated,
    fsError,
  }),
);

// Run with ARENACACHE_NATIVE=off: the in-memory cache works, native features
// explain why they are unavailable.
import { currentThreadId, isThreadAlive, nativeAvailable, nativeUnavailableReason, requireNative } from '../../lib/native.js';
import { SharedCache } from '../../lib/index.js';

const cache = new SharedCache({ memoryBytes: 2 ** 20 });
cache.set('k', { works: true });
let error = null;
try {
  requireNative('SharedCache.open()');
} catch (e) {
  error = { name: e.name, code: e.code, message: e.message };
}
console.log(
  JSON.stringify({
    nativeAvailable,
    nativeUnavailableReason,
    value: cache.get('k'),
    tid: currentThreadId(),
    alive: isThreadAlive(process.pid, 1),
    error,
  }),
);

// The handle protocol: what `cache.handle` is, and what SharedCache.attach()
// accepts in its place. A handle is a frozen, structured-cloneable object
// (postMessage, workerData, piscina task arguments) naming the arena's
// buffer, its file for a file-backed cache, and the outbox the
// InvalidationBus reads the instance's writes from; a bare SharedArrayBuffer
// is accepted too, and has neither path nor outbox.

import { describe } from '../errors.js';

const HANDLE_TYPE = 'arenacache.SharedCache';
const HANDLE_VERSION = 1;

/**
 * @typedef {{ type: string, version: number, buffer: SharedArrayBuffer, path?: string | null, outbox?: SharedArrayBuffer | null }
 *   | (SharedArrayBuffer & { path?: undefined })} CacheHandle
 */

/** The frozen handle of a cache over `buffer` (`path` null in memory, `outbox` null without one). */
export function makeHandle(buffer, path, outbox) {
  return Object.freeze({ type: HANDLE_TYPE, version: HANDLE_VERSION, buffer, path, outbox });
}

/**
 * What attach() was given, checked: the arena's buffer, the file path the
 * handle names (null for none) and its outbox buffer (null for none, as for
 * a bare buffer, whose instance's writes are not published).
 * @param {CacheHandle} handle
 * @returns {{ buffer: SharedArrayBuffer, path: string | null, outbox: SharedArrayBuffer | null }}
 */
export function readHandle(handle) {
  if (handle instanceof SharedArrayBuffer) return { buffer: handle, path: null, outbox: null };
  if (handle === null || typeof handle !== 'object' || handle.type !== HANDLE_TYPE) {
    throw new TypeError(
      `handle must be a SharedCache handle (cache.handle) or its SharedArrayBuffer (got ${describe(handle)})`,
    );
  }
  if (handle.version !== HANDLE_VERSION) {
    throw new RangeError(`handle.version must be ${HANDLE_VERSION} (got ${describe(handle.version)})`);
  }
  if (!(handle.buffer instanceof SharedArrayBuffer)) {
    throw new TypeError(`handle.buffer must be a SharedArrayBuffer (got ${describe(handle.buffer)})`);
  }
  if (handle.outbox !== undefined && handle.outbox !== null && !(handle.outbox instanceof SharedArrayBuffer)) {
    throw new TypeError(`handle.outbox must be a SharedArrayBuffer (got ${describe(handle.outbox)})`);
  }
  return { buffer: handle.buffer, path: typeof handle.path === 'string' ? handle.path : null, outbox: handle.outbox ?? null };
}

// Tracing through node:diagnostics_channel (as lru-cache does): channels a
// tool subscribes to, by name, without any option of the cache.
//
//   arenacache:evict   { count, reason: 'memory' | 'max', shard }
//                      a set() evicted `count` entries of shard `shard` to
//                      make room in memoryBytes ('memory') or to stay within
//                      `max` ('max'); one message per reason per set.
//                      Published by the eviction policies (lib/arena/entries/policies.js).
//   arenacache:repair  { shard, reason, lost }
//                      a shard was repaired (see REPAIR_REASONS), losing
//                      `lost` entries.
//   arenacache:fetch   { key, outcome, durationMs[, error] }
//                      how a fetch() call ended (see FETCH_OUTCOMES).
//
// Every publisher first reads the channel's hasSubscribers, so that with
// nobody listening a message costs that one read: no object, no clock read.
// Evictions and repairs happen while the shard's lock is held, where a
// subscriber that used the cache would wait for that lock forever; they are
// therefore published in a microtask, just after the operation returned.
// Channels are looked up by name (diagnostics_channel.channel() gives every
// module the same object for a name), so lib/arena needs nothing from here.

import { channel } from 'node:diagnostics_channel';
import { describe } from '../errors.js';
import { EVICT_CHANNEL_NAME } from '../arena/entries/policies.js';
import { REPAIR_CHANNEL_NAME } from '../arena/common/repair-channel.js';

export { publishRepair, REPAIR_REASONS } from '../arena/common/repair-channel.js';

/** The names of arenacache's diagnostics channels: subscribe with diagnostics_channel.subscribe(channels.evict, fn). */
export const channels = Object.freeze({
  evict: EVICT_CHANNEL_NAME,
  repair: REPAIR_CHANNEL_NAME,
  fetch: 'arenacache:fetch',
});

const fetchChannel = channel(channels.fetch);

/**
 * How a fetch() call ended:
 *   hit             a fresh value was in the cache
 *   stale           a stale value (staleWhileRevalidate) was returned at
 *                   once; a refresh was started in the background
 *   load            the value came from a loader run in this thread (by
 *                   this call, or by a concurrent fetch of the key here)
 *   wait            the value came from a loader in another thread or
 *                   process, which this call waited for
 *   stale-on-error  the refresh failed and the stale value was returned
 *                   (allowStaleOnFetchRejection)
 *   error           rejected with the loader's error (here or another thread's)
 *   timeout         rejected with ERR_FETCH_TIMEOUT
 *   aborted         rejected because the caller's signal aborted
 *   refresh         a background refresh of a stale value stored its result
 *                   (no caller waited for it)
 *   refresh-error   a background refresh failed
 */
export const FETCH_OUTCOMES = Object.freeze(['hit', 'stale', 'load', 'wait', 'stale-on-error', 'error', 'timeout', 'aborted', 'refresh', 'refresh-error']);

const fetchOutcomes = new Set(FETCH_OUTCOMES);

/**
 * The start of a fetch() for publishFetch(): performance.now() while
 * 'arenacache:fetch' has subscribers, else -1 (no clock read).
 */
export function fetchStarted() {
  return fetchChannel.hasSubscribers ? performance.now() : -1;
}

/**
 * Publishes how a fetch() of `key` ended on 'arenacache:fetch': `outcome`
 * one of FETCH_OUTCOMES, `startedAt` what fetchStarted() returned when the
 * call began (-1: nobody listened then, and the call is not published),
 * `error` the rejection for the outcomes that reject. Synchronous: call it
 * outside any lock (fetch() holds none while it awaits).
 */
export function publishFetch(key, outcome, startedAt, error) {
  if (startedAt < 0 || !fetchChannel.hasSubscribers) return;
  if (!fetchOutcomes.has(outcome)) throw new RangeError(`outcome must be one of ${FETCH_OUTCOMES.join(', ')} (got ${describe(outcome)})`);
  const message = { key, outcome, durationMs: performance.now() - startedAt };
  if (error !== undefined) message.error = error;
  fetchChannel.publish(message);
}

// The diagnostics_channel 'arenacache:repair' (see lib/cache/diagnostics.js
// for every channel): a message each time a shard is repaired. Repairs
// happen in lib/arena, which imports nothing from lib/cache, hence here.

import { channel } from 'node:diagnostics_channel';
import { describe } from '../../errors.js';

export const REPAIR_CHANNEL_NAME = 'arenacache:repair';
const repairChannel = channel(REPAIR_CHANNEL_NAME);

/**
 * Why a shard was repaired:
 *   dead-holder      a thread or process died holding the shard's lock; the
 *                    lock was taken over and the shard rebuilt (or reset)
 *   lock-lost        this thread's holding was taken over while it wrote
 *                    (it was thought dead); the shard is reset
 *   corrupt          an operation under the lock found the shard
 *                    contradicting itself (ERR_ARENA_CORRUPT); it is reset
 *                    (a damaged write stamp alone is restarted in place,
 *                    with nothing lost)
 *   damaged          a reader found the shard damaged (a record outside its
 *                    region, entries that cannot be listed); it is reset
 *   restart-locked   at open, the only opener found the shard left locked
 *                    by a process that died; rebuilt (or reset)
 *   restart-damaged  at open, the only opener found the shard failing its
 *                    checks (a machine crash, flipped bits); rebuilt (or reset)
 */
export const REPAIR_REASONS = Object.freeze(['dead-holder', 'lock-lost', 'corrupt', 'damaged', 'restart-locked', 'restart-damaged']);

const repairReasons = new Set(REPAIR_REASONS);

/**
 * Publishes a shard repair on 'arenacache:repair': shard index `shard`,
 * `reason` one of REPAIR_REASONS, `lost` the entries it dropped. May be
 * called with the shard's lock held: the message goes out in a microtask.
 */
export function publishRepair(shard, reason, lost) {
  // Checked whoever listens (repairs are rare): a wrong reason shows in the
  // first test that repairs, not only where someone subscribed.
  if (!repairReasons.has(reason)) throw new RangeError(`reason must be one of ${REPAIR_REASONS.join(', ')} (got ${describe(reason)})`);
  if (!repairChannel.hasSubscribers) return;
  const message = { shard, reason, lost };
  queueMicrotask(() => repairChannel.publish(message));
}

// Deterministic request traces for the hit-ratio benchmark. Every trace is a
// Uint32Array of key ids, generated from a seed, so every policy and peer
// sees exactly the same requests.

import { seededRandom } from '../../test/helpers/seeded-random.js';
import { scatter, zipfSampler } from '../lib/zipf.js';

export function zipfTrace({ keys, requests, alpha, seed }) {
  const random = seededRandom(seed);
  const next = zipfSampler(keys, alpha, random);
  const trace = new Uint32Array(requests);
  for (let i = 0; i < requests; i++) trace[i] = scatter(next(), keys);
  return trace;
}

/**
 * Zipf 0.99 traffic with a loop scan mixed in: every other burst of requests
 * walks sequentially through a range of keys larger than the cache (a batch
 * job, a crawler), which pushes the popular keys out of a plain LRU.
 */
export function scanTrace({ keys, requests, seed, scanKeys, scanShare = 0.3, burst = 1000 }) {
  const random = seededRandom(seed);
  const next = zipfSampler(keys, 0.99, random);
  const trace = new Uint32Array(requests);
  let scanPosition = 0;
  for (let i = 0; i < requests; i++) {
    const inScan = (Math.floor(i / burst) % Math.round(1 / scanShare)) === 0;
    if (inScan) {
      // The scanned keys are ids above the Zipf key space: never popular.
      trace[i] = keys + scanPosition;
      scanPosition = (scanPosition + 1) % scanKeys;
    } else {
      trace[i] = scatter(next(), keys);
    }
  }
  return trace;
}

/** Zipf 0.9 whose popular keys change every `phase` requests. */
export function shiftingTrace({ keys, requests, seed, phase }) {
  const random = seededRandom(seed);
  const next = zipfSampler(keys, 0.9, random);
  const trace = new Uint32Array(requests);
  for (let i = 0; i < requests; i++) {
    const shift = Math.floor(i / phase) * 7919;
    trace[i] = scatter((next() + shift) % keys, keys);
  }
  return trace;
}

/** Number of distinct key ids a trace can use (for key tables). */
export function keySpace(trace) {
  let max = 0;
  for (const id of trace) if (id > max) max = id;
  return max + 1;
}

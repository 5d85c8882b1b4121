// The workload of npm run bench:hot: string keys read in a seeded Zipf order,
// three kinds of value, and whether this SharedCache has a near cache.

import { isDeepStrictEqual } from 'node:util';
import { SharedCache } from '../../lib/index.js';
import { makePayload, shuffledOrder } from './keys.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';
import { zipfSampler } from './zipf.js';

/**
 * Which key each popularity rank is: a fixed permutation, the same in every
 * thread and process, so that popular keys are spread over the insertion
 * order (and over the arena's rings) rather than being its first entries.
 */
const RANK_SEED = 19;

/** `length` key indexes below `keys`, drawn from Zipf(s). */
export function zipfOrder({ keys, s, length, seed }) {
  const draw = zipfSampler(keys, s, seededRandom(seed));
  const keyOfRank = shuffledOrder(keys, RANK_SEED);
  const order = new Uint32Array(length);
  for (let i = 0; i < length; i++) order[i] = keyOfRank[draw()];
  return order;
}

/** Which operations of a sequence are sets (1): about `setPercent` % of them, seeded. */
export function setMask(length, setPercent, seed) {
  const random = seededRandom(seed);
  const mask = new Uint8Array(length);
  for (let i = 0; i < length; i++) mask[i] = random() * 100 < setPercent ? 1 : 0;
  return mask;
}

function userObject(i) {
  return { id: i, name: `User ${i}`, email: `user${i}@example.com`, roles: ['reader', i % 3 === 0 ? 'admin' : 'writer'], active: i % 2 === 0, score: (i * 7919) % 10_000 / 100 };
}

function asciiString(i, length) {
  const bytes = makePayload(length, i + 1);
  for (let j = 0; j < length; j++) bytes[j] = 97 + (bytes[j] % 26);
  bytes.write(`${i}:`, 0, 'latin1');
  // latin1 decoding makes a flat one-byte string, as a cache's get would return.
  return bytes.toString('latin1');
}

/**
 * The bytes in a Buffer over an ArrayBuffer of their own: a small Buffer is
 * otherwise a slice of Node's 8 KiB pool, which structuredClone copies
 * whole (the lru+clone peer would copy 8 KiB for a 64 B value).
 */
function ownBuffer(bytes) {
  const copy = new Uint8Array(bytes);
  return Buffer.from(copy.buffer, 0, copy.length);
}

function sameBytes(a, b) {
  // lmdb's getBinaryFast answers a view whose length says less than its
  // backing (its reused buffer): compare the first `length` bytes only.
  return a instanceof Uint8Array && a.length === b.length && b.equals(a.subarray(0, a.length));
}

/**
 * The kinds of value: a label, about how many bytes one takes stored (to
 * size the arena), the distinct value of key i, and equality.
 */
export const KINDS = Object.freeze({
  object: { label: 'small object', bytes: 128, make: userObject, same: isDeepStrictEqual },
  buffer: { label: '64 B Buffer', bytes: 64, make: (i) => ownBuffer(makePayload(64, i + 1)), same: sameBytes },
  string: { label: '4 KiB string', bytes: 4096, make: (i) => asciiString(i, 4096), same: (a, b) => a === b },
});

/**
 * Whether this SharedCache takes the `nearCache` option; `reason` says why
 * not. Asked once, so that every section of a run agrees.
 */
export function nearCacheSupport() {
  try {
    new SharedCache({ memoryBytes: 2 ** 20, nearCache: 0 }).close();
    return { supported: true, reason: null };
  } catch (error) {
    return { supported: false, reason: `${error.name}: ${error.message}` };
  }
}

/** attach() options for a SharedCache with `nearCache` entries, none when the option does not exist. */
export function nearOptions(supported, nearCache) {
  return supported ? { nearCache } : undefined;
}

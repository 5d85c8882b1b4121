// The options of SharedCache's per-call methods (get, peek, set, fetch,
// their batch forms and the atomic operations): which each accepts, their
// checks, and info()'s answer.
// An option a method does not know is a TypeError that names it, never
// silently ignored.

import { describe } from '../errors.js';
import { checkBoolean } from '../validate.js';
import { checkStaleWindow, checkTtl } from './options.js';

/** The options each method accepts, in the order error messages list them. */
const KNOWN = Object.freeze({
  get: ['allowStale'],
  peek: ['allowStale'],
  getMany: ['allowStale'],
  set: ['ttl', 'staleWhileRevalidate'],
  setMany: ['ttl', 'staleWhileRevalidate'],
  add: ['ttl', 'staleWhileRevalidate'],
  replace: ['ttl', 'staleWhileRevalidate'],
  compareAndSet: ['ttl', 'staleWhileRevalidate'],
  update: ['ttl', 'staleWhileRevalidate'],
  incr: ['ttl', 'initial'],
  take: ['allowStale'],
  fetch: [
    'ttl',
    'staleWhileRevalidate',
    'allowStale',
    'forceRefresh',
    'signal',
    'context',
    'allowStaleOnFetchRejection',
    'noDeleteOnFetchRejection',
  ],
});
/** fetch()'s options about loading (the others are for storing: setOptions). */
const FETCHING = ['allowStale', 'forceRefresh', 'signal', 'context', 'allowStaleOnFetchRejection', 'noDeleteOnFetchRejection'];
const BOOLEANS = ['allowStale', 'forceRefresh', 'allowStaleOnFetchRejection', 'noDeleteOnFetchRejection'];

/** Checks the options object of `method` (see KNOWN); returns it. */
export function checkEntryOptions(options, method) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    const example = KNOWN[method][0] === 'ttl' ? '{ ttl: 1000 }' : '{ allowStale: true }';
    throw new TypeError(`options must be an object such as ${example} (got ${describe(options)})`);
  }
  const known = KNOWN[method];
  for (const name in options) {
    if (!known.includes(name)) {
      const list = known.length === 1 ? `the only one is ${known[0]}` : `the known ones are ${known.join(', ')}`;
      throw new TypeError(`options.${name} is not a known option of ${method}(); ${list}`);
    }
  }
  if (options.ttl !== undefined) checkTtl(options.ttl, 'options.ttl');
  if (options.staleWhileRevalidate !== undefined) checkStaleWindow(options.staleWhileRevalidate, 'options.staleWhileRevalidate');
  for (const name of BOOLEANS) {
    const value = options[name];
    // The name for the message is made only when there is one (this runs on every call with options).
    if (value !== undefined && typeof value !== 'boolean') checkBoolean(value, `options.${name}`);
  }
  if (options.initial !== undefined) checkFiniteNumber(options.initial, 'options.initial');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new TypeError(`options.signal must be an AbortSignal (got ${describe(options.signal)})`);
  }
  return options;
}

/** A TypeError for a value of `name` that is not a number, a RangeError for NaN or ±Infinity. */
export function checkFiniteNumber(value, name) {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number (got ${describe(value)})`);
  if (!Number.isFinite(value)) throw new RangeError(`${name} must be a finite number (got ${value})`);
}

/** A version from info(key).version: a whole number from 1 to 2^53 - 1. */
export function checkVersion(value, name) {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number, the version info(key).version gave (got ${describe(value)})`);
  if (!(Number.isSafeInteger(value) && value >= 1)) throw new RangeError(`${name} must be a whole number from 1 to 2^53 - 1, as info(key).version gives (got ${value})`);
}

/**
 * fetch()'s options, checked and with their defaults: `setOptions` for
 * storing the loaded value (its ttl and staleWhileRevalidate, where given).
 */
export function readFetchOptions(options) {
  // Most calls pass no options: one answer for them all, not an object per call.
  if (options === undefined) return FETCH_DEFAULTS;
  const given = checkEntryOptions(options, 'fetch');
  const resolved = { ...FETCH_DEFAULTS, setOptions: given };
  for (const name of FETCHING) if (given[name] !== undefined) resolved[name] = given[name];
  return resolved;
}

/** readFetchOptions() without options: every default once. */
const FETCH_DEFAULTS = Object.freeze({
  setOptions: undefined,
  // A value in its stale window is there to be served while it is refreshed.
  allowStale: true,
  forceRefresh: false,
  signal: undefined,
  context: undefined,
  allowStaleOnFetchRejection: false,
  noDeleteOnFetchRejection: false,
});

/** `name` if it is an iterable (not a string), for the batch methods. */
export function checkIterable(value, name) {
  if (value === null || typeof value !== 'object' || typeof value[Symbol.iterator] !== 'function') {
    throw new TypeError(`${name} must be an iterable such as an array (got ${describe(value)})`);
  }
  return value;
}

/** info()'s answer from Arena#inspect()'s facts. */
export function entryInfo(facts, value, policyName, now) {
  const expiresAt = facts.expiresAt > 0 ? facts.expiresAt : Infinity;
  const staleAt = facts.staleAt > 0 ? facts.staleAt : expiresAt;
  return {
    value,
    stale: facts.stale,
    remainingTTL: staleAt === Infinity ? Infinity : staleAt - now,
    staleAt,
    expiresAt,
    version: facts.version,
    size: facts.recordBytes,
    valueBytes: facts.valueBytes,
    policy: { name: policyName, ring: facts.ring, frequency: facts.frequency },
  };
}

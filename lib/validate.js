// Checks of options objects and arguments, shared by every part of the
// package: a failure names the option or argument, says what was expected
// and shows what was given ("options.threads must be an integer from 1 to 64
// (got 0)"). A wrong type is a TypeError, a value out of range a RangeError.

import { describe } from './errors.js';

function editDistance(a, b) {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length];
}

/** lru-cache option names whose counterpart here has another name (users come from lru-cache). */
const LRU_CACHE_NAMES = Object.freeze({ maxSize: 'memoryBytes', maxEntrySize: 'memoryBytes' });

/** Throws for any key of `options` not in `known`, suggesting the closest name. */
export function rejectUnknown(options, known, where) {
  for (const name of Object.keys(options)) {
    if (Object.hasOwn(known, name)) continue;
    if (Object.hasOwn(LRU_CACHE_NAMES, name) && Object.hasOwn(known, LRU_CACHE_NAMES[name])) {
      throw new TypeError(`${where}.${name} is not a known option; did you mean ${LRU_CACHE_NAMES[name]}? (lru-cache's ${name})`);
    }
    let best = null;
    let bestDistance = Infinity;
    for (const candidate of Object.keys(known)) {
      const distance = candidate.toLowerCase() === name.toLowerCase() ? 0 : editDistance(name, candidate);
      if (distance < bestDistance) {
        best = candidate;
        bestDistance = distance;
      }
    }
    const hint = bestDistance <= 3 ? `; did you mean ${best}?` : `; valid options are ${Object.keys(known).join(', ')}`;
    throw new TypeError(`${where}.${name} is not a known option${hint}`);
  }
}

export function checkObject(options, where) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${where} must be an object (got ${describe(options)})`);
  }
}

export function checkBoolean(value, name) {
  if (typeof value !== 'boolean') throw new TypeError(`${name} must be a boolean (got ${describe(value)})`);
}

/** A function, named `name` in the TypeError otherwise. */
export function checkFunction(value, name) {
  if (typeof value !== 'function') throw new TypeError(`${name} must be a function (got ${describe(value)})`);
}

/** Whether `value` is a path a system call can take: a non-empty string without NUL bytes (a NUL would end it early). */
export const isPath = (value) => typeof value === 'string' && value.length > 0 && !value.includes('\0');

/** Throws a TypeError unless `value` is a path a system call can take (see isPath). */
export function checkPath(value, name) {
  if (!isPath(value)) throw new TypeError(`${name} must be a non-empty string without NUL bytes (got ${describe(value)})`);
}

/**
 * `options` (an object of names from `defaults` only) over `defaults`: an
 * option given as undefined keeps its default.
 */
export function withDefaults(options, defaults, where) {
  checkObject(options, where);
  rejectUnknown(options, defaults, where);
  const resolved = { ...defaults };
  for (const [name, value] of Object.entries(options)) if (value !== undefined) resolved[name] = value;
  return resolved;
}

/**
 * How to word a range where the bare numbers say too little: `from` and `to`
 * replace a bound ('0 (off)', '16 MiB'), `unit` follows the range
 * ('milliseconds'). `to: null` leaves out an upper bound that no sensible
 * value comes near ("a non-negative integer").
 * @typedef {{ from?: string, to?: string | null, unit?: string }} RangeWording
 */

/**
 * The one wording of an integer range in messages: "an integer from 1 to
 * 64", "an integer from 0 (off) to 16777216 entries", "a non-negative integer".
 * @param {number} min
 * @param {number} max
 * @param {RangeWording} [wording]
 */
export function integerRange(min, max, { from = String(min), to = String(max), unit } = {}) {
  const units = unit === undefined ? '' : ` ${unit}`;
  if (to !== null) return `an integer from ${from} to ${to}${units}`;
  const lowest = min === 0 ? 'a non-negative integer' : min === 1 ? 'a positive integer' : `an integer of at least ${from}`;
  return unit === undefined ? lowest : `${lowest} number of ${unit}`;
}

/**
 * Throws unless `value` is an integer from `min` to `max`: a TypeError if it
 * is not a number, else a RangeError that says what was expected. `expected`
 * words the range (see RangeWording), or is the whole phrase for a rule that
 * is more than a range ('a power of two from 4096 to 16777216', 'a file mode
 * from 0 to 0o7777').
 * @param {unknown} value
 * @param {string} name
 * @param {number} min
 * @param {number} max
 * @param {RangeWording | string} [expected]
 */
export function checkInteger(value, name, min, max, expected) {
  if (typeof value !== 'number') throw new TypeError(`${name} must be a number (got ${describe(value)})`);
  if (!Number.isInteger(value) || value < min || value > max) {
    const wording = typeof expected === 'string' ? expected : integerRange(min, max, expected);
    throw new RangeError(`${name} must be ${wording} (got ${describe(value)})`);
  }
}

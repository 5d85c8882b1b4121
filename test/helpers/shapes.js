// Objects of many distinct shapes for the codec structure tests: the shape
// (key names) and the values both derive from a tag and a number, so a
// reader can tell a whole object of the right shape from a miss, and from an
// object decoded with another shape's key names (a wrong object).
import { isDeepStrictEqual } from 'node:util';

/** An object whose key names are its own (`tag`, `i`), with a nested object of another own shape. */
export function shapeValue(tag, i) {
  return {
    [`${tag}_${i}_id`]: i,
    [`${tag}_${i}_name`]: `${tag} number ${i}`,
    [`${tag}_${i}_roles`]: ['reader', `role${i % 5}`],
    [`${tag}_${i}_inner`]: { [`${tag}_${i}_deep`]: i * 1.5, [`${tag}_${i}_flag`]: i % 2 === 0 },
  };
}

/** 'ok', 'missing' (undefined) or 'wrong' (anything else). */
export function checkShape(tag, i, value) {
  if (value === undefined) return 'missing';
  return isDeepStrictEqual(value, shapeValue(tag, i)) ? 'ok' : 'wrong';
}

/** Counts of checkShape over keys `${tag}:${i}` for i in [from, to). */
export function readShapes(cache, tag, from, to) {
  const counts = { ok: 0, missing: 0, wrong: 0 };
  for (let i = from; i < to; i++) counts[checkShape(tag, i, cache.get(`${tag}:${i}`))]++;
  return counts;
}

/** Sets keys `${tag}:${i}` for i in [from, to) to shapeValue(tag, i). */
export function writeShapes(cache, tag, from, to) {
  for (let i = from; i < to; i++) cache.set(`${tag}:${i}`, shapeValue(tag, i));
}

/** shapeValue with one more key, `padding` + i: longer key names make a bigger structure record. */
export function paddedShapeValue(tag, i, padding) {
  return { ...shapeValue(tag, i), [`${padding}${i}`]: i };
}

// The float64 counts in shared memory that near caches trust: each shard's
// write stamp (shard-meta.js M64_WRITE_STAMP, which stamps every record) and
// each slot group's write count (Shard.groupWrites). Both only grow, by one
// under the shard's lock, so that a value a reader noted never comes back:
// a near copy holds while its record still bears the stamp it was read with
// (or its group's count is still the one noted), see record-stamp.js.
//
// A damaged count must not be trusted, nor kept going: a flipped low
// mantissa bit leaves a fraction that +1 keeps forever (every later record
// then bears a stamp verify() rejects, and each restart dropped them all), a
// flipped exponent bit can take it past 2^53 (where +1 stops changing it: a
// near copy would never see another write) or below zero, a stray write
// leaves anything. So every place that judges a shard (verify(), the
// rebuild and reset after damage or a dead holder, a set that is about to
// stamp a record) checks it with isSoundWriteCount() and, when it fails,
// restarts it with restartedWriteCount().
//
// A restart must never hand out again a value that some reader may hold: in
// a live arena, near caches of other threads and processes hold stamps and
// group counts they read before the damage (and, if a fraction crept in,
// values with that fraction). All of them are at most the highest value the
// word ever held. The damaged word no longer tells that value:
//   - a flipped bit below the binary point adds less than one, leaving the
//     integer part as it was; but
//   - a flipped exponent bit halves (or quarters...) it, which can also
//     leave a fraction (51 becomes 25.5), so a fraction does not prove the
//     integer part intact; and NaN, a negative value or one past 2^52 tell
//     nothing at all.
// So the restart takes the largest of three values, each past every held
// value in the cases it covers:
//   1. ceil(damaged) + 1, when the damaged value is finite and in range:
//      past the value itself, so past everything it was raised from and
//      everything issued since (a fractional count issues values below it).
//   2. the highest stamp still found in the shard's records, plus one, when
//      the caller knows it (a rebuild walks every record): a count lowered
//      below records that still exist.
//   3. Date.now() * 1024: counts start at 0 when the arena is created, and
//      a restarted one at this same formula of an earlier time; each write
//      adds one. As long as a shard averages fewer than 1024 writes per
//      millisecond (about a million a second through one lock) since either
//      moment, every value it ever held is below this one. This covers a
//      value lowered without a trace; it trusts the wall clock not to have
//      gone back since the count last started.
// Restarted in place of the old value, the count then grows by one again.
// The values stay well below MAX_WRITE_STAMP (2^52): Date.now() * 1024 is
// about 2^50.7 now and reaches 2^52 in the year 2116.
//
// When only one process has the arena open (restart recovery), nobody holds
// anything yet; the same restart serves, since what is safe with readers is
// safe without.

/**
 * Write stamps and counts stay below this, away from 2^53 where adding one
 * stops changing a float64 (ten million writes a second into one shard would
 * take 14 years to get here). A value outside [0, MAX_WRITE_STAMP] means a
 * damaged word.
 */
export const MAX_WRITE_STAMP = 2 ** 52;

/** Milliseconds since the epoch to counts: the rate a restarted count assumes a shard stays below (see above, 3). */
const WRITES_PER_MS = 1024;

/** Whether `count` (a write stamp or a group's write count) is a whole number in [0, MAX_WRITE_STAMP]. */
export function isSoundWriteCount(count) {
  return Number.isInteger(count) && count >= 0 && count <= MAX_WRITE_STAMP;
}

/**
 * The value a damaged count restarts at: past `damaged` itself when that
 * is a number in range, past `highestKnown` (the highest stamp the caller
 * found in use, 0: none known), and past every count the shard can have
 * reached by now (see above).
 */
export function restartedWriteCount(damaged, highestKnown = 0) {
  const pastDamaged = Number.isFinite(damaged) && damaged >= 0 && damaged < MAX_WRITE_STAMP ? Math.ceil(damaged) + 1 : 0;
  const pastKnown = Number.isFinite(highestKnown) && highestKnown >= 0 && highestKnown < MAX_WRITE_STAMP ? Math.floor(highestKnown) + 1 : 0;
  return Math.max(Date.now() * WRITES_PER_MS, pastDamaged, pastKnown);
}

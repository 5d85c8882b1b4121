// The demo's request stream: seeded Zipf-popular keys (see bench/lib/zipf.js).

import { scatter, zipfSampler } from '../../bench/lib/zipf.js';
import { seededRandom } from '../../test/helpers/seeded-random.js';

/** A function returning key ids in [0, n) with Zipf(alpha) popularity, from `seed`. */
export function zipfKeys(n, alpha, seed) {
  const next = zipfSampler(n, alpha, seededRandom(seed));
  return () => scatter(next(), n);
}

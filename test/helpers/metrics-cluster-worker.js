// A worker of metrics-cluster-primary.js: opens the shared cache file,
// registers its metrics in prom-client's default registry (the one the
// AggregatorRegistry asks workers for), does a known amount of traffic and
// tells the primary how much, then stays until the primary has scraped.
import { AggregatorRegistry, register } from 'prom-client';
import { SharedCache } from '../../lib/index.js';

// prom-client 15 answers the primary's requests only in processes that
// constructed an AggregatorRegistry (its constructor adds the listeners).
new AggregatorRegistry();

const index = Number(process.env.METRICS_CLUSTER_INDEX);
const cache = SharedCache.open(process.env.METRICS_CLUSTER_PATH, { memoryBytes: 4 * 2 ** 20 });
cache.registerMetrics(register, { name: 'shared' });

// Worker i: 10 + i sets of its own keys, a get of each (hits) and 5 gets of
// keys nobody sets (misses). Different counts per worker, so that a sum, a
// max of per-worker counts or a doubled count all differ from the truth.
const counts = { gets: 0, hits: 0, misses: 0, sets: 0 };
const own = 10 + index;
for (let j = 0; j < own; j++) {
  cache.set(`w${index}-k${j}`, `value ${j}`);
  counts.sets++;
}
for (let j = 0; j < own; j++) {
  if (cache.get(`w${index}-k${j}`) === undefined) throw new Error(`w${index}-k${j} is missing`);
  counts.gets++;
  counts.hits++;
}
for (let j = 0; j < 5; j++) {
  if (cache.get(`w${index}-absent${j}`) !== undefined) throw new Error(`w${index}-absent${j} is there`);
  counts.gets++;
  counts.misses++;
}
process.send({ type: 'metrics-cluster:done', counts });
process.on('message', (message) => {
  if (message?.type !== 'metrics-cluster:exit') return;
  cache.close();
  process.disconnect();
});

// Prometheus metrics in a node:cluster: the primary reports a shared arena's
// totals once, not once per worker; readings taken at different moments
// merge (counters the latest, gauges the first worker's), and every metric
// carries its aggregator.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { AggregatorRegistry, Registry } from 'prom-client';
import { SharedCache } from '../lib/index.js';
import { parsePrometheusText } from './helpers/prometheus-text.js';
import { MiB } from './helpers/units.js';

const PRIMARY = fileURLToPath(new URL('./fixtures/metrics-cluster-primary.js', import.meta.url));

const parse = parsePrometheusText;

test('a cluster of two workers on one cache file: the primary reports the arena totals once, not once per worker', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'arenacache-metrics-cluster-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const { stdout } = await promisify(execFile)(process.execPath, [PRIMARY, join(dir, 'cache.arena')], { timeout: 20_000 });
  const report = JSON.parse(stdout);
  assert.equal(report.error, undefined, report.error);
  const { text, expected } = report;
  // Worker 0: 10 sets, 10 hits, 5 misses; worker 1: 11, 11, 5.
  assert.deepEqual(expected, { gets: 31, hits: 21, misses: 10, sets: 21 });
  const samples = parse(text);
  assert.equal(samples['arenacache_gets_total{cache="shared"}'], expected.gets);
  assert.equal(samples['arenacache_hits_total{cache="shared"}'], expected.hits);
  assert.equal(samples['arenacache_misses_total{cache="shared"}'], expected.misses);
  assert.equal(samples['arenacache_sets_total{cache="shared"}'], expected.sets);
  assert.equal(samples['arenacache_entries{cache="shared"}'], expected.sets);
  assert.equal(samples['arenacache_memory_bytes{cache="shared"}'], 4 * MiB);
  assert.equal(samples['arenacache_evictions_total{cache="shared",cause="memory"}'], 0);
});

test('merging readings taken at different moments: counters give the latest, gauges the first worker\'s', async () => {
  // Two registries on one arena stand for two workers answering one scrape
  // at slightly different moments (the second after more traffic).
  const cache = new SharedCache({ memoryBytes: MiB, policy: 'lru' });
  const early = new Registry();
  const late = new Registry();
  cache.registerMetrics(early, { name: 'shared' });
  cache.registerMetrics(late, { name: 'shared' });
  for (let i = 0; i < 5; i++) cache.set(`k${i}`, 'value');
  cache.get('k0');
  const earlyJson = await early.getMetricsAsJSON();
  cache.set('k5', 'value');
  cache.get('k1');
  cache.get('k2');
  const lateJson = await late.getMetricsAsJSON();
  for (const order of [
    [earlyJson, lateJson],
    [lateJson, earlyJson],
  ]) {
    const merged = parse(await AggregatorRegistry.aggregate(order).metrics());
    assert.equal(merged['arenacache_gets_total{cache="shared"}'], 3, 'the latest count, whichever worker answered first');
    assert.equal(merged['arenacache_sets_total{cache="shared"}'], 6);
    // Gauges: one worker's reading, the first to answer.
    assert.equal(merged['arenacache_entries{cache="shared"}'], order[0] === earlyJson ? 5 : 6);
    assert.equal(merged['arenacache_memory_bytes{cache="shared"}'], MiB);
  }
});

test('each metric carries its aggregator: arena counters max, arena gauges first, per-process invalidation counters sum', async () => {
  const registry = new Registry();
  new SharedCache({ memoryBytes: MiB }).registerMetrics(registry);
  const aggregators = Object.fromEntries((await registry.getMetricsAsJSON()).map((metric) => [metric.name, metric.aggregator]));
  assert.equal(aggregators.arenacache_gets_total, 'max');
  assert.equal(aggregators.arenacache_evictions_total, 'max');
  assert.equal(aggregators.arenacache_lost_entries_total, 'max');
  assert.equal(aggregators.arenacache_entries, 'first');
  assert.equal(aggregators.arenacache_memory_bytes, 'first');
  assert.equal(aggregators.arenacache_max_entries, 'first');
  for (const name of [
    'invalidation_batches_total',
    'invalidation_keys_total',
    'invalidation_drops_total',
    'invalidation_send_errors_total',
    'invalidation_overflows_total',
    'invalidation_reconnects_total',
  ]) {
    assert.equal(aggregators[`arenacache_${name}`], 'sum', name);
  }
  // Nothing is left to prom-client's default by accident: every metric is one of the three.
  for (const [name, aggregator] of Object.entries(aggregators)) assert.ok(['max', 'first', 'sum'].includes(aggregator), `${name}: ${aggregator}`);
});

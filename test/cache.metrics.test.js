// registerMetrics(): the shared counters in a real prom-client registry, read
// at scrape time; several caches under their own cache label (a closed one
// drops out); a custom prefix; input errors; and what it says without
// prom-client installed.
import assert from 'node:assert/strict';
import test from 'node:test';
import { Registry } from 'prom-client';
import { SharedCache } from '../lib/index.js';
import { parsePrometheusText } from './helpers/prometheus-text.js';
import { MiB } from './helpers/units.js';
import { runWithout } from './helpers/without-package.js';

const parse = parsePrometheusText;

test('registerMetrics exposes the shared counters in a real prom-client registry', async () => {
  const registry = new Registry();
  // lru: the 10 newest entries stay, which keeps the expected counts simple.
  const cache = new SharedCache({ memoryBytes: MiB, max: 10, policy: 'lru' });
  cache.registerMetrics(registry, { name: 'sessions' });
  for (let i = 0; i < 20; i++) cache.set(`k${i}`, 'value');
  cache.get('k19');
  cache.get('k0');
  cache.delete('k18');
  const text = await registry.metrics();
  assert.match(text, /# HELP arenacache_hits_total Lookups that found a live entry\./);
  assert.match(text, /# TYPE arenacache_hits_total counter/);
  assert.match(text, /# TYPE arenacache_entries gauge/);
  const samples = parse(text);
  const stats = cache.stats();
  assert.equal(samples['arenacache_hits_total{cache="sessions"}'], 1);
  assert.equal(samples['arenacache_misses_total{cache="sessions"}'], 1);
  assert.equal(samples['arenacache_gets_total{cache="sessions"}'], 2);
  assert.equal(samples['arenacache_sets_total{cache="sessions"}'], 20);
  assert.equal(samples['arenacache_deletes_total{cache="sessions"}'], 1);
  assert.equal(samples['arenacache_evictions_total{cache="sessions",cause="max"}'], 10);
  assert.equal(samples['arenacache_evictions_total{cache="sessions",cause="memory"}'], 0);
  assert.equal(samples['arenacache_entries{cache="sessions"}'], 9);
  assert.equal(samples['arenacache_bytes{cache="sessions"}'], stats.liveBytes);
  assert.equal(samples['arenacache_memory_bytes{cache="sessions"}'], MiB);
  assert.equal(samples['arenacache_max_entries{cache="sessions"}'], 10);
  assert.equal(samples['arenacache_near_hits_total{cache="sessions"}'], 0);
  // Values are read at scrape time: more traffic, new values (the third get
  // of k19 is answered by the near cache, and counts as a hit too).
  cache.get('k19');
  cache.get('k19');
  const later = parse(await registry.metrics());
  assert.equal(later['arenacache_hits_total{cache="sessions"}'], 3);
  assert.equal(later['arenacache_near_hits_total{cache="sessions"}'], 1);
});

test('several caches share the metrics under their own cache label; unregister removes one', async () => {
  const registry = new Registry();
  const a = new SharedCache({ memoryBytes: MiB });
  const b = new SharedCache({ memoryBytes: MiB });
  const unregisterA = a.registerMetrics(registry, { name: 'a' });
  b.registerMetrics(registry, { name: 'b' });
  a.set('x', 1);
  b.set('x', 1);
  b.set('y', 1);
  let samples = parse(await registry.metrics());
  assert.equal(samples['arenacache_sets_total{cache="a"}'], 1);
  assert.equal(samples['arenacache_sets_total{cache="b"}'], 2);
  unregisterA();
  samples = parse(await registry.metrics());
  assert.equal(samples['arenacache_sets_total{cache="a"}'], undefined);
  assert.equal(samples['arenacache_sets_total{cache="b"}'], 2);
  // A closed cache drops out of the scrape instead of failing it.
  b.close();
  assert.equal(parse(await registry.metrics())['arenacache_sets_total{cache="b"}'], undefined);
});

test('a custom prefix and the default name', async () => {
  const registry = new Registry();
  const cache = new SharedCache({ memoryBytes: MiB });
  cache.registerMetrics(registry, { prefix: 'app_cache_' });
  cache.set('k', 1);
  assert.equal(parse(await registry.metrics())['app_cache_sets_total{cache="default"}'], 1);
});

test('registerMetrics input errors', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  const registry = new Registry();
  assert.throws(() => cache.registerMetrics({}), { name: 'TypeError', message: 'registry must be a prom-client Registry (got an instance of Object)' });
  assert.throws(() => cache.registerMetrics(registry, 'x'), {
    name: 'TypeError',
    message: "options must be an object such as { name: 'sessions' } (got \"x\")",
  });
  assert.throws(() => cache.registerMetrics(registry, { label: 'x' }), {
    name: 'TypeError',
    message: 'options.label is not a known option of registerMetrics(); they are name and prefix',
  });
  assert.throws(() => cache.registerMetrics(registry, { name: '' }), { name: 'TypeError', message: 'options.name must be a non-empty string (got "")' });
  assert.throws(() => cache.registerMetrics(registry, { prefix: 'bad prefix' }), {
    name: 'TypeError',
    message: 'options.prefix must be a Prometheus metric name prefix such as "arenacache_" (got "bad prefix")',
  });
  cache.registerMetrics(registry, { name: 'twice' });
  assert.throws(() => cache.registerMetrics(registry, { name: 'twice' }), {
    name: 'ArenaCacheError',
    code: 'ERR_METRICS_DUPLICATE',
    message: 'a cache named "twice" is already registered in this registry; pass another options.name',
  });
});

test('without prom-client installed, registerMetrics says how to get it', () => {
  const result = runWithout(
    'prom-client',
    `try { new lib.SharedCache({ memoryBytes: 2 ** 20 }).registerMetrics({ registerMetric() {} }); }
     catch (error) { console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message })); }`,
  );
  assert.deepEqual(result, {
    name: 'ArenaCacheError',
    code: 'ERR_PROM_CLIENT_MISSING',
    message: 'registerMetrics() needs the prom-client package, which could not be loaded; install it with "npm install prom-client"',
  });
});

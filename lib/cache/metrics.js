// Prometheus metrics through prom-client, for SharedCache (and CacheFS,
// which brings its own table: see lib/fs/fs-metrics.js).
//
// Values are read from the shared counters when the registry is scraped, so
// metrics cost nothing per operation. Every cache registered in a registry
// shares one metric object per name and appears under its own `cache` label,
// so several caches (or the same arena seen from several processes, each
// with its own registry) can be scraped side by side.
//
// In a Node cluster, prom-client's AggregatorRegistry merges the workers'
// registries metric by metric with each metric's `aggregator` (the default
// sums). A cache's counters and sizes are the arena's, not the process's:
// every worker attached to one mapped file reports the same totals, and a
// sum would count them once per worker. So (see ARENA_AGGREGATORS):
//   counters  'max': they only grow, and workers read them at slightly
//             different moments while answering one scrape, so the largest
//             is the latest reading. 'first' is whichever worker answered
//             first, and when scrapes overlap (two Prometheus servers) it
//             can report a reading older than one already reported.
//   gauges    'first': they move both ways, so the largest reading is not
//             the latest and 'max' would lean upwards (entries of a cache
//             that is shrinking); the first answer is one real reading, and
//             for a cache that answers in full from one worker, every gauge
//             comes from that same worker.
// The invalidation metrics count what this process's outbox sent and
// received (each process has its own): they keep 'sum'.

import { ArenaCacheError, codes, describe } from '../errors.js';
import { requireOptional } from '../optional-require.js';
import { DROP_REASONS, dropCounter } from './outbox.js';


/** stats() fields such as udpBatchesSent as [{ transport, direction }, value] pairs. */
function byTransportAndDirection(what) {
  return (s) =>
    ['udp', 'redis'].flatMap((transport) => [
      [{ transport, direction: 'sent' }, s[`${transport}${what}Sent`]],
      [{ transport, direction: 'received' }, s[`${transport}${what}Received`]],
    ]);
}

// [name, type, help, value from stats(), and for a metric split by labels
// their names: then the value is a list of [label values, value]]
const CACHE_METRICS = [
  ['gets_total', 'counter', 'Lookups by get().', (s) => s.gets],
  ['hits_total', 'counter', 'Lookups that found a live entry.', (s) => s.hits],
  ['near_hits_total', 'counter', 'Hits answered by the instances\' near caches (counted in hits_total too).', (s) => s.nearHits],
  ['misses_total', 'counter', 'Lookups that found nothing (or an expired entry).', (s) => s.misses],
  ['sets_total', 'counter', 'Entries stored.', (s) => s.sets],
  ['deletes_total', 'counter', 'Entries removed by delete().', (s) => s.deletes],
  ['increments_total', 'counter', 'Numbers changed or created by incr().', (s) => s.increments],
  ['conditional_writes_total', 'counter', 'add, replace, compareAndSet, touch and update writes that happened.', (s) => s.conditionalWrites],
  ['conditional_misses_total', 'counter', 'add, replace, compareAndSet and touch calls whose condition did not hold, and update() retries.', (s) => s.conditionalMisses],
  [
    'evictions_total',
    'counter',
    'Entries evicted, by cause: memory (memoryBytes) or max (the entry bound).',
    (s) => [
      [{ cause: 'memory' }, s.evictionsMemory],
      [{ cause: 'max' }, s.evictionsMax],
    ],
    ['cause'],
  ],
  ['expirations_total', 'counter', 'Entries removed because their ttl passed.', (s) => s.expirations],
  ['sweeps_total', 'counter', 'Runs of the expiry sweeper.', (s) => s.sweeps],
  ['swept_entries_total', 'counter', 'Expired entries removed by the sweeper.', (s) => s.sweptEntries],
  ['relocations_total', 'counter', 'Records moved to the head of a ring (second chances and compaction).', (s) => s.relocations],
  ['promotions_total', 'counter', 'Entries moved from the small to the main ring (hybrid policy).', (s) => s.promotions],
  ['fetches_total', 'counter', 'Calls of fetch().', (s) => s.fetches],
  ['fetch_loads_total', 'counter', 'Loader runs by fetch().', (s) => s.fetchLoads],
  ['fetch_waits_total', 'counter', 'fetch() calls that waited for a loader in another thread.', (s) => s.fetchWaits],
  ['fetch_timeouts_total', 'counter', 'Loader runs given up after fetchTimeoutMs (ERR_FETCH_TIMEOUT).', (s) => s.fetchTimeouts],
  ['fetch_errors_total', 'counter', 'Loader runs that failed.', (s) => s.fetchErrors],
  ['fetch_stale_total', 'counter', 'fetch() calls answered with a stale value (stale-while-revalidate, or stale-if-error).', (s) => s.fetchStale],
  ['fetch_uncached_total', 'counter', 'Loaded values too large to cache, returned uncached.', (s) => s.fetchUncached],
  ['lock_waits_total', 'counter', 'Shard lock acquisitions that had to wait.', (s) => s.lockWaits],
  ['lock_timeouts_total', 'counter', 'Calls that gave up waiting for a shard lock a live thread held past lockWaitMs (gets answered as misses, writes refused with ERR_ARENA_BUSY).', (s) => s.lockTimeouts],
  ['lock_recoveries_total', 'counter', 'Shard locks taken over from a dead (or unnamed and expired) holder, the shard rebuilt.', (s) => s.lockRecoveries],
  ['shard_repairs_total', 'counter', 'Shards found damaged and repaired (rebuilt where records carry checksums, else reset).', (s) => s.shardRepairs],
  ['lost_entries_total', 'counter', 'Entries lost to lock recoveries (only the write in flight) and shard repairs.', (s) => s.lostEntries],
  ['checksum_failures_total', 'counter', 'Records dropped because they failed their checksum (a damaged file).', (s) => s.checksumFailures],
  ['read_retries_total', 'counter', 'Optimistic reads repeated because a writer came in between.', (s) => s.readRetries],
  ['thread_slot_repairs_total', 'counter', 'Thread counter slots found damaged and reset (their counts left out).', (s) => s.threadSlotRepairs],
  ['entries', 'gauge', 'Entries stored.', (s) => s.entries],
  ['bytes', 'gauge', 'Bytes of live keys and values.', (s) => s.liveBytes],
  ['used_bytes', 'gauge', 'Bytes of the data regions in use (records, headers, not yet reclaimed space).', (s) => s.usedBytes],
  ['memory_bytes', 'gauge', 'Size of the shared buffer (memoryBytes).', (s) => s.memoryBytes],
  ['max_entries', 'gauge', 'The entry bound.', (s) => s.maxEntries],
  [
    'invalidation_batches_total',
    'counter',
    'Invalidation messages (UDP datagrams, Redis messages) sent and received by this process.',
    byTransportAndDirection('Batches'),
    ['transport', 'direction'],
  ],
  [
    'invalidation_keys_total',
    'counter',
    'Invalidations (keys, clears) in the messages sent and received by this process.',
    byTransportAndDirection('Keys'),
    ['transport', 'direction'],
  ],
  [
    'invalidation_drops_total',
    'counter',
    'Invalidation messages refused, by reason: mac (forged, truncated or another secret), replay, stale, short, oversize, magic, version, garbled; and not-marker: values refused for keys that are not markers here (deleted instead).',
    (s) => DROP_REASONS.map((reason) => [{ reason }, s[dropCounter(reason)]]),
    ['reason'],
  ],
  ['invalidation_send_errors_total', 'counter', 'Invalidation messages that could not be sent.', (s) => s.invalidationSendErrors],
  ['invalidation_overflows_total', 'counter', 'Times the outbox filled up between two drains (peers were told to clear).', (s) => s.invalidationOverflows],
  ['invalidation_reconnects_total', 'counter', 'Reconnections to Redis after a lost connection.', (s) => s.redisReconnects],
];

/**
 * How a cluster's workers' values merge (prom-client aggregators), by metric
 * type, for values that are the arena's: every worker reads the same ones.
 */
const ARENA_AGGREGATORS = Object.freeze({ counter: 'max', gauge: 'first' });

/** Metrics counted per process (the outbox's): a cluster sums its workers'. */
const PER_PROCESS_METRICS = new Set([
  'invalidation_batches_total',
  'invalidation_keys_total',
  'invalidation_drops_total',
  'invalidation_send_errors_total',
  'invalidation_overflows_total',
  'invalidation_reconnects_total',
]);

/** The prom-client aggregator of the cache metric `name` of `type`. */
function cacheAggregator(name, type) {
  return PER_PROCESS_METRICS.has(name) ? 'sum' : ARENA_AGGREGATORS[type];
}

/** The caches registered in each registry (and the metric objects they share), by prefix. */
const registered = new WeakMap();

function loadPromClient() {
  return requireOptional('prom-client', codes.ERR_PROM_CLIENT_MISSING, 'registerMetrics()');
}

/**
 * What a kind of source exposes: its metric table, its label, its default
 * prefix, what it is called in errors, and (optional) the prom-client
 * aggregator of each metric (name, type) => 'sum' | 'first' | 'max' | ...,
 * for a cluster's AggregatorRegistry; without it, prom-client's default, 'sum'.
 */
const CACHE_SCHEMA = Object.freeze({ metrics: CACHE_METRICS, label: 'cache', prefix: 'arenacache_', what: 'cache', aggregator: cacheAggregator });

function createMetrics(client, registry, prefix, sources, { metrics, label: labelName, aggregator = null }) {
  for (const [name, type, help, pick, split = null] of metrics) {
    const labelNames = split === null ? [labelName] : [labelName, ...split];
    const Metric = type === 'counter' ? client.Counter : client.Gauge;
    new Metric({
      name: `${prefix}${name}`,
      help,
      labelNames,
      registers: [registry],
      aggregator: aggregator === null ? 'sum' : aggregator(name, type),
      collect() {
        this.reset();
        for (const [label, source] of sources) {
          if (source.closed) continue;
          // A cache's stats() sums every thread's slot: tens of
          // microseconds, once per metric and scrape, and always current.
          const stats = source.stats();
          if (split !== null) {
            for (const [labels, value] of pick(stats)) this.inc({ [labelName]: label, ...labels }, value);
          } else if (type === 'counter') {
            this.inc({ [labelName]: label }, pick(stats));
          } else {
            this.set({ [labelName]: label }, pick(stats));
          }
        }
      },
    });
  }
}

/**
 * Registers `cache` in a prom-client `registry` under the label cache=`name`.
 * Returns a function that unregisters it.
 */
export function registerCacheMetrics(cache, registry, options) {
  return registerStatsMetrics(cache, registry, options, CACHE_SCHEMA);
}

/**
 * Registers `source` (anything with stats() and, optionally, closed) in a
 * prom-client `registry` with the metrics of `schema`, under the label
 * <schema.label>=`name`. Returns a function that unregisters it.
 */
export function registerStatsMetrics(source, registry, options, schema) {
  if (registry === null || typeof registry !== 'object' || typeof registry.registerMetric !== 'function') {
    throw new TypeError(`registry must be a prom-client Registry (got ${describe(registry)})`);
  }
  if (options !== undefined && (options === null || typeof options !== 'object')) {
    throw new TypeError(`options must be an object such as { name: 'sessions' } (got ${describe(options)})`);
  }
  for (const key of Object.keys(options ?? {})) {
    if (key !== 'name' && key !== 'prefix') throw new TypeError(`options.${key} is not a known option of registerMetrics(); they are name and prefix`);
  }
  const name = options?.name ?? 'default';
  const prefix = options?.prefix ?? schema.prefix;
  if (typeof name !== 'string' || name.length === 0) throw new TypeError(`options.name must be a non-empty string (got ${describe(name)})`);
  if (typeof prefix !== 'string' || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(prefix)) {
    throw new TypeError(`options.prefix must be a Prometheus metric name prefix such as "${schema.prefix}" (got ${describe(prefix)})`);
  }
  const client = loadPromClient();
  let byPrefix = registered.get(registry);
  if (byPrefix === undefined) {
    byPrefix = new Map();
    registered.set(registry, byPrefix);
  }
  let sources = byPrefix.get(prefix);
  if (sources === undefined) {
    sources = new Map();
    createMetrics(client, registry, prefix, sources, schema);
    byPrefix.set(prefix, sources);
  }
  if (sources.has(name)) {
    throw new ArenaCacheError(codes.ERR_METRICS_DUPLICATE, `a ${schema.what} named "${name}" is already registered in this registry; pass another options.name`);
  }
  sources.set(name, source);
  return () => {
    sources.delete(name);
  };
}

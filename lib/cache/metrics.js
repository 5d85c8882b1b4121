// Prometheus metrics through prom-client, for SharedCache (and CacheFS,
// which brings its own table: see lib/fs/metrics.js).
//
// Values are read from the shared counters when the registry is scraped, so
// metrics cost nothing per operation. Every cache registered in a registry
// shares one metric object per name and appears under its own `cache` label,
// so several caches (or the same arena seen from several processes, each
// with its own registry) can be scraped side by side.

import { ArenaCacheError, codes, describe } from '../errors.js';
import { requireOptional } from './optional-require.js';
import { DROP_REASONS, dropCounter } from './invalidation/outbox.js';


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
  ['fetch_timeouts_total', 'counter', 'fetch() calls that stopped waiting and loaded themselves.', (s) => s.fetchTimeouts],
  ['fetch_errors_total', 'counter', 'Loader runs that failed.', (s) => s.fetchErrors],
  ['lock_waits_total', 'counter', 'Shard lock acquisitions that had to wait.', (s) => s.lockWaits],
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

/** The caches registered in each registry (and the metric objects they share), by prefix. */
const registered = new WeakMap();

function loadPromClient() {
  return requireOptional('prom-client', codes.ERR_PROM_CLIENT_MISSING, 'registerMetrics()');
}

/** What a kind of source exposes: its metric table, its label, its default prefix, and what it is called in errors. */
const CACHE_SCHEMA = Object.freeze({ metrics: CACHE_METRICS, label: 'cache', prefix: 'arenacache_', what: 'cache' });

function createMetrics(client, registry, prefix, sources, { metrics, label: labelName }) {
  for (const [name, type, help, pick, split = null] of metrics) {
    const labelNames = split === null ? [labelName] : [labelName, ...split];
    const Metric = type === 'counter' ? client.Counter : client.Gauge;
    new Metric({
      name: `${prefix}${name}`,
      help,
      labelNames,
      registers: [registry],
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

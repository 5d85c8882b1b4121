// Prometheus metrics of a CacheFS, through the same registry machinery as
// SharedCache's (lib/cache/metrics.js): read from cfs.stats() at scrape time,
// labelled fs=<name>.

import { registerStatsMetrics } from '../cache/metrics.js';

const FS_METRICS = [
  ['reads_total', 'counter', 'readFile() calls.', (s) => s.reads],
  ['read_hits_total', 'counter', 'readFile() calls served from the cache.', (s) => s.readHits],
  ['near_hits_total', 'counter', 'readFile() calls served from the near cache (this instance\'s private copies).', (s) => s.nearHits],
  ['read_misses_total', 'counter', 'readFile() calls that read the disk.', (s) => s.readMisses],
  ['read_bytes_total', 'counter', 'Bytes returned by readFile().', (s) => s.bytesRead],
  ['writes_total', 'counter', 'writeFile() and appendFile() calls.', (s) => s.writes],
  ['written_bytes_total', 'counter', 'Bytes written by writeFile() and appendFile().', (s) => s.bytesWritten],
  ['stats_total', 'counter', 'stat() calls.', (s) => s.stats],
  ['stat_hits_total', 'counter', 'stat() calls served from the cache.', (s) => s.statHits],
  ['validations_total', 'counter', 'Cached metadata checked against the disk after validateMs.', (s) => s.validations],
  ['stale_files_total', 'counter', 'Files found changed behind the cache\'s back.', (s) => s.staleFiles],
  ['racy_reads_total', 'counter', 'readFile() calls of a file changed too recently to cache (served from the disk).', (s) => s.racyReads],
  ['handle_read_hits_total', 'counter', 'File handle reads served from the cache.', (s) => s.handleReadHits],
  ['write_backs_total', 'counter', 'Writes kept dirty in the block store (write-back).', (s) => s.writeBacks],
  ['spilled_writes_total', 'counter', 'Write-back writes written to disk at once (the block store was full).', (s) => s.spilledWrites],
  ['flushed_files_total', 'counter', 'Dirty files written to disk by this instance.', (s) => s.flushedFiles],
  ['flushed_bytes_total', 'counter', 'Bytes of dirty files written to disk by this instance.', (s) => s.flushedBytes],
  ['flush_errors_total', 'counter', 'Dirty files that failed to be written to disk (they stay dirty).', (s) => s.flushErrors],
  ['lost_writes_total', 'counter', 'Dirty files dropped because a writer died in the middle of writing them.', (s) => s.lostWrites],
  ['dirty_bytes', 'gauge', 'Bytes of dirty blocks in the block store.', (s) => s.dirtyBytes],
];

/**
 * How a cluster's AggregatorRegistry merges the workers' values: the
 * counters are each instance's own (summed), the dirty bytes are the block
 * store's, which every worker sharing it reads alike (the first reading).
 */
function fsAggregator(name) {
  return name === 'dirty_bytes' ? 'first' : 'sum';
}

const FS_SCHEMA = Object.freeze({ metrics: FS_METRICS, label: 'fs', prefix: 'arenacache_fs_', what: 'CacheFS', aggregator: fsAggregator });

export function registerFsMetrics(cfs, registry, options) {
  return registerStatsMetrics(cfs, registry, options, FS_SCHEMA);
}

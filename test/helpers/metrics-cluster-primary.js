// The primary of a two-worker Node cluster for cache.metrics-cluster.test.js
// (run as a child process: argv[2] is the cache file's path). Creates the
// cache file, forks the workers (metrics-cluster-worker.js), waits until
// each has done its share of the traffic, scrapes them through prom-client's
// AggregatorRegistry and prints { text, expected } as JSON on stdout.
import cluster from 'node:cluster';
import { fileURLToPath } from 'node:url';
import client from 'prom-client';
import { SharedCache } from '../../lib/index.js';

const WORKERS = 2;
const path = process.argv[2];

// Created here first, so that the workers attach to a cache that is already
// there rather than race to create it.
SharedCache.open(path, { memoryBytes: 4 * 2 ** 20 }).close();

const aggregator = new client.AggregatorRegistry();
cluster.setupPrimary({ exec: fileURLToPath(new URL('./metrics-cluster-worker.js', import.meta.url)), silent: false });

const expected = { gets: 0, hits: 0, misses: 0, sets: 0 };
let ready = 0;
const workers = [];
for (let i = 0; i < WORKERS; i++) {
  const worker = cluster.fork({ METRICS_CLUSTER_PATH: path, METRICS_CLUSTER_INDEX: String(i) });
  workers.push(worker);
  worker.on('message', async (message) => {
    if (message?.type !== 'metrics-cluster:done') return;
    for (const key of Object.keys(expected)) expected[key] += message.counts[key];
    if (++ready < WORKERS) return;
    try {
      const text = await aggregator.clusterMetrics();
      process.stdout.write(JSON.stringify({ text, expected }));
    } catch (error) {
      process.stdout.write(JSON.stringify({ error: error.stack }));
      process.exitCode = 1;
    }
    for (const each of workers) each.send({ type: 'metrics-cluster:exit' });
  });
}
cluster.on('exit', (worker, code, signal) => {
  if (code !== 0) {
    process.stderr.write(`worker ${worker.id} exited with ${code ?? signal}\n`);
    process.exitCode = 1;
  }
});

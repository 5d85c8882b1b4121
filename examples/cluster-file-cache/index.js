// One cache for every process of a node:cluster service, through a file.
//
//   node examples/cluster-file-cache/index.js
//
// The primary and its 2 workers each call SharedCache.open() on the same
// file: they share one cache (entries, single-flight loading, stats), and it
// would outlive them all (a warm restart) if the file were not removed at the
// end. Each worker runs a plain node:http server answering GET /item/:id
// through cache.fetch(); the workers share one port (cluster shares a
// listening socket; with PORT unset or 0, the primary picks a free port once
// and every worker gets that same one). The primary sends a few requests,
// prints who served and who loaded each item, then the cache's stats, shuts
// the workers down and removes the file.
//
// Here the file is in os.tmpdir(); for a cache in memory only, put it on a
// memory file system such as /dev/shm. SharedCache.open() needs the native
// addon.
import cluster from 'node:cluster';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedCache } from 'arenacache';

const WORKERS = 2;
const LOAD_MS = 200; // the "database"
// Every process must open the same path: the primary picks it and hands it to the workers.
const file = process.env.CACHE_FILE ?? path.join(os.tmpdir(), `arenacache-cluster-example-${process.pid}.arena`);
const cacheOptions = { memoryBytes: 16 * 2 ** 20, ttl: 60_000 };

if (cluster.isPrimary) {
  await primary();
} else {
  worker();
}

async function primary() {
  // Created here, before any worker opens it (the workers' options must agree with the file's).
  const cache = SharedCache.open(file, cacheOptions);
  try {
    const port = await startWorkers();
    console.log(`primary ${process.pid}: ${WORKERS} workers listening on port ${port}, cache file ${file}`);

    // Four clients at once ask for item 1 (the first requests hit both workers):
    // one load for the whole cluster, the others wait for it.
    const first = await Promise.all([1, 1, 1, 1].map((id) => get(port, `/item/${id}`)));
    // Then one request at a time: cluster hands connections to the workers in turn.
    const then = [];
    for (const id of [2, 2, 3, 1, 3, 2]) then.push(await get(port, `/item/${id}`));
    for (const { url, body, ms } of [...first, ...then]) {
      const { item, servedBy } = body;
      const where = item.loadedBy === servedBy ? 'loaded by the same worker' : `loaded by worker ${item.loadedBy}`;
      console.log(`GET ${url} -> ${JSON.stringify(item.name)} from worker ${servedBy} (${where}) in ${ms} ms`);
    }

    const { entries, fetches, fetchLoads, fetchWaits } = cache.stats();
    console.log(`requests: ${first.length + then.length}`);
    console.log(`cache stats: entries ${entries}, fetches ${fetches}, fetchLoads ${fetchLoads}, fetchWaits ${fetchWaits}`);

    await stopWorkers();
  } finally {
    cache.close();
    rmSync(file, { force: true });
  }
  console.log('workers stopped, cache file removed');
}

/** Forks the workers; resolves with the port they share once all of them listen. */
async function startWorkers() {
  const ports = [];
  return new Promise((resolve, reject) => {
    cluster.on('listening', (_worker, address) => {
      ports.push(address.port);
      if (ports.length === WORKERS) resolve(ports[0]);
    });
    for (let i = 0; i < WORKERS; i++) {
      cluster.fork({ CACHE_FILE: file }).on('exit', (code, signal) => {
        if (ports.length < WORKERS) reject(new Error(`a worker exited (${signal ?? code}) before listening`));
      });
    }
  });
}

async function stopWorkers() {
  const workers = Object.values(cluster.workers);
  // disconnect(): each worker's server stops accepting, and the worker exits once it is idle.
  await Promise.all(workers.map((worker) => (worker.disconnect(), once(worker, 'exit'))));
}

/** GET http://127.0.0.1:port/url as JSON, on a new connection (agent: false) so that requests spread over the workers. */
async function get(port, url) {
  const started = performance.now();
  const req = http.get({ host: '127.0.0.1', port, path: url, agent: false });
  const [res] = await once(req, 'response');
  let text = '';
  for await (const chunk of res) text += chunk;
  if (res.statusCode !== 200) throw new Error(`GET ${url}: ${res.statusCode} ${text}`);
  return { url, body: JSON.parse(text), ms: Math.round(performance.now() - started) };
}

function worker() {
  const cache = SharedCache.open(file, cacheOptions);
  const id = cluster.worker.id;

  /** The slow source of truth, called only on a miss in the whole cluster. */
  async function loadItem(itemId) {
    await sleep(LOAD_MS);
    return { id: itemId, name: `item ${itemId}`, loadedBy: id };
  }

  const server = http.createServer(async (req, res) => {
    const match = /^\/item\/(\d+)$/.exec(req.url);
    if (req.method !== 'GET' || match === null) {
      res.writeHead(404).end();
      return;
    }
    try {
      const item = await cache.fetch(`item:${match[1]}`, () => loadItem(Number(match[1])));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ item, servedBy: id }));
    } catch (error) {
      res.writeHead(500).end(String(error?.message ?? error));
    }
  });
  server.listen(Number(process.env.PORT ?? 0));
  // When the primary disconnects this worker, its server closes; release the cache too.
  cluster.worker.on('disconnect', () => cache.close());
}

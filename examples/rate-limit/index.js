// One rate limit for every worker of a node:cluster express app, through a
// file: express-rate-limit with arenacache/rate-limit's SharedCacheStore.
//
//   node examples/rate-limit/index.js --demo   # starts, makes 30 requests, stops
//   node examples/rate-limit/index.js          # serves on PORT (default 3000)
//
// Each of the 4 workers creates its own limiter over a SharedCacheStore on
// the same file: the store counts every client's hits in the file, so the
// limit (10 requests per client per minute here) holds for the whole
// cluster, not 10 per worker. Cluster hands the connections to the workers
// in turn; whichever worker answers, the count is the same one.
//
// The file is on /dev/shm (memory only) where there is one, else in
// os.tmpdir(). SharedCache.open() needs the native addon. Needs express and
// express-rate-limit (npm install express express-rate-limit).
import cluster from 'node:cluster';
import { once } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { SharedCacheStore } from 'arenacache/rate-limit';

const WORKERS = 4;
const demo = process.argv.includes('--demo') || process.env.EXAMPLE_SMOKE === '1';
// Every worker must open the same path: the primary picks it and hands it on.
const file = process.env.LIMIT_FILE ?? path.join(existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), `arenacache-rate-limit-${demo ? process.pid : 'example'}.arena`);

if (cluster.isPrimary) {
  await primary();
} else {
  worker();
}

async function primary() {
  const port = await startWorkers(demo ? 0 : Number(process.env.PORT ?? 3000));
  console.log(`primary ${process.pid}: ${WORKERS} workers listening on port ${port}, limit 10 per minute, counts in ${file}`);
  if (!demo) return;
  try {
    const answers = [];
    // 30 requests from one client, a few at a time, over fresh connections (so they go round the workers).
    for (let i = 0; i < 30; i += 5) {
      answers.push(...(await Promise.all(Array.from({ length: 5 }, () => get(port)))));
    }
    const passed = answers.filter((answer) => answer.status === 200);
    const servedBy = new Set(answers.map((answer) => answer.worker));
    const passedBy = new Set(passed.map((answer) => answer.worker));
    console.log(`requests: ${answers.length}, answered by ${servedBy.size} workers`);
    console.log(`passed: ${passed.length} (by ${passedBy.size} workers), limited (429): ${answers.length - passed.length}`);
    console.log(`after the limit: "${answers.at(-1).body}", next window in ${answers.at(-1).reset} s`);
  } finally {
    await new Promise((resolve) => cluster.disconnect(resolve));
    rmSync(file, { force: true });
    console.log('workers stopped, limit file removed');
  }
}

/** Forks the workers; resolves with the port they share once all listen. */
async function startWorkers(port) {
  for (let i = 0; i < WORKERS; i++) cluster.fork({ PORT: String(port), LIMIT_FILE: file });
  let address;
  for (let i = 0; i < WORKERS; i++) [, address] = await once(cluster, 'listening');
  return address.port;
}

function worker() {
  // The store opens the file (creating it the first time); every worker counts in it.
  const store = new SharedCacheStore({ path: file });
  const app = express();
  // Which worker answered, 429s included (for the demo's report).
  app.use((req, res, next) => {
    res.set('x-worker', String(process.pid));
    next();
  });
  app.use(rateLimit({ windowMs: 60_000, limit: 10, store, standardHeaders: 'draft-6', legacyHeaders: false }));
  app.get('/', (req, res) => res.json({ worker: process.pid }));
  const server = app.listen(Number(process.env.PORT), '127.0.0.1');
  process.on('disconnect', () => {
    server.close();
    store.shutdown();
  });
}

/** GET / on a fresh connection: { status, worker, body, reset }. */
async function get(port) {
  const response = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } });
  const body = await response.text();
  const worker = Number(response.headers.get('x-worker'));
  return { status: response.status, worker, body, reset: response.headers.get('ratelimit-reset') };
}

// npm run demo — the N-copies problem, measured.
//
// A service answers report requests (Zipf-popular keys) on a pool of worker
// threads; each report is a real lmdb query aggregating RANGE (600) of the
// database's 100,000 order records.
// The same request stream is served three times, each in its own process:
//
//   1. no cache            every request queries the database
//   2. lru-cache per worker each worker caches privately (cacheEntries/N each)
//   3. one SharedCache      all workers share one cache of cacheEntries entries,
//                           loading through fetch() (one query per report in flight)
//
// Flags (or environment): --workers (DEMO_WORKERS, 4), --requests
// (DEMO_REQUESTS, 20000), --keys (DEMO_KEYS, 20000), --cache-entries
// (DEMO_CACHE_ENTRIES, 4000), --alpha (DEMO_ALPHA, 0.9), --data (DEMO_DATA).

import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureDatabase, RANGE, RECORDS } from './database.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values: flags } = parseArgs({
  options: {
    workers: { type: 'string' },
    requests: { type: 'string' },
    keys: { type: 'string' },
    'cache-entries': { type: 'string' },
    alpha: { type: 'string' },
    data: { type: 'string' },
    json: { type: 'boolean' },
  },
});

function setting(flag, env, fallback, check = (n) => Number.isInteger(n) && n > 0) {
  const raw = flags[flag] ?? process.env[env];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!check(value)) {
    console.error(`--${flag} (${env}) must be a positive ${flag === 'alpha' ? 'number' : 'integer'} (got "${raw}")`);
    process.exit(2);
  }
  return value;
}

const options = {
  workers: setting('workers', 'DEMO_WORKERS', 4),
  requests: setting('requests', 'DEMO_REQUESTS', 20_000),
  keySpace: setting('keys', 'DEMO_KEYS', 20_000),
  cacheEntries: setting('cache-entries', 'DEMO_CACHE_ENTRIES', 4000),
  alpha: setting('alpha', 'DEMO_ALPHA', 0.9, (n) => Number.isFinite(n) && n > 0),
  entryBytes: 1024,
  dataDir: flags.data ?? process.env.DEMO_DATA ?? path.join(os.tmpdir(), 'arenacache-demo'),
  seed: 7,
};

const built = await ensureDatabase(options.dataDir);
if (!flags.json) {
  console.log(`${built ? 'Built' : 'Using'} the demo database: ${RECORDS} orders in lmdb at ${options.dataDir}`);
  console.log(
    `${options.requests} report requests over ${options.keySpace} keys (Zipf ${options.alpha}), ${options.workers} workers, ` +
      `cache budget ${options.cacheEntries} entries; each report aggregates ${RANGE} orders\n`,
  );
}

const modes = [
  ['none', 'no cache'],
  ['lru', `lru-cache per worker (${Math.floor(options.cacheEntries / options.workers)} each)`],
  ['shared', `one SharedCache + fetch (${options.cacheEntries})`],
];
const results = [];
for (const [mode, label] of modes) {
  if (!flags.json) process.stdout.write(`running: ${label}…`);
  const output = execFileSync(process.execPath, [path.join(here, 'run-mode.js'), JSON.stringify({ ...options, mode })], {
    encoding: 'utf8',
  });
  const result = JSON.parse(output.trim().split('\n').pop());
  results.push({ label, ...result });
  if (!flags.json) process.stdout.write(` ${(result.elapsedMs / 1000).toFixed(2)} s\n`);
}

if (flags.json) {
  console.log(JSON.stringify({ options, results }, null, 2));
} else {
  const rows = results.map((r) => ({
    mode: r.label,
    'elapsed s': (r.elapsedMs / 1000).toFixed(2),
    'requests/s': Math.round(r.requests / (r.elapsedMs / 1000)).toString(),
    'db queries': String(r.queries),
    'hit ratio': `${(r.hitRatio * 100).toFixed(1)}%`,
    'RSS MiB': (r.rssBytes / 2 ** 20).toFixed(0),
  }));
  const columns = Object.keys(rows[0]);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((row) => row[c].length)));
  console.log(`\n${columns.map((c, i) => c.padEnd(widths[i])).join('  ')}`);
  for (const row of rows) console.log(columns.map((c, i) => row[c].padEnd(widths[i])).join('  '));
  const [none, lru, shared] = results;
  console.log(
    `\nWhat this shows: with private caches every worker keeps its own copy of the popular reports, so the\n` +
      `budget of ${options.cacheEntries} entries holds only ${Math.floor(options.cacheEntries / options.workers)} distinct reports and each worker must miss once\n` +
      `per report before it can hit. One SharedCache holds ${options.cacheEntries} distinct reports for all workers: a report\n` +
      `computed by one worker is a hit for every other. Database queries: ${none.queries} without a cache,\n` +
      `${lru.queries} with per-worker lru-caches, ${shared.queries} with one SharedCache ` +
      `(${((1 - shared.queries / lru.queries) * 100).toFixed(0)}% fewer than per-worker caches).`,
  );
}

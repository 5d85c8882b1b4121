// The examples in examples/ run as a user would run them (in their
// self-contained mode), exit 0 and print what they are meant to show.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { nativeAvailable } from '../lib/native/addon.js';
import { freePort, redisMissing, startRedis } from './helpers/redis-server.js';

const TIMEOUT_MS = 30_000;

/** Runs examples/<name>/<script> (index.js by default); resolves with its stdout once it exited 0 (else rejects with its output). */
function runExample(name, { args = [], env = {}, script = 'index.js' } = {}) {
  const file = fileURLToPath(new URL(`../examples/${name}/${script}`, import.meta.url));
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [file, ...args], { env: { ...process.env, ...env }, timeout: TIMEOUT_MS, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) {
        error.message += `\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`;
        reject(error);
      } else {
        resolve({ stdout, stderr });
      }
    });
  });
}

/** The captures of `regex` in `text`, or a failed assertion that shows the text. */
function find(text, regex) {
  const match = regex.exec(text);
  assert.ok(match, `no line matches ${regex} in:\n${text}`);
  return match;
}

test('piscina-pool: tasks on every thread share one cache, so the loader runs once per id, not once per task', async () => {
  const { stdout } = await runExample('piscina-pool');
  const [, tasks, distinct] = find(stdout, /^tasks: (\d+) over (\d+) ids, on (\d+) worker threads/m).map(Number);
  const [, loads, fetches] = find(stdout, /^loader runs: (\d+) \(fetches: (\d+),/m).map(Number);
  const [, entries] = find(stdout, /^cache entries: (\d+)$/m).map(Number);
  assert.equal(fetches, tasks, 'every task fetched through the cache');
  assert.ok(loads < tasks, `fewer loads (${loads}) than tasks (${tasks})`);
  assert.ok(loads >= distinct, `every id was loaded (${loads} loads, ${distinct} ids)`);
  assert.equal(entries, distinct);
  assert.match(stdout, /^report 7: \{"id":7,"limit":270000,"primes":23642,"largest":269987,"builtBy":\d+\}$/m);
});

test('cluster-file-cache: 2 cluster workers and the primary share one file-backed cache', { skip: !nativeAvailable && 'native addon unavailable' }, async () => {
  let file;
  try {
    const { stdout } = await runExample('cluster-file-cache');
    file = find(stdout, /^primary \d+: 2 workers listening on port \d+, cache file (.+)$/m)[1];
    const lines = [...stdout.matchAll(/^GET \/item\/(\d+) -> "item (\d+)" from worker (\d+) \((loaded by the same worker|loaded by worker (\d+))\) in \d+ ms$/gm)];
    assert.equal(lines.length, 10, stdout);
    for (const [, asked, got] of lines) assert.equal(got, asked, 'every request got its own item');
    assert.equal(new Set(lines.map((line) => line[3])).size, 2, 'both workers served requests');
    assert.ok(lines.some((line) => line[5] !== undefined && line[5] !== line[3]), 'a worker served an item another worker process loaded');
    assert.equal(Number(find(stdout, /^requests: (\d+)$/m)[1]), 10);
    const [, entries, fetches, loads] = find(stdout, /^cache stats: entries (\d+), fetches (\d+), fetchLoads (\d+), fetchWaits \d+$/m).map(Number);
    assert.equal(entries, 3);
    assert.equal(fetches, 10);
    assert.equal(loads, 3, 'one load per item for the whole cluster (4 concurrent requests for item 1 included)');
    assert.match(stdout, /^workers stopped, cache file removed$/m);
    assert.equal(existsSync(file), false, `${file} was removed`);
  } finally {
    if (file) rmSync(file, { force: true });
  }
});

test('http-swr: miss, hit, stale answer at once while refreshing, the refreshed value, client abort, loader timeout', async () => {
  const { stdout } = await runExample('http-swr', { env: { EXAMPLE_SMOKE: '1' } });
  const backendMs = Number(find(stdout, /^\[demo\] backend calls take (\d+) ms; ttl 1000 ms, stale window 10000 ms$/m)[1]);
  const step = (label) => {
    const [, version, ms] = find(stdout, new RegExp(`^${label}: version (\\d+), price \\d+ in (\\d+) ms$`, 'm')).map(Number);
    return { version, ms };
  };
  const miss = step('1\\. miss');
  assert.equal(miss.version, 1);
  assert.ok(miss.ms >= backendMs - 50, `the miss waited for the backend (${miss.ms} ms)`);
  const hit = step('2\\. hit');
  assert.equal(hit.version, 1);
  assert.ok(hit.ms < backendMs, `the hit came at once (${hit.ms} ms)`);
  const stale = step('3\\. stale');
  assert.equal(stale.version, 1, 'after the ttl, the old value is served');
  assert.ok(stale.ms < backendMs, `the stale answer did not wait for the ${backendMs} ms refresh (${stale.ms} ms)`);
  assert.match(stdout, /^\[server\] refreshing ACME in the background \(serving version 1 meanwhile\)$/m, 'the loader got the stale value');
  assert.equal(step('4\\. refreshed').version, 2, 'the background refresh stored the new value');

  assert.match(stdout, /^5\. client gave up: AbortError$/m);
  assert.match(stdout, /^\[server\] \/quote\/BETA: the client disconnected; stopped waiting \(the load goes on\)$/m);
  assert.equal(step('6\\. next client').version, 1);
  assert.match(stdout, /^ {3}backend calls for BETA: 1$/m, 'the abandoned load was not repeated');

  assert.match(stdout, /^\[backend\] call for SLOW aborted: ERR_FETCH_TIMEOUT$/m, "the loader's signal aborted the backend call");
  assert.match(stdout, /^7\. slow backend: 504 the backend took too long in \d+ ms$/m);
  const [, loads, staleCount, timeouts] = find(stdout, /^\[demo\] stats: fetches \d+, fetchLoads (\d+), fetchStale (\d+), fetchTimeouts (\d+)$/m).map(Number);
  assert.equal(loads, 4, 'ACME twice, BETA once, SLOW once');
  assert.ok(staleCount >= 1);
  assert.equal(timeouts, 1);
});

test('rate-limit: the 4 workers of a cluster share one limit of 10: 10 of 30 requests pass, from several workers', { skip: !nativeAvailable && 'native addon unavailable' }, async () => {
  const { stdout } = await runExample('rate-limit', { env: { EXAMPLE_SMOKE: '1' } });
  const file = find(stdout, /^primary \d+: 4 workers listening on port \d+, limit 10 per minute, counts in (.+)$/m)[1];
  assert.equal(Number(find(stdout, /^requests: 30, answered by (\d+) workers$/m)[1]), 4);
  const [, passed, passedBy, limited] = find(stdout, /^passed: (\d+) \(by (\d+) workers\), limited \(429\): (\d+)$/m).map(Number);
  assert.deepEqual([passed, limited], [10, 20], 'one limit for the cluster, not 10 per worker');
  assert.ok(passedBy >= 2, `passes from ${passedBy} workers`);
  assert.match(stdout, /^after the limit: "Too many requests, please try again later\.", next window in \d+ s$/m);
  assert.match(stdout, /^workers stopped, limit file removed$/m);
  assert.equal(existsSync(file), false);
});

test('rate-limit/two-apps.js: two separate apps on one file share one limit of 8', { skip: !nativeAvailable && 'native addon unavailable' }, async () => {
  const { stdout } = await runExample('rate-limit', { script: 'two-apps.js', env: { EXAMPLE_SMOKE: '1' } });
  const lines = [...stdout.matchAll(/^(orders|billing): (200|429) .*, remaining (\d+)$/gm)];
  assert.equal(lines.length, 20, stdout);
  assert.deepEqual(lines.slice(0, 8).map((line) => [line[2], Number(line[3])]), Array.from({ length: 8 }, (_, i) => ['200', 7 - i]), 'the first 8, alternating between the apps, count down one limit');
  assert.ok(lines.slice(8).every((line) => line[2] === '429'));
  assert.match(stdout, /^passed: 8 of 20 \(limit 8 per minute for both apps together\), limited: 12$/m);
  assert.match(stdout, /^apps stopped, limit file removed$/m);
});

test('redis-tier: the threads of a machine load a key once, then read it locally; another Redis client\'s write reaches every thread', { skip: redisMissing() ?? (!nativeAvailable && 'native addon unavailable') }, async (t) => {
  const server = await startRedis(await freePort());
  t.after(() => server.kill());
  const { stdout } = await runExample('redis-tier', { env: { REDIS_URL: server.url } });
  assert.match(stdout, /^3 threads asked for user:42 at once: loaded 1 time\(s\), by the (main thread|worker \d)$/m);
  assert.match(stdout, /^1000 more reads: 1000 from this machine's shared cache, 0 from Redis$/m);
  assert.match(stdout, /^another client set plan "pro": this thread reads "pro" after \d+ ms, worker 0 reads "pro"$/m);
});

test('examples/README.md describes every example and says they are ES modules', () => {
  const dir = new URL('../examples/', import.meta.url);
  const readme = readFileSync(new URL('README.md', dir), 'utf8');
  const examples = readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  assert.ok(examples.length >= 4);
  for (const name of examples) assert.match(readme, new RegExp(`\\*\\*\`examples/${name}\`: `), `examples/README.md has no section for examples/${name}`);
  const counted = ['One', 'Two', 'Three', 'Four', 'Five', 'Six', 'Seven', 'Eight'][examples.length - 1];
  assert.match(readme, new RegExp(`^${counted} small programs`, 'm'));
  assert.match(readme, /ES modules/);
});


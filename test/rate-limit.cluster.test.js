// express-rate-limit itself with the arenacache/rate-limit store, in real
// express apps on loopback: a node:cluster of 4 workers with a limit of 100
// per window lets exactly 100 of 1,000 requests spread over the workers
// pass (each with its own remaining count) and answers 429 to the other 900;
// the window resets; and two separate clusters (two primary processes) on
// one cache file share one limit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, test } from 'node:test';
import { nativeAvailable } from '../lib/native/addon.js';

const skip = !nativeAvailable && 'native addon unavailable (cluster processes share the limit through a file)';
const LIMIT = 100;
const LONG_MS = 60_000;
const SHORT_MS = 2000;
const fixture = new URL('./fixtures/rate-limit-cluster.js', import.meta.url);

let dir;
before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ac-rate-limit-cluster-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Starts a cluster primary of the fixture; resolves with { port, pids, stop() } once every worker listens. */
async function startCluster(file, workers) {
  const child = spawn(process.execPath, [fixture.pathname, JSON.stringify({ file, workers, limit: LIMIT, longMs: LONG_MS, shortMs: SHORT_MS })], { stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout });
  const ready = await Promise.race([
    (async () => {
      for await (const line of lines) if (line.startsWith('ready ')) return JSON.parse(line.slice(6));
      return undefined;
    })(),
    exited.then(([code, signal]) => assert.fail(`the cluster primary exited with ${code ?? signal} before its workers listened`)),
  ]);
  return {
    ...ready,
    async stop() {
      child.stdin.end();
      const [code] = await exited;
      assert.equal(code, 0, 'the cluster stopped cleanly');
    },
  };
}

const agent = new http.Agent({ keepAlive: false, maxSockets: 24 });

/** GET http://127.0.0.1:port/path on a new connection: { status, pid, remaining, resetAt } (resetAt: the RateLimit-Reset header as s since the epoch). */
function request(port, route) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: route, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => {
        const header = (name) => (res.headers[name] === undefined ? undefined : Number(res.headers[name]));
        assert.ok(res.statusCode !== 200 || body === res.headers['x-worker'], body);
        resolve({ status: res.statusCode, pid: header('x-worker'), remaining: header('ratelimit-remaining'), resetAt: Date.now() / 1000 + header('ratelimit-reset') });
      });
    });
    req.on('error', reject);
  });
}

/** `count` requests to `route`, the i-th to ports[i % ports.length], all at once (the agent runs 24 connections per port). */
async function burst(ports, route, count) {
  return Promise.all(Array.from({ length: count }, (_, i) => request(ports[i % ports.length], route)));
}

const tally = (responses) => ({
  passed: responses.filter((response) => response.status === 200).length,
  limited: responses.filter((response) => response.status === 429).length,
});

test('a cluster of 4 workers: exactly 100 of 1,000 requests pass, 900 get 429; the window resets', { skip, timeout: 60_000 }, async () => {
  const file = path.join(dir, 'one-cluster.arena');
  const cluster = await startCluster(file, 4);
  try {
    const start = Date.now() / 1000;
    const responses = await burst([cluster.port], '/long', 1000);
    assert.deepEqual(tally(responses), { passed: LIMIT, limited: 1000 - LIMIT });
    const passed = responses.filter((response) => response.status === 200);
    // Each passing request was counted once, by one atomic step: the remaining counts are 99..0, each once.
    assert.deepEqual(passed.map((response) => response.remaining).sort((a, b) => a - b), Array.from({ length: LIMIT }, (_, i) => i));
    assert.ok(responses.every((response) => response.status !== 429 || response.remaining === 0));
    // Spread over the workers: the connections go round the 4 of them, and more than one let requests pass.
    const served = new Map(cluster.pids.map((pid) => [pid, 0]));
    for (const response of responses) served.set(response.pid, served.get(response.pid) + 1);
    assert.equal(served.size, 4, `answers came from the cluster's own workers: ${[...served.keys()]}`);
    assert.ok([...served.values()].every((count) => count >= 50), `every worker answered its share: ${JSON.stringify(Object.fromEntries(served))}`);
    assert.ok(new Set(passed.map((response) => response.pid)).size >= 2, 'passes came from several workers');
    // One window for the whole cluster, from the first hit: every worker reports its end (in whole seconds from the answer).
    const resets = responses.map((response) => response.resetAt - start);
    assert.ok(Math.min(...resets) >= LONG_MS / 1000 - 1 && Math.max(...resets) <= LONG_MS / 1000 + 2, `resets between ${Math.min(...resets)} and ${Math.max(...resets)} s after the start`);

    // The short route's window (2 s, its own prefix on the same file): used up, then reset.
    assert.deepEqual(tally(await burst([cluster.port], '/short', 150)), { passed: LIMIT, limited: 50 });
    assert.deepEqual(tally(await burst([cluster.port], '/short', 10)), { passed: 0, limited: 10 }, 'still the same window');
    await sleep(SHORT_MS + 200);
    const renewed = await burst([cluster.port], '/short', 150);
    assert.deepEqual(tally(renewed), { passed: LIMIT, limited: 50 }, 'a new window of 100 after the reset');
    assert.deepEqual(tally(await burst([cluster.port], '/long', 20)), { passed: 0, limited: 20 }, "the long window did not reset with the short one's");
  } finally {
    await cluster.stop();
  }
});

test('two separate clusters on one cache file share one limit', { skip, timeout: 60_000 }, async () => {
  const file = path.join(dir, 'two-clusters.arena');
  // Started together: both create or open the new file at once.
  const [first, second] = await Promise.all([startCluster(file, 2), startCluster(file, 2)]);
  try {
    assert.notEqual(first.port, second.port);
    const responses = await burst([first.port, second.port], '/long', 1000);
    assert.deepEqual(tally(responses), { passed: LIMIT, limited: 1000 - LIMIT });
    const passedPids = new Set(responses.filter((response) => response.status === 200).map((response) => response.pid));
    assert.ok(first.pids.some((pid) => passedPids.has(pid)) && second.pids.some((pid) => passedPids.has(pid)), 'both clusters let requests pass');
    const remaining = responses.filter((response) => response.status === 200).map((response) => response.remaining).sort((a, b) => a - b);
    assert.deepEqual(remaining, Array.from({ length: LIMIT }, (_, i) => i));
  } finally {
    await Promise.all([first.stop(), second.stop()]);
  }
});

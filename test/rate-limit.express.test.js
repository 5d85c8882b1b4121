// The arenacache/rate-limit store under express-rate-limit 8 and 7 (the
// issue asks for both Store interfaces) in one process: limits, headers,
// skipFailedRequests (the limiter's decrement), the limiter's getKey and
// resetKey, two limiters with their own prefixes on one cache, and no
// validation warning from the limiter about the store.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import test from 'node:test';
import express from 'express';
import * as v8 from 'express-rate-limit';
import * as v7 from 'express-rate-limit-v7';
import { SharedCache } from '../lib/index.js';
import { SharedCacheStore } from 'arenacache/rate-limit';
import { MiB } from './helpers/units.js';

/** An express app on a loopback port with `limiter` on /ok (200) and /fail (500); resolves with { get(path), close() }. */
async function serve(limiter) {
  const app = express();
  app.get('/ok', limiter, (req, res) => res.send('ok'));
  app.get('/fail', limiter, (req, res) => res.status(500).send('failed'));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    get: async (route) => {
      const response = await fetch(`${base}${route}`);
      await response.text();
      return { status: response.status, remaining: response.headers.get('ratelimit-remaining') };
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

for (const [version, erl] of [['8', v8], ['7', v7]]) {
  test(`express-rate-limit ${version}: limit, skipFailedRequests, getKey and resetKey through the store`, async () => {
    const cache = new SharedCache({ memoryBytes: 4 * MiB });
    const warnings = [];
    const warn = console.warn;
    const error = console.error;
    console.warn = console.error = (...args) => warnings.push(args.map(String).join(' '));
    const store = new SharedCacheStore({ cache, prefix: `v${version}:` });
    const limiter = erl.rateLimit({ windowMs: 60_000, limit: 3, store, skipFailedRequests: true, keyGenerator: () => 'client-a', standardHeaders: 'draft-6', legacyHeaders: false });
    const app = await serve(limiter);
    try {
      assert.equal((await app.get('/ok')).remaining, '2');
      assert.equal((await app.get('/fail')).status, 500);
      assert.equal((await store.get('client-a')).totalHits, 1, 'the failed request was taken back (decrement)');
      assert.equal((await app.get('/ok')).status, 200);
      assert.equal((await app.get('/ok')).status, 200);
      assert.deepEqual(await app.get('/ok'), { status: 429, remaining: '0' });
      // The 429 is a failed request too, so skipFailedRequests took it back.
      assert.equal((await limiter.getKey('client-a')).totalHits, 3);
      assert.equal(cache.get(`v${version}:client-a`), 3);
      limiter.resetKey('client-a');
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(await limiter.getKey('client-a'), undefined);
      assert.deepEqual(await app.get('/ok'), { status: 200, remaining: '2' });
      assert.deepEqual(warnings, [], 'the limiter has nothing to say about the store');
    } finally {
      console.warn = warn;
      console.error = error;
      await app.close();
      cache.close();
    }
  });
}

test('two limiters with their own prefixes on one cache count apart', async () => {
  const cache = new SharedCache({ memoryBytes: 4 * MiB });
  const strict = v8.rateLimit({ windowMs: 60_000, limit: 1, store: new SharedCacheStore({ cache, prefix: 'strict:' }), keyGenerator: () => 'c' });
  const loose = v8.rateLimit({ windowMs: 60_000, limit: 5, store: new SharedCacheStore({ cache, prefix: 'loose:' }), keyGenerator: () => 'c' });
  const app = express();
  app.get('/strict', strict, (req, res) => res.send('ok'));
  app.get('/loose', loose, (req, res) => res.send('ok'));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const status = async (route) => (await fetch(`http://127.0.0.1:${server.address().port}${route}`)).status;
  try {
    assert.deepEqual([await status('/strict'), await status('/strict')], [200, 429]);
    assert.deepEqual([await status('/loose'), await status('/loose')], [200, 200]);
    assert.deepEqual([cache.get('strict:c'), cache.get('loose:c')], [2, 2]);
  } finally {
    await new Promise((resolve) => server.close(resolve));
    cache.close();
  }
});

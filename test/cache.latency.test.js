// Latency sampling times one call in `every`, reports avg, p50, p99 and max
// for get and set, leaves values alone, restores the plain methods when
// stopped, and checks its options.
import assert from 'node:assert/strict';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { MiB } from './helpers/units.js';

test('latency sampling times one call in `every` and reports avg, p50, p99 and max', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.equal(cache.latency(), null, 'off by default');
  const plainGet = cache.get;
  cache.startLatencySampling({ every: 4 });
  for (let i = 0; i < 400; i++) cache.set(`k${i % 50}`, i);
  for (let i = 0; i < 400; i++) cache.get(`k${i % 50}`);
  const report = cache.latency();
  assert.equal(report.every, 4);
  for (const kind of ['get', 'set']) {
    const summary = report[kind];
    assert.equal(summary.samples, 100);
    assert.ok(summary.avgUs > 0 && summary.p50Us > 0);
    assert.ok(summary.p50Us <= summary.p99Us && summary.p99Us <= summary.maxUs);
  }
  assert.equal(cache.get('k3'), 399 - ((399 - 3) % 50), 'values are unaffected');
  const final = cache.stopLatencySampling();
  assert.equal(final.get.samples, 100);
  assert.equal(cache.latency(), null);
  assert.equal(cache.get, plainGet, 'the plain method is back: sampling off costs nothing');
});

test('latency sampling options are checked', () => {
  const cache = new SharedCache({ memoryBytes: MiB });
  assert.throws(() => cache.startLatencySampling({ every: 0 }), { name: 'RangeError', message: 'options.every must be a positive integer (got 0)' });
  assert.throws(() => cache.startLatencySampling({ every: '2' }), { name: 'TypeError', message: 'options.every must be a number (got "2")' });
});

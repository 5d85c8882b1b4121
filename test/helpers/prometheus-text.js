// Parses prom-client's text exposition for the metrics tests.
import assert from 'node:assert/strict';

/** Parses the Prometheus text format into { 'name{labels}': value }. */
export function parsePrometheusText(text) {
  const samples = {};
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)$/.exec(line);
    assert.ok(match, `not a sample line: ${line}`);
    samples[match[1]] = Number(match[2]);
  }
  return samples;
}

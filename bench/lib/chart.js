// The benchmark chart: a vega-lite spec rendered to SVG by vega (no browser,
// no canvas): get throughput by payload for every store; aggregate
// throughput and hit ratio by worker count for the shared arena against
// private caches.

import * as vega from 'vega';
import * as vegaLite from 'vega-lite';

export async function renderChart({ single, workers, title }) {
  const spec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    hconcat: [
      {
        title: 'One thread: get throughput by payload',
        data: { values: single.map((row) => ({ store: row.label, payload: `${row.payload} B`, order: row.payload, opsPerSecond: row.getOpsPerSecond })) },
        mark: { type: 'bar', clip: true },
        width: 260,
        height: 220,
        encoding: {
          x: { field: 'payload', type: 'nominal', sort: { field: 'order' }, title: 'payload' },
          xOffset: { field: 'store' },
          y: { field: 'opsPerSecond', type: 'quantitative', title: 'gets per second (log scale)', scale: { type: 'log', domain: [1e4, 1e8] } },
          // A log scale has no zero: bars start at the bottom of the domain.
          y2: { datum: 1e4 },
          color: { field: 'store', type: 'nominal', legend: { title: 'store', labelLimit: 200 } },
        },
      },
      {
        title: 'Worker threads: aggregate throughput',
        data: { values: workers.map((row) => ({ mode: row.label, workers: row.workers, payload: `${row.payload} B`, opsPerSecond: row.opsPerSecond })) },
        mark: { type: 'line', point: true },
        width: 260,
        height: 220,
        encoding: {
          x: { field: 'workers', type: 'ordinal', title: 'worker threads' },
          y: { field: 'opsPerSecond', type: 'quantitative', title: 'operations per second (set + get)' },
          color: { field: 'mode', type: 'nominal', legend: { title: 'cache', labelLimit: 200 } },
          strokeDash: { field: 'payload', type: 'nominal', legend: { title: 'payload' } },
        },
      },
      {
        title: 'Worker threads: hit ratio',
        data: { values: workers.filter((row) => row.payload === workers[0].payload).map((row) => ({ mode: row.label, workers: row.workers, hitRatio: row.hitRatio })) },
        mark: { type: 'line', point: true },
        width: 160,
        height: 220,
        encoding: {
          x: { field: 'workers', type: 'ordinal', title: 'worker threads' },
          y: { field: 'hitRatio', type: 'quantitative', title: 'hit ratio', axis: { format: '%' }, scale: { domain: [0, 1] } },
          color: { field: 'mode', type: 'nominal', legend: null },
        },
      },
    ],
    resolve: { scale: { color: 'independent' } },
  };
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  return view.toSVG();
}

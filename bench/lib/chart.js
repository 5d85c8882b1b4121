// The benchmark charts: vega-lite specs rendered to SVG by vega (no browser,
// no canvas). npm run bench's: get throughput by payload for every store;
// aggregate throughput and hit ratio by worker count for the shared arena
// against private caches. npm run bench:scale's: rates and times by entries.

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

/** A vega-lite spec rendered to SVG. */
async function toSvg(spec) {
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  return view.toSVG();
}

/**
 * npm run bench:scale's chart: fill and random get rates by entries, and the
 * times that grow with the cache (verify, reopen after a clean close and
 * after a killed writer, the longest event-loop block of those opens).
 * @param {{ rates: { entries: number, what: string, perSecond: number }[], times: { entries: number, what: string, ms: number }[], title: string }} data
 */
export async function renderScaleChart({ rates, times, title }) {
  const panel = (panelTitle, values, field, axisTitle) => ({
    title: panelTitle,
    data: { values },
    mark: { type: 'line', point: true },
    width: 260,
    height: 220,
    encoding: {
      x: { field: 'entries', type: 'quantitative', title: 'entries (log scale)', scale: { type: 'log' } },
      y: { field, type: 'quantitative', title: axisTitle, scale: { type: 'log' } },
      color: { field: 'what', type: 'nominal', legend: { title: null, labelLimit: 260 } },
    },
  });
  return toSvg({
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    hconcat: [panel('Rates by size', rates, 'perSecond', 'operations per second (log scale)'), panel('Times by size', times.map((row) => ({ ...row, ms: Math.max(row.ms, 0.01) })), 'ms', 'milliseconds (log scale)')],
    resolve: { scale: { color: 'independent' } },
  });
}

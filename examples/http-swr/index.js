// A node:http service that reads through the cache with stale-while-revalidate.
//
//   node examples/http-swr/index.js            # serves on PORT (default 3000): GET /quote/:symbol
//   node examples/http-swr/index.js --demo     # starts on a free port, makes requests itself, exits
//
// Each request reads through cache.fetch() with { ttl: 1000, staleWhileRevalidate: 10_000 }:
//   - a miss waits for the backend (once for all concurrent requests of the key);
//   - within the ttl, a hit answers at once;
//   - for 10 s after the ttl, the expired value is still answered at once while
//     one loader refreshes it in the background.
// Two signals are in play:
//   - the loader's `signal`, which the cache aborts after its fetchTimeoutMs
//     (2 s here): the loader passes it to the slow backend call, which then
//     stops, and the request gets a 504;
//   - the request's own `signal` (an AbortController aborted when the client
//     disconnects): that request stops waiting, but the load goes on for
//     everyone else and its value is stored.
// EXAMPLE_SMOKE=1 runs the demo as --demo does.
import { once } from 'node:events';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedCache, codes } from 'arenacache';

const BACKEND_MS = 800; // one backend call
const SLOW_BACKEND_MS = 5_000; // the backend's answer for the symbol SLOW: longer than fetchTimeoutMs
const FETCH_OPTIONS = { ttl: 1000, staleWhileRevalidate: 10_000 };

const cache = new SharedCache({ memoryBytes: 16 * 2 ** 20, fetchTimeoutMs: 2000 });

// --- the slow backend: a quote whose version goes up on every call ---------------------------

const backendCalls = new Map();

/** Resolves with the quote of `symbol` after BACKEND_MS; rejects at once when `signal` aborts. */
async function backendQuote(symbol, { signal }) {
  const version = (backendCalls.get(symbol) ?? 0) + 1;
  backendCalls.set(symbol, version);
  try {
    await sleep(symbol === 'SLOW' ? SLOW_BACKEND_MS : BACKEND_MS, undefined, { signal });
  } catch (error) {
    console.log(`[backend] call for ${symbol} aborted: ${signal.reason?.code ?? signal.reason?.message ?? error.message}`);
    throw error;
  }
  return { symbol, version, price: 100 + version, at: new Date().toISOString() };
}

// --- the service -----------------------------------------------------------------------------

/** The loader: the cache calls it on a miss, and in the background to refresh a stale value. */
function loadQuote(key, { signal, staleValue }) {
  const symbol = key.slice('quote:'.length);
  if (staleValue !== undefined) console.log(`[server] refreshing ${symbol} in the background (serving version ${staleValue.version} meanwhile)`);
  return backendQuote(symbol, { signal }); // aborted after the cache's fetchTimeoutMs
}

async function handle(req, res) {
  const match = /^\/quote\/([A-Z]{1,8})$/.exec(req.url);
  if (req.method !== 'GET' || match === null) {
    res.writeHead(404).end();
    return;
  }
  // Aborted when the client goes away before the answer ('close' on the
  // response before it finished; the request's 'close' only means its body was read).
  const client = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) client.abort(new Error('the client disconnected'));
  });
  try {
    const quote = await cache.fetch(`quote:${match[1]}`, loadQuote, { ...FETCH_OPTIONS, signal: client.signal });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(quote));
  } catch (error) {
    if (client.signal.aborted) {
      console.log(`[server] ${req.url}: ${client.signal.reason.message}; stopped waiting (the load goes on)`);
    } else if (error?.code === codes.ERR_FETCH_TIMEOUT) {
      res.writeHead(504).end('the backend took too long\n');
    } else {
      res.writeHead(502).end(`backend error: ${error?.message ?? error}\n`);
    }
  }
}

const server = http.createServer(handle);
const demo = process.argv.includes('--demo') || process.env.EXAMPLE_SMOKE === '1';

if (!demo) {
  const port = Number(process.env.PORT ?? 3000);
  server.listen(port, () => console.log(`listening: curl http://localhost:${server.address().port}/quote/ACME`));
} else {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    await runDemo(server.address().port);
  } finally {
    server.close();
    cache.close();
  }
}

// --- the demo: a client of the service -------------------------------------------------------

async function runDemo(port) {
  /** GET path: { status, body, ms }; `signal` to give up early. */
  async function get(path, signal) {
    const started = performance.now();
    const req = http.get({ host: '127.0.0.1', port, path, signal });
    const [res] = await once(req, 'response');
    let body = '';
    for await (const chunk of res) body += chunk;
    const ms = Math.round(performance.now() - started);
    return { status: res.statusCode, body: res.statusCode === 200 ? JSON.parse(body) : body.trim(), ms };
  }
  const show = (label, { status, body, ms }) =>
    console.log(`${label}: ${status === 200 ? `version ${body.version}, price ${body.price}` : `${status} ${body}`} in ${ms} ms`);

  console.log(`[demo] backend calls take ${BACKEND_MS} ms; ttl ${FETCH_OPTIONS.ttl} ms, stale window ${FETCH_OPTIONS.staleWhileRevalidate} ms`);
  show('1. miss', await get('/quote/ACME'));
  show('2. hit', await get('/quote/ACME'));
  await sleep(FETCH_OPTIONS.ttl + 200);
  show('3. stale', await get('/quote/ACME'));
  // The refresh runs in the background; ask again until its value is there.
  let fresh;
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(100)) {
    fresh = await get('/quote/ACME');
    if (fresh.body.version !== 1) break;
  }
  show('4. refreshed', fresh);

  // A client that gives up after 100 ms: its request stops waiting, the load it started goes on.
  const gaveUp = await get('/quote/BETA', AbortSignal.timeout(100)).then(
    () => 'no',
    (error) => error.name,
  );
  console.log(`5. client gave up: ${gaveUp}`);
  show('6. next client', await get('/quote/BETA'));
  console.log(`   backend calls for BETA: ${backendCalls.get('BETA')}`);

  // A backend slower than fetchTimeoutMs: the loader's signal aborts the call.
  show('7. slow backend', await get('/quote/SLOW'));

  const { fetches, fetchLoads, fetchStale, fetchTimeouts } = cache.stats();
  console.log(`[demo] stats: fetches ${fetches}, fetchLoads ${fetchLoads}, fetchStale ${fetchStale}, fetchTimeouts ${fetchTimeouts}`);
}

// Every argument error of InvalidationBus, and its state errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidationBus, SharedCache } from '../lib/index.js';
import { SECRET } from './helpers/invalidation.js';
import { runWithout } from './helpers/without-package.js';

const cache = new SharedCache({ memoryBytes: 2 ** 20 });
const make = (options) => () => new InvalidationBus(cache, options);
const udp = (extra) => ({ secret: SECRET, udp: extra });

test('bad arguments are TypeErrors and RangeErrors that name the option', () => {
  const cases = [
    [() => new InvalidationBus({}, udp({})), TypeError, 'cache must be a SharedCache (got an instance of Object)'],
    [make(undefined), TypeError, 'options is required: new InvalidationBus(cache, { secret, udp: { peers } }) or { secret, redis: { connection } }'],
    [make(5), TypeError, 'options must be an object (got 5)'],
    [make({ udp: {} }), TypeError, 'options.secret is required: invalidations are authenticated with a secret shared by every peer (a string or Buffer of at least 16 bytes)'],
    [make({ secret: 'short', udp: {} }), RangeError, 'options.secret must be at least 16 bytes (got 5)'],
    [make({ secret: 42, udp: {} }), TypeError, 'options.secret must be a string or a Buffer (got 42)'],
    [make({ secret: SECRET }), TypeError, 'options must have exactly one of udp and redis: the transport invalidations travel by'],
    [make({ secret: SECRET, udp: {}, redis: {} }), TypeError, 'options must have exactly one of udp and redis: the transport invalidations travel by'],
    [make({ secret: SECRET, udp: {}, batchIntervalMS: 1 }), TypeError, 'options.batchIntervalMS is not a known option; did you mean batchIntervalMs?'],
    [make(udp({ adress: '::1' })), TypeError, 'options.udp.adress is not a known option; did you mean address?'],
    [make(udp({ address: 'localhost' })), TypeError, 'options.udp.address must be an IP address such as "127.0.0.1" (got "localhost")'],
    [make(udp({ port: 70000 })), RangeError, 'options.udp.port must be an integer from 0 to 65535 (got 70000)'],
    [make(udp({ peers: '127.0.0.1:1' })), TypeError, 'options.udp.peers must be an array of "host:port" strings (got "127.0.0.1:1")'],
    [make(udp({ peers: ['nowhere'] })), RangeError, 'options.udp.peers[0] must be "host:port" or "[ipv6]:port" (got "nowhere")'],
    [make(udp({ peers: ['127.0.0.1:0'] })), RangeError, 'options.udp.peers[0].port must be an integer from 1 to 65535 (got 0)'],
    [make(udp({ peers: [{ port: 1 }] })), TypeError, 'options.udp.peers[0].address must be a host name or IP address (got undefined)'],
    [make(udp({ peers: [7] })), TypeError, 'options.udp.peers[0] must be a "host:port" string or an { address, port } object (got 7)'],
    [make(udp({ maxDatagramBytes: 100 })), RangeError, 'options.udp.maxDatagramBytes must be an integer from 128 to 65507 (got 100)'],
    [make({ secret: SECRET, redis: { connection: 5 } }), TypeError, 'options.redis.connection must be a redis:// URL or an ioredis options object (got 5)'],
    [make({ secret: SECRET, redis: { channel: '' } }), TypeError, 'options.redis.channel must be a non-empty string (got "")'],
    [make({ secret: SECRET, redis: { onReconnect: 'stale' } }), RangeError, 'options.redis.onReconnect must be "clear" or "keep" (got "stale")'],
    [make({ secret: SECRET, redis: { backlogKeys: -1 } }), RangeError, 'options.redis.backlogKeys must be a non-negative integer (got -1)'],
    [make({ secret: SECRET, redis: { maxMessageBytes: 1 } }), RangeError, 'options.redis.maxMessageBytes must be an integer from 128 to 536870912 (got 1)'],
    [make({ ...udp({}), prefixes: 'user:' }), TypeError, 'options.prefixes must be an array of strings or Buffers (got "user:")'],
    [make({ ...udp({}), prefixes: [] }), RangeError, 'options.prefixes must not be empty (null publishes every write)'],
    [make({ ...udp({}), prefixes: [''] }), RangeError, 'options.prefixes[0] must not be empty'],
    [make({ ...udp({}), markers: [1] }), TypeError, 'options.markers[0] must be a string or a Buffer (got 1)'],
    [make({ ...udp({}), batchIntervalMs: -1 }), RangeError, 'options.batchIntervalMs must be an integer from 0 to 60000 (got -1)'],
    [make({ ...udp({}), batchMaxKeys: 0 }), RangeError, 'options.batchMaxKeys must be an integer from 1 to 1000000 (got 0)'],
    [make({ ...udp({}), replayWindowMs: 10 }), RangeError, 'options.replayWindowMs must be an integer from 1000 to 86400000 (got 10)'],
  ];
  for (const [fn, type, message] of cases) assert.throws(fn, (error) => error instanceof type && error.message === message, message);
});

test('state errors: a second bus on one cache, a bare-buffer cache, start() twice, calls after close()', async () => {
  const own = new SharedCache({ memoryBytes: 2 ** 20 });
  const bus = await new InvalidationBus(own, udp({})).start();
  await assert.rejects(new InvalidationBus(own, udp({})).start(), {
    code: 'ERR_INVALIDATION_RUNNING',
    message: "another InvalidationBus already publishes this cache's writes in this process; close it first (one bus per cache and process)",
  });
  // A worker's instance shares the outbox: still one bus.
  await assert.rejects(new InvalidationBus(SharedCache.attach(own.handle), udp({})).start(), { code: 'ERR_INVALIDATION_RUNNING' });
  await assert.rejects(bus.start(), { code: 'ERR_INVALIDATION_RUNNING', message: 'start() was called twice; the bus is already running' });
  assert.throws(() => new InvalidationBus(SharedCache.attach(own.handle.buffer), udp({})), {
    code: 'ERR_INVALIDATION_UNSUPPORTED',
    message: 'this cache was attached from a bare SharedArrayBuffer and has no outbox; attach with SharedCache.attach(cache.handle) to publish invalidations',
  });
  assert.throws(() => bus.setPeers(['nowhere']), { name: 'RangeError', message: 'peers[0] must be "host:port" or "[ipv6]:port" (got "nowhere")' });
  await bus.close();
  await bus.close(); // twice is fine
  assert.equal(bus.running, false);
  await assert.rejects(bus.start(), { code: 'ERR_INVALIDATION_CLOSED', message: 'start() was called after close(); create a new InvalidationBus' });
  assert.throws(() => bus.setPeers([]), { code: 'ERR_INVALIDATION_CLOSED', message: 'setPeers() was called after close(); create a new InvalidationBus' });
  // Closed, the outbox is free again.
  const again = await new InvalidationBus(own, udp({})).start();
  await again.close();
  own.close();
  assert.throws(() => new InvalidationBus(own, udp({})), { code: 'ERR_CACHE_CLOSED' });
});

test('a port in use is ERR_INVALIDATION_TRANSPORT, and the cache stays free for another bus', async () => {
  const own = new SharedCache({ memoryBytes: 2 ** 20 });
  const first = await new InvalidationBus(new SharedCache({ memoryBytes: 2 ** 20 }), udp({})).start();
  const { port } = first.address;
  await assert.rejects(new InvalidationBus(own, udp({ port })).start(), (error) => {
    assert.equal(error.code, 'ERR_INVALIDATION_TRANSPORT');
    assert.match(error.message, new RegExp(`^the UDP socket could not be bound to 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    return true;
  });
  const second = await new InvalidationBus(own, udp({})).start();
  await Promise.all([first.close(), second.close()]);
});

test('without ioredis installed, the Redis transport says how to get it', () => {
  const result = runWithout(
    'ioredis',
    `const cache = new lib.SharedCache({ memoryBytes: 2 ** 20 });
     await new lib.InvalidationBus(cache, { secret: ${JSON.stringify(SECRET)}, redis: {} }).start().catch((error) => {
       console.log(JSON.stringify({ name: error.name, code: error.code, message: error.message, free: cache.invalidation === null }));
     });`,
  );
  assert.deepEqual(result, {
    name: 'ArenaCacheError',
    code: 'ERR_IOREDIS_MISSING',
    message: 'The Redis transport needs the ioredis package, which could not be loaded; install it with "npm install ioredis"',
    free: true,
  });
});

// Type tests of the main entry, 'arenacache' (types/index.d.ts). Compiled,
// never run: `npx tsc -p test/types`. Every `@ts-expect-error` line is a
// misuse that must not compile (tsc reports one that is no longer needed).

import diagnostics_channel from 'node:diagnostics_channel';
import { Worker, workerData } from 'node:worker_threads';
import { Registry } from 'prom-client';
import {
  ArenaCacheError,
  BlockStore,
  channels,
  codes,
  InvalidationBus,
  SharedCache,
  type BlockStoreHandle,
  type BlockStoreStats,
  type CacheKey,
  type ChannelMessages,
  type Codec,
  type DirtyRange,
  type EntryInfo,
  type ErrorCode,
  type EvictMessage,
  type FetchLoader,
  type FetchMessage,
  type LatencyReport,
  type ReceivedInvalidation,
  type RepairMessage,
  type SharedCacheHandle,
  type SharedCacheOptions,
  type SharedCacheStats,
} from 'arenacache';
import { assertType, expectType, type Exact } from './expect.js';



interface User {
  id: number;
  name: string;
  roles: string[];
}

declare const db: {
  loadUser(id: string, options: { signal: AbortSignal }): Promise<User>;
  loadMaybe(id: string): Promise<User | undefined>;
};

// ---------------------------------------------------------------------------
// new SharedCache(options)

const options: SharedCacheOptions = {
  memoryBytes: 64 * 2 ** 20,
  max: 100_000,
  policy: 'lfu',
  ttl: 5 * 60_000,
  staleWhileRevalidate: 60_000,
  ttlResolution: 0,
  sweepIntervalMs: 1000,
  sweepChecks: 1024,
  fetchTimeoutMs: 10_000,
  maxKeyBytes: 512,
  shards: 16,
  lockLeaseMs: 1000,
  lockWaitMs: 500,
  nearCache: 0,
  nearCacheBytes: 64 * 2 ** 20,
};
const anyCache = new SharedCache(options);
assertType<Exact<typeof anyCache, SharedCache<string | Uint8Array, unknown>>>();

// Options given as undefined keep their default (as the code does).
new SharedCache({ memoryBytes: 2 ** 20, ttl: undefined, policy: undefined });

const jsonCodec: Codec<object> = {
  name: 'json',
  encode: (value) => Buffer.from(JSON.stringify(value)),
  decode: (bytes) => JSON.parse(bytes.toString('utf8')) as object,
};
new SharedCache({ memoryBytes: 2 ** 20, codec: jsonCodec });

// memoryBytes has a default (64 MiB, or room for `max` entries).
new SharedCache({ max: 10 });
new SharedCache();
// @ts-expect-error unknown option (the code throws "did you mean memoryBytes?")
new SharedCache({ memorybytes: 2 ** 20 });
// @ts-expect-error lru-cache's maxSize is not an option here
new SharedCache({ memoryBytes: 2 ** 20, maxSize: 100 });
// @ts-expect-error no such policy
new SharedCache({ memoryBytes: 2 ** 20, policy: 'fifo' });
// @ts-expect-error ttl is a number of milliseconds
new SharedCache({ memoryBytes: 2 ** 20, ttl: '5m' });
// @ts-expect-error a codec needs name, encode and decode
new SharedCache({ memoryBytes: 2 ** 20, codec: { name: 'broken', encode: () => new Uint8Array(0) } });
// @ts-expect-error checksums is an option of open(), not of the constructor
new SharedCache({ memoryBytes: 2 ** 20, checksums: true });

// ---------------------------------------------------------------------------
// Keys and values: SharedCache<string, number>

const counters = new SharedCache<string, number>({ memoryBytes: 16 * 2 ** 20 });
counters.set('hits', 1).set('misses', 2, { ttl: 1000 });
const hits: number | undefined = counters.get('hits');
expectType<number | undefined>(counters.peek('hits', { allowStale: true }));
assertType<Exact<ReturnType<typeof counters.get>, number | undefined>>();
// @ts-expect-error the value type is number
counters.set('hits', 'one');
// @ts-expect-error this cache's keys are strings
counters.get(Buffer.from('hits'));
// @ts-expect-error get() returns number | undefined
const wrong: number = counters.get('hits');
// @ts-expect-error undefined is not a value (use delete())
anyCache.set('k', undefined);

// Atomic operations.
expectType<number>(counters.incr('hits'));
expectType<number>(counters.incr('hits', -2, { initial: 10, ttl: 1000 }));
expectType<boolean>(counters.add('hits', 0));
expectType<boolean>(counters.replace('hits', 1, { ttl: 5 }));
expectType<boolean>(counters.compareAndSet('hits', counters.info('hits')?.version ?? 0, 2));
expectType<number>(counters.update('hits', (n) => (n ?? 0) + 1));
expectType<undefined>(counters.update('hits', () => undefined));
expectType<boolean>(counters.touch('hits', 1000));
expectType<number | undefined>(counters.take('hits'));
// @ts-expect-error delta is a number
counters.incr('hits', '1');
// @ts-expect-error the value type is number
counters.add('hits', 'one');
// @ts-expect-error incr() takes no staleWhileRevalidate
counters.incr('hits', 1, { staleWhileRevalidate: 5 });
// @ts-expect-error neither is a number key
anyCache.get(42);

// Keys come back as the kind they were set with: strings, or Buffers for byte keys.
for (const key of anyCache.keys()) expectType<string | Buffer>(key);
for (const key of counters.keys()) assertType<Exact<typeof key, string>>();
const bytes = new SharedCache<Uint8Array, Buffer>({ memoryBytes: 2 ** 20 });
bytes.set(new Uint8Array([1, 2]), Buffer.from('value'));
for (const [key, value] of bytes) {
  assertType<Exact<typeof key, Buffer>>();
  assertType<Exact<typeof value, Buffer>>();
}

// Template literal keys work as a key type.
const sessions = new SharedCache<`session:${string}`, User>({ memoryBytes: 2 ** 20 });
sessions.set('session:abc', { id: 1, name: 'Ada', roles: [] });
// @ts-expect-error not a session key
sessions.get('user:1');

// ---------------------------------------------------------------------------
// attach, open, handle

const handle: SharedCacheHandle = anyCache.handle;
expectType<'arenacache.SharedCache'>(handle.type);
expectType<1>(handle.version);
expectType<SharedArrayBuffer>(handle.buffer);
expectType<string | null>(handle.path);
expectType<SharedArrayBuffer | null>(handle.outbox);
// @ts-expect-error the handle is read-only
handle.path = '/tmp/x';
new Worker(new URL('./worker.js', import.meta.url), { workerData: { handle } });

const attached = SharedCache.attach<string, User>(workerData.handle as SharedCacheHandle);
expectType<User | undefined>(attached.get('user:1'));
SharedCache.attach(handle.buffer, { nearCache: 0, codec: jsonCodec });
SharedCache.attach(handle.buffer, { nearCacheBytes: 2 ** 20 });
// @ts-expect-error attach takes only codec, nearCache and nearCacheBytes
SharedCache.attach(handle, { memoryBytes: 2 ** 20 });
// @ts-expect-error not a handle
SharedCache.attach({ buffer: handle.buffer });

const fileCache = SharedCache.open<string, string>('/dev/shm/app.arena', {
  memoryBytes: 256 * 2 ** 20,
  ttl: 60_000,
  mode: 0o600,
  populate: false,
  checksums: true,
});
SharedCache.open('/dev/shm/app.arena');
SharedCache.open('/dev/shm/app.arena', { reset: true, memoryBytes: 2 ** 20 });
SharedCache.open('/dev/shm/app.arena', { reset: false });
// @ts-expect-error reset needs memoryBytes (the size of the new arena)
SharedCache.open('/dev/shm/app.arena', { reset: true });
// @ts-expect-error mode is a number such as 0o600
SharedCache.open('/dev/shm/app.arena', { mode: '600' });
// @ts-expect-error unknown option of open()
SharedCache.open('/dev/shm/app.arena', { memorybytes: 2 ** 20 });
// @ts-expect-error the path is a string
SharedCache.open(new URL('file:///dev/shm/app.arena'));
expectType<string | null>(fileCache.path);

{
  using inspector = SharedCache.inspect('/dev/shm/app.arena', { codec: { name: 'json', encode: (v: unknown) => Buffer.from(JSON.stringify(v)), decode: (b: Buffer) => JSON.parse(b.toString()) } });
  expectType<string>(inspector.codecName);
  expectType<boolean>(inspector.decodes);
  expectType<number>(inspector.stats().threads);
  const found = inspector.verify();
  expectType<boolean>(found.ok);
  expectType<string[]>(found.problems);
  expectType<number>(found.unchecked[0].shard);
  expectType<Array<string | Buffer>>(inspector.keys().keys);
  for (const entry of inspector.entries().entries) {
    if (entry.valueKind === 'encoded') expectType<string>(entry.codec);
    if (entry.valueKind === 'string') expectType<string>(entry.value);
  }
  // @ts-expect-error inspect() takes only codec
  SharedCache.inspect('/dev/shm/app.arena', { readOnly: true });
}

// ---------------------------------------------------------------------------
// Every method of SharedCache

function methods(cache: SharedCache<string, User>, user: User): void {
  cache.set('user:1', user, { ttl: 30_000, staleWhileRevalidate: 60_000 });
  // @ts-expect-error set() knows ttl and staleWhileRevalidate only
  cache.set('user:1', user, { tll: 30_000 });
  // @ts-expect-error get() knows allowStale only
  cache.get('user:1', { ttl: 1 });
  // @ts-expect-error allowStale is a boolean
  cache.peek('user:1', { allowStale: 1 });

  const info: EntryInfo<User> | undefined = cache.info('user:1');
  if (info !== undefined) {
    expectType<User>(info.value);
    expectType<boolean>(info.stale);
    expectType<number>(info.remainingTTL + info.staleAt + info.expiresAt + info.size + info.valueBytes);
    expectType<'hybrid' | 'lru' | 'lfu' | 'ttl'>(info.policy.name);
    expectType<'small' | 'main'>(info.policy.ring);
    expectType<number>(info.policy.frequency);
  }
  if (cache.getRemainingTTL('user:1') < 60_000) cache.delete('user:1');

  const [a, b] = cache.getMany(['user:1', 'user:2'], { allowStale: false });
  expectType<User | undefined>(a);
  expectType<User | undefined>(b);
  cache.getMany(new Set(['user:3']));
  expectType<typeof cache>(
    cache.setMany(
      new Map([
        ['user:1', user],
        ['user:2', user],
      ]),
      { ttl: 60_000 },
    ),
  );
  cache.setMany([['user:3', user]]);
  // @ts-expect-error pairs of [key, User]
  cache.setMany([['user:3', 3]]);
  const deleted: number = cache.deleteMany(['user:1', 'user:2']);
  // @ts-expect-error a string is iterable, but the batch methods take an iterable object (a TypeError at run time)
  cache.getMany('user:1');
  // @ts-expect-error likewise
  cache.deleteMany('user:1');

  const present: boolean = cache.has('user:1');
  const removed: boolean = cache.delete('user:1');
  cache.clear();
  const size: number = cache.size;
  const maxKeyBytes: number = cache.maxKeyBytes;
  // @ts-expect-error size is read-only
  cache.size = 0;

  for (const key of cache.keys()) expectType<string>(key);
  for (const value of cache.values()) expectType<User>(value);
  for (const [key, value] of cache.entries()) expectType<[string, User]>([key, value]);
  const all: Array<[string, User]> = [...cache];
  const keys: string[] = Array.from(cache.keys());

  const { ok, problems } = cache.verify();
  expectType<boolean>(ok);
  expectType<string[]>(problems);

  cache.startLatencySampling({ every: 100 });
  cache.startLatencySampling();
  // @ts-expect-error every is a number
  cache.startLatencySampling({ every: '100' });
  const report: LatencyReport | null = cache.latency();
  const last = cache.stopLatencySampling();
  if (last !== null) expectType<number>(last.get.p99Us + last.set.avgUs + last.every + last.get.samples + last.set.maxUs + last.get.p50Us);

  expectType<InvalidationBus | null>(cache.invalidation);
  expectType<boolean>(cache.closed);
  expectType<Promise<void>>(cache.flush());
  cache.close();
  void [hits, wrong, deleted, present, removed, size, maxKeyBytes, all, keys, report];
}

// A generic helper over a cache: its value type must exclude undefined, as set() does.
function remember<T extends {} | null>(cache: SharedCache<string, T>, key: string, value: T): T {
  cache.set(key, value);
  return cache.get(key) ?? value;
}
remember(counters, 'hits', 3);
function rememberLoosely<T>(cache: SharedCache<string, T>, key: string, value: T): void {
  // @ts-expect-error T may be undefined, which set() refuses
  cache.set(key, value);
}
void rememberLoosely;

// ---------------------------------------------------------------------------
// stats()

const stats: SharedCacheStats = anyCache.stats();
expectType<'hybrid' | 'lru' | 'lfu' | 'ttl'>(stats.policy);
expectType<number>(
  stats.gets +
    stats.hits +
    stats.nearHits +
    stats.misses +
    stats.hitRatio +
    stats.sets +
    stats.deletes +
    stats.evictions +
    stats.evictionsMemory +
    stats.evictionsMax +
    stats.expirations +
    stats.sweeps +
    stats.sweptEntries +
    stats.entries +
    stats.smallEntries +
    stats.smallShare +
    stats.liveBytes +
    stats.usedBytes +
    stats.dataBytes +
    stats.memoryBytes +
    stats.maxEntries +
    stats.maxEntryBytes +
    stats.shards +
    stats.threads +
    stats.relocations +
    stats.promotions +
    stats.fetches +
    stats.fetchLoads +
    stats.fetchWaits +
    stats.fetchTimeouts +
    stats.fetchErrors +
    stats.fetchStale +
    stats.fetchUncached +
    stats.readRetries +
    stats.lockWaits +
    stats.lockTimeouts +
    stats.lockRecoveries +
    stats.shardRepairs +
    stats.lostEntries +
    stats.checksumFailures +
    stats.threadSlotRepairs +
    stats.udpBatchesSent +
    stats.udpKeysSent +
    stats.udpBatchesReceived +
    stats.udpKeysReceived +
    stats.redisBatchesSent +
    stats.redisKeysSent +
    stats.redisBatchesReceived +
    stats.redisKeysReceived +
    stats.redisReconnects +
    stats.invalidationSendErrors +
    stats.invalidationOverflows +
    stats.invalidationDropsMac +
    stats.invalidationDropsReplay +
    stats.invalidationDropsStale +
    stats.invalidationDropsShort +
    stats.invalidationDropsOversize +
    stats.invalidationDropsMagic +
    stats.invalidationDropsVersion +
    stats.invalidationDropsGarbled +
    stats.invalidationDropsNotMarker +
    stats.invalidationsDropped,
);
// @ts-expect-error no such field
stats.hitRate;

// ---------------------------------------------------------------------------
// fetch()

async function fetching(cache: SharedCache<string, User>, request: { signal: AbortSignal; id: string }): Promise<void> {
  const user = await cache.fetch(`user:${request.id}`, (key, { signal, staleValue, context }) => {
    expectType<string>(key);
    expectType<AbortSignal>(signal);
    expectType<User | undefined>(staleValue);
    assertType<Exact<typeof context, undefined>>();
    return db.loadUser(request.id, { signal });
  }, { ttl: 60_000, staleWhileRevalidate: 5 * 60_000, signal: request.signal });
  assertType<Exact<typeof user, User>>();

  // The context's type comes from options.context.
  await cache.fetch(
    'user:2',
    (_key, { context }) => {
      assertType<Exact<typeof context, { tenant: string }>>();
      return { id: 2, name: context.tenant, roles: [] };
    },
    {
      context: { tenant: 'acme' },
      allowStale: false,
      forceRefresh: true,
      allowStaleOnFetchRejection: true,
      noDeleteOnFetchRejection: true,
    },
  );

  // A loader may return the value itself, or null where the value type allows it.
  const nullable = new SharedCache<string, User | null>({ memoryBytes: 2 ** 20 });
  const maybe: User | null = await nullable.fetch('user:3', () => null);

  const loader: FetchLoader<string, User> = async (key, { signal }) => db.loadUser(key, { signal });
  await cache.fetch('user:4', loader);

  // @ts-expect-error a loader that may resolve to undefined (a TypeError at run time)
  await cache.fetch('user:5', (key) => db.loadMaybe(key));
  // @ts-expect-error the loader must produce a User
  await cache.fetch('user:6', () => 'not a user');
  // @ts-expect-error fetch() has no option "stale"
  await cache.fetch('user:7', loader, { stale: true });
  // @ts-expect-error signal is an AbortSignal
  await cache.fetch('user:8', loader, { signal: true });
  // @ts-expect-error the loader is required
  await cache.fetch('user:9');
  void maybe;
}

// ---------------------------------------------------------------------------
// registerMetrics()

const registry = new Registry();
const unregister = anyCache.registerMetrics(registry, { name: 'sessions', prefix: 'app_cache_' });
expectType<() => void>(unregister);
unregister();
anyCache.registerMetrics(registry);
// @ts-expect-error registerMetrics() knows name and prefix only
anyCache.registerMetrics(registry, { label: 'sessions' });
// @ts-expect-error not a registry
anyCache.registerMetrics({});

// ---------------------------------------------------------------------------
// BlockStore

function blocks(chunk: Buffer): void {
  const store = new BlockStore({ memoryBytes: 64 * 2 ** 20, blockBytes: 4096, stripes: 8 });
  const opened = BlockStore.open('/dev/shm/data.blocks', { memoryBytes: 1024 * 2 ** 20, mode: 0o600, populate: true });
  BlockStore.open('/dev/shm/data.blocks', { reset: true, memoryBytes: 2 ** 20, blockBytes: 65536 });
  // @ts-expect-error reset needs memoryBytes
  BlockStore.open('/dev/shm/data.blocks', { reset: true });
  // @ts-expect-error block stores have no checksums option
  BlockStore.open('/dev/shm/data.blocks', { memoryBytes: 2 ** 20, checksums: false });
  // @ts-expect-error memoryBytes is required
  new BlockStore({ blockBytes: 4096 });
  // @ts-expect-error not an option of a block store
  new BlockStore({ memoryBytes: 2 ** 20, ttl: 1000 });

  const storeHandle: BlockStoreHandle = store.handle;
  expectType<'arenacache.BlockStore'>(storeHandle.type);
  const inWorker: BlockStore = BlockStore.attach(storeHandle);
  // @ts-expect-error a SharedCache handle is not a BlockStore handle
  BlockStore.attach(anyCache.handle);

  expectType<number>(store.blockBytes);
  expectType<string | null>(opened.path);
  expectType<BlockStore>(store.write(42, 0, chunk).write(42, 4096, new Uint8Array(16)));
  // @ts-expect-error data is bytes
  store.write(42, 0, 'text');
  const read: Buffer | undefined = store.read(42, 0, chunk.length);
  for (const range of store.dirty()) {
    expectType<DirtyRange>(range);
    const data = store.read(range.file, range.position, range.length);
    if (data !== undefined && !store.markClean(range)) console.log('written again', range.block, range.generation);
  }
  store.dirty({ file: 42 });
  // @ts-expect-error dirty() knows file only
  store.dirty({ path: 42 });

  const result: number = store.exclusive(42, () => {
    store.write(42, 0, chunk);
    return store.fileVersion(42);
  });
  store.exclusive(42, () => {});
  // @ts-expect-error fn must be synchronous
  store.exclusive(42, async () => 1);
  expectType<number>(store.fileVersion(42));
  expectType<number>(store.drop(42));
  expectType<number>(store.dirtyBlockCount());

  const blockStats: BlockStoreStats = store.stats();
  expectType<number>(
    blockStats.blockBytes +
      blockStats.blocks +
      blockStats.usedBlocks +
      blockStats.dirtyBlocks +
      blockStats.lostDirtyBlocks +
      blockStats.stripes +
      blockStats.memoryBytes +
      blockStats.blockWrites +
      blockStats.blockReads +
      blockStats.blockHits +
      blockStats.blockMisses +
      blockStats.evictions +
      blockStats.droppedBlocks +
      blockStats.readRetries +
      blockStats.lockWaits +
      blockStats.lockTimeouts +
      blockStats.lockRecoveries +
      blockStats.threadSlotRepairs,
  );
  expectType<Promise<void>>(store.flush());
  store.close();
  inWorker.close();
  void [read, result];
}

// ---------------------------------------------------------------------------
// InvalidationBus

async function invalidation(cache: SharedCache<string, string>, secret: string): Promise<void> {
  const bus = await new InvalidationBus(cache, {
    secret,
    udp: { address: '10.0.0.1', port: 7400, peers: ['10.0.0.2:7400', { address: '10.0.0.3', port: 7400 }], maxDatagramBytes: 1200 },
    markers: ['version:'],
    prefixes: ['user:', Buffer.from([1])],
    batchIntervalMs: 2,
    batchMaxKeys: 256,
    replayWindowMs: 30_000,
  }).start();
  assertType<Exact<typeof bus, InvalidationBus>>();
  expectType<boolean>(cache.invalidation === bus);
  expectType<'udp' | 'redis'>(bus.transport);
  expectType<boolean>(bus.running);
  const address = bus.address;
  if (address !== null) expectType<number>(address.port);
  bus.setPeers(['[::1]:7400', '10.0.0.4:7400']);

  bus.on('received', ({ transport, invalidations, sentAt, cautious }) => {
    expectType<'udp' | 'redis'>(transport);
    expectType<ReceivedInvalidation[]>(invalidations);
    for (const { op, key, value } of invalidations) {
      expectType<'delete' | 'clear' | 'clearPrefix' | 'set'>(op);
      expectType<string | Buffer>(key);
      expectType<Buffer | undefined>(value);
    }
    expectType<number>(sentAt);
    expectType<boolean>(cautious);
  });
  bus.once('verified', (event) => expectType<string>(event.sender));
  bus.on('drop', (event) => {
    if (event.reason === 'not-marker') console.log('refused a value for', event.key, event.bytes);
  });
  bus.on('reconnect', (event) => expectType<'clear' | 'keep'>(event.policy));
  const onError = (error: Error & { peer?: string }) => console.error(error.peer, error.message);
  bus.on('error', onError).off('error', onError);
  // @ts-expect-error no such event
  bus.on('recieved', () => {});
  // @ts-expect-error 'drop' gives a drop event, not a number
  bus.on('drop', (bytes: number) => bytes);
  // @ts-expect-error no such drop reason
  bus.on('drop', (event) => event.reason === 'forged');

  await bus.close();

  await new InvalidationBus(cache, {
    secret: Buffer.from(secret),
    redis: { connection: { host: 'cache-bus.internal', port: 6379 }, channel: 'app:invalidation', onReconnect: 'keep', backlogKeys: 10_000, maxMessageBytes: 262_144 },
  }).start();
  new InvalidationBus(cache, { secret, redis: { connection: 'redis://cache-bus.internal:6379' } });
  new InvalidationBus(cache, { secret, redis: {} });

  // @ts-expect-error exactly one of udp and redis
  new InvalidationBus(cache, { secret, udp: {}, redis: {} });
  // @ts-expect-error exactly one of udp and redis
  new InvalidationBus(cache, { secret });
  // @ts-expect-error secret is required
  new InvalidationBus(cache, { udp: {} });
  // @ts-expect-error onReconnect is 'clear' or 'keep'
  new InvalidationBus(cache, { secret, redis: { onReconnect: 'mark-stale' } });
  // @ts-expect-error unknown UDP option
  new InvalidationBus(cache, { secret, udp: { host: '127.0.0.1' } });
  // @ts-expect-error a peer is 'host:port' or { address, port }
  bus.setPeers([7400]);
}

// ---------------------------------------------------------------------------
// Errors and codes

function errors(buffer: SharedArrayBuffer): void {
  try {
    SharedCache.attach(buffer);
  } catch (error) {
    if (error instanceof ArenaCacheError && error.code === 'ERR_ARENA_VERSION') console.log('rebuild');
    if (error instanceof ArenaCacheError) {
      expectType<ErrorCode>(error.code);
      expectType<string>(error.message);
      expectType<unknown>(error.cause);
      if (error.code === codes.ERR_FLUSH_FAILED || error.code === codes.ERR_SNAPSHOT_IO) {
        for (const failure of error.failures ?? []) console.log(failure.path, failure.code ?? failure.error);
      }
      // @ts-expect-error no such error code
      if (error.code === 'ERR_ARENA_GONE') console.log('never');
    }
  }
  const code: 'ERR_CACHE_CLOSED' = codes.ERR_CACHE_CLOSED;
  assertType<Exact<(typeof codes)['ERR_FETCH_TIMEOUT'], 'ERR_FETCH_TIMEOUT'>>();
  assertType<Exact<keyof typeof codes, ErrorCode>>();
  // @ts-expect-error codes is frozen
  codes.ERR_CACHE_CLOSED = 'ERR_CACHE_CLOSED';
  // @ts-expect-error no such code
  codes.ERR_NOPE;
  const custom = new ArenaCacheError('ERR_CACHE_CLOSED', 'closed', { cause: new Error('why') });
  expectType<Error>(custom);
  // @ts-expect-error unknown error code string
  new ArenaCacheError('ERR_SOMETHING', 'message');
  void code;
}

// ---------------------------------------------------------------------------
// Diagnostics channels

expectType<'arenacache:evict'>(channels.evict);
expectType<'arenacache:repair'>(channels.repair);
expectType<'arenacache:fetch'>(channels.fetch);
diagnostics_channel.subscribe(channels.evict, (message) => {
  const { count, reason, shard } = message as EvictMessage;
  console.log(count, reason, shard);
});
diagnostics_channel.channel(channels.repair).subscribe((message) => {
  const repair = message as ChannelMessages[typeof channels.repair];
  assertType<Exact<typeof repair, RepairMessage>>();
  console.log(repair.reason === 'dead-holder', repair.lost);
});
diagnostics_channel.subscribe(channels.fetch, (message) => {
  const { key, outcome, durationMs, error } = message as FetchMessage;
  expectType<CacheKey>(key);
  if (outcome === 'timeout' && error instanceof ArenaCacheError) console.log(error.code, durationMs);
});
// @ts-expect-error channels is read-only
channels.fetch = 'other';

// The cache types stay usable as plain values.
const caches: Array<SharedCache<string, unknown>> = [counters, attached, fileCache];
void caches;

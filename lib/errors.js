// The error classes and codes used across arenacache.
//
// Wrong types are TypeError, bad values RangeError (both built in, so that
// `instanceof` works as users expect). State and I/O failures are an
// ArenaCacheError with a stable string `code` that programs can branch on;
// the message is for people and may change.

export const codes = Object.freeze({
  /** The buffer handed to attach(), or the file given to open(), does not start with an arena header (a file of another kind, never overwritten, even with reset). */
  ERR_ARENA_NOT_ARENA: 'ERR_ARENA_NOT_ARENA',
  /** The arena was written by an incompatible layout version. */
  ERR_ARENA_VERSION: 'ERR_ARENA_VERSION',
  /** The buffer is shorter than its header says, or a mapped arena file was truncated from outside. */
  ERR_ARENA_TRUNCATED: 'ERR_ARENA_TRUNCATED',
  /** The header or the data contradicts itself. */
  ERR_ARENA_CORRUPT: 'ERR_ARENA_CORRUPT',
  /** The shared memory could not be allocated. */
  ERR_ARENA_ALLOC: 'ERR_ARENA_ALLOC',
  /** The attaching thread uses another codec than the arena was created with. */
  ERR_CODEC_MISMATCH: 'ERR_CODEC_MISMATCH',
  /** The codec failed to decode a stored value. */
  ERR_CODEC_DECODE: 'ERR_CODEC_DECODE',
  /** A namespace of a cache already caches another Redis deployment (the Redis tier): each deployment needs a namespace of its own. */
  ERR_REDIS_NAMESPACE: 'ERR_REDIS_NAMESPACE',
  /** A Redis call of the Redis tier failed: the connection is down, or Redis refused the command (`cause` says); nothing was written. */
  ERR_REDIS_UNAVAILABLE: 'ERR_REDIS_UNAVAILABLE',
  /** A Redis call of the Redis tier took longer than its deadline (options.deadlineMs); what it did is unknown. */
  ERR_REDIS_TIMEOUT: 'ERR_REDIS_TIMEOUT',
  /** The Redis tier read a value that is not msgpack (another client wrote something else under the namespace). */
  ERR_REDIS_VALUE: 'ERR_REDIS_VALUE',
  /** incr() of a key that holds something other than a number (a string, bytes, an object): the value is left as it is. */
  ERR_NOT_A_NUMBER: 'ERR_NOT_A_NUMBER',
  /** update() gave up: other writers changed the key between its read and its write on every one of its attempts. */
  ERR_UPDATE_CONFLICT: 'ERR_UPDATE_CONFLICT',
  /** The cache was closed with close(): a later call, or a fetch() still pending at close(). */
  ERR_CACHE_CLOSED: 'ERR_CACHE_CLOSED',
  /** A fetch() loader ran longer than options.fetchTimeoutMs: its signal was aborted and its callers rejected. */
  ERR_FETCH_TIMEOUT: 'ERR_FETCH_TIMEOUT',
  /** registerMetrics() could not load prom-client. */
  ERR_PROM_CLIENT_MISSING: 'ERR_PROM_CLIENT_MISSING',
  /** registerMetrics() with a name already registered in that registry. */
  ERR_METRICS_DUPLICATE: 'ERR_METRICS_DUPLICATE',
  /** An arena file could not be opened, sized, mapped or flushed; or it is not a regular file. */
  ERR_ARENA_FILE: 'ERR_ARENA_FILE',
  /** An arena file belongs to another user, or others may write to it. */
  ERR_ARENA_PERMISSIONS: 'ERR_ARENA_PERMISSIONS',
  /** An arena file is in use by another process where sole use is needed (reset, creation), or stayed locked too long. */
  ERR_ARENA_BUSY: 'ERR_ARENA_BUSY',
  /** An option given to open() differs from the one the arena file was created with. */
  ERR_ARENA_MISMATCH: 'ERR_ARENA_MISMATCH',
  /** BlockStore: a new block is needed but every block that could take it is dirty. */
  ERR_BLOCKS_FULL: 'ERR_BLOCKS_FULL',
  /** BlockStore: a write would leave unknown bytes between it and a dirty block's data. */
  ERR_BLOCK_GAP: 'ERR_BLOCK_GAP',
  /** CacheFS: a call on a file handle after its close(). */
  ERR_HANDLE_CLOSED: 'ERR_HANDLE_CLOSED',
  /** CacheFS: a call after close(). */
  ERR_FS_CLOSED: 'ERR_FS_CLOSED',
  /** CacheFS write-back: some dirty files could not be written to disk (they stay dirty; see error.failures). */
  ERR_FLUSH_FAILED: 'ERR_FLUSH_FAILED',
  /** CacheFS: access statistics missing (no options.accessStatsPath), unreadable, or not this root's. */
  ERR_ACCESS_STATS: 'ERR_ACCESS_STATS',
  /** CacheFS: options.root does not exist or is not a directory. */
  ERR_FS_ROOT: 'ERR_FS_ROOT',
  /** CacheFS: a file to read, write or open is a FIFO, a socket or a device, which CacheFS refuses rather than block on. */
  ERR_FS_SPECIAL_FILE: 'ERR_FS_SPECIAL_FILE',
  /** CacheFS: a path leads outside the root (through ".." or a symbolic link). */
  ERR_PATH_OUTSIDE_ROOT: 'ERR_PATH_OUTSIDE_ROOT',
  /** InodeFS: the store file cannot be opened (not lmdb, corrupt, another program's lmdb file, another format version, a symbolic link or not a regular file). */
  ERR_INODEFS_STORE: 'ERR_INODEFS_STORE',
  /** InodeFS: a store file belongs to another user, or others may write to it. */
  ERR_INODEFS_PERMISSIONS: 'ERR_INODEFS_PERMISSIONS',
  /** InodeFS: the store is open in another live process. */
  ERR_INODEFS_BUSY: 'ERR_INODEFS_BUSY',
  /** InodeFS: the InodeFS or the snapshot was closed or released. */
  ERR_INODEFS_CLOSED: 'ERR_INODEFS_CLOSED',
  /** InodeFS: more snapshots open at once than lmdb has reader slots (options.maxReaders). */
  ERR_TOO_MANY_SNAPSHOTS: 'ERR_TOO_MANY_SNAPSHOTS',
  /** InodeFS: a persistent snapshot of that name already exists. */
  ERR_SNAPSHOT_EXISTS: 'ERR_SNAPSHOT_EXISTS',
  /** InodeFS: no persistent snapshot has that name; Workspace: no snapshot has that id, short id or tag. */
  ERR_SNAPSHOT_NOT_FOUND: 'ERR_SNAPSHOT_NOT_FOUND',
  /** Workspace: no workspace at that directory (no .arenacache), or its repository is gone. */
  ERR_WORKSPACE_NOT_FOUND: 'ERR_WORKSPACE_NOT_FOUND',
  /** Workspace: init() where a workspace already is, or fork() into a directory that is not empty. */
  ERR_WORKSPACE_EXISTS: 'ERR_WORKSPACE_EXISTS',
  /** Workspace: another operation (in this or another process) holds the workspace lock. */
  ERR_WORKSPACE_BUSY: 'ERR_WORKSPACE_BUSY',
  /** Workspace: the repository or a descriptor has a format this version does not read. */
  ERR_WORKSPACE_FORMAT: 'ERR_WORKSPACE_FORMAT',
  /** Workspace: restore() over changes not yet snapshotted (pass { force: true } to discard them). */
  ERR_WORKTREE_DIRTY: 'ERR_WORKTREE_DIRTY',
  /** Workspace: an id prefix or tag matches more than one snapshot. */
  ERR_SNAPSHOT_AMBIGUOUS: 'ERR_SNAPSHOT_AMBIGUOUS',
  /** Workspace: a descriptor, manifest or stored file does not match its checksum, or names a path outside the tree. */
  ERR_SNAPSHOT_CORRUPT: 'ERR_SNAPSHOT_CORRUPT',
  /** Workspace: files could not be read or written during snapshot, restore or fork (see error.failures). */
  ERR_SNAPSHOT_IO: 'ERR_SNAPSHOT_IO',
  /** Workspace/cloneTree: engine 'reflink' was asked for where the filesystem cannot clone. */
  ERR_REFLINK_UNSUPPORTED: 'ERR_REFLINK_UNSUPPORTED',
  /** Workspace: restore cannot swap the tree (the workspace is a mount point or its parent is another filesystem). */
  ERR_RESTORE_UNSUPPORTED: 'ERR_RESTORE_UNSUPPORTED',
  /** InvalidationBus: another bus already publishes this cache's writes (one per process and cache). */
  ERR_INVALIDATION_RUNNING: 'ERR_INVALIDATION_RUNNING',
  /** InvalidationBus: the UDP socket could not be bound, or Redis could not be reached at start. */
  ERR_INVALIDATION_TRANSPORT: 'ERR_INVALIDATION_TRANSPORT',
  /** InvalidationBus: a call after close(). */
  ERR_INVALIDATION_CLOSED: 'ERR_INVALIDATION_CLOSED',
  /** InvalidationBus: the cache has no outbox (attached from a bare SharedArrayBuffer instead of cache.handle). */
  ERR_INVALIDATION_UNSUPPORTED: 'ERR_INVALIDATION_UNSUPPORTED',
  /** InvalidationBus: the Redis transport needs the ioredis package, which could not be loaded. */
  ERR_IOREDIS_MISSING: 'ERR_IOREDIS_MISSING',
  /** createKeyv(): the keyv package could not be loaded. */
  ERR_KEYV_MISSING: 'ERR_KEYV_MISSING',
  /** arenacache/rate-limit: increment() on a store that init() has not given its window yet. */
  ERR_STORE_NOT_INITIALIZED: 'ERR_STORE_NOT_INITIALIZED',
  /** The native addon is not available (not built, or failed to load). */
  ERR_NATIVE_UNAVAILABLE: 'ERR_NATIVE_UNAVAILABLE',
});

export class ArenaCacheError extends Error {
  /**
   * @param {string} code one of `codes`
   * @param {string} message
   * @param {{ cause?: unknown }} [options]
   */
  constructor(code, message, options) {
    super(message, options);
    this.name = 'ArenaCacheError';
    this.code = code;
  }
}

/** A short rendering of a bad value for "(got ...)" in messages. */
export function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  switch (typeof value) {
    case 'string': {
      const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
      return JSON.stringify(shown);
    }
    case 'number':
    case 'boolean':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'symbol':
      return value.toString();
    case 'function':
      return `function ${value.name || '(anonymous)'}`;
    default: {
      if (Array.isArray(value)) return `an array of length ${value.length}`;
      const name = value.constructor?.name;
      return name ? `an instance of ${name}` : 'an object';
    }
  }
}

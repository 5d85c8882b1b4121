// BlockStore: large byte ranges of files in a shared (or file-backed) block
// arena, for every thread and process that attaches: the write path that
// CacheFS write-back builds on. Writes land in fixed-size blocks and stay
// dirty, and are never evicted, until the writer-back has stored them and
// marks them clean; clean blocks are evicted by CLOCK when space runs out.

import { ArenaCacheError, codes, describe } from '../../errors.js';
import { allocateSharedMemory } from '../common/shared-memory.js';
import { planBlocks } from './block-layout.js';
import { BLOCK_ARENA, BlockArena } from './blocks.js';
import { openArenaFile } from '../common/file.js';
import { MAX_MEMORY_BYTES, MIN_MEMORY_BYTES } from '../common/layout.js';
import { requireNative } from '../../native/addon.js';
import { attachBuffer, checkArenaPath, flushMapping, mismatchError, releaseMappedArena } from '../common/file-backing.js';
import { checkInteger, checkObject, integerRange, rejectUnknown, withDefaults } from '../../validate.js';
import { FILE_OPTION_DEFAULTS, MEMORY_BYTES_RANGE, splitFileOptions } from '../common/file-options.js';
import { typedArrayByteLength } from '../../typed-array.js';

/** Every option of `new BlockStore(options)` with its default. */
export const BLOCK_DEFAULTS = Object.freeze({
  /** Bytes of shared memory for the whole store (required), 1 MiB to 1 TiB. */
  memoryBytes: undefined,
  /** Bytes per block: a power of two from 4 KiB to 16 MiB. */
  blockBytes: 64 * 1024,
  /** Lock stripes (a power of two up to 1024); 0 chooses from the block count. */
  stripes: 0,
});
const BLOCK_OPEN_DEFAULTS = Object.freeze({ ...BLOCK_DEFAULTS, ...FILE_OPTION_DEFAULTS });
const HANDLE_TYPE = 'arenacache.BlockStore';
const MAX_FILE_ID = 2 ** 32 - 1;
const kAttach = Symbol('attach');

function isPowerOfTwo(n) {
  return n > 0 && (n & (n - 1)) === 0;
}

function resolveBlockOptions(options) {
  const resolved = withDefaults(options, BLOCK_DEFAULTS, 'options');
  if (resolved.memoryBytes === undefined) {
    throw new TypeError(`options.memoryBytes is required: ${integerRange(MIN_MEMORY_BYTES, MAX_MEMORY_BYTES, MEMORY_BYTES_RANGE)}`);
  }
  checkInteger(resolved.memoryBytes, 'options.memoryBytes', MIN_MEMORY_BYTES, MAX_MEMORY_BYTES, MEMORY_BYTES_RANGE);
  checkInteger(resolved.blockBytes, 'options.blockBytes', 4096, 16 * 2 ** 20, 'a power of two from 4096 to 16777216');
  if (!isPowerOfTwo(resolved.blockBytes)) throw new RangeError(`options.blockBytes must be a power of two from 4096 to 16777216 (got ${resolved.blockBytes})`);
  checkInteger(resolved.stripes, 'options.stripes', 0, 1024, '0 (automatic) or a power of two up to 1024');
  if (resolved.stripes !== 0 && !isPowerOfTwo(resolved.stripes)) {
    throw new RangeError(`options.stripes must be 0 (automatic) or a power of two up to 1024 (got ${resolved.stripes})`);
  }
  let stripes = resolved.stripes;
  if (stripes === 0) {
    // About 64 blocks per stripe, at most 64 stripes: enough for writers not to meet.
    const blocks = resolved.memoryBytes / resolved.blockBytes;
    stripes = Math.min(64, Math.max(1, 2 ** Math.floor(Math.log2(Math.max(1, blocks / 64)))));
  }
  return { ...resolved, plan: planBlocks({ memoryBytes: resolved.memoryBytes, blockBytes: resolved.blockBytes, stripes }) };
}

function checkFile(file) {
  if (typeof file !== 'number') throw new TypeError(`file must be a number, the file's id (got ${describe(file)})`);
  if (!Number.isInteger(file) || file < 0 || file > MAX_FILE_ID) throw new RangeError(`file must be an integer from 0 to ${MAX_FILE_ID} (got ${describe(file)})`);
}

function checkPosition(position, name) {
  checkInteger(position, name, 0, Number.MAX_SAFE_INTEGER, { to: null });
}

/**
 * Calls `visit(index, offset, done, n)` for each block that bytes
 * [position, position + length) touch: block `index`, from `offset` in it,
 * `n` bytes, `done` bytes in. Stops, returning false, when a visit does.
 */
function forEachBlock(position, length, blockBytes, visit) {
  let done = 0;
  while (done < length) {
    const at = position + done;
    const index = Math.floor(at / blockBytes);
    const offset = at - index * blockBytes;
    const n = Math.min(blockBytes - offset, length - done);
    if (!visit(index, offset, done, n)) return false;
    done += n;
  }
  return true;
}

function closedError() {
  return new ArenaCacheError(codes.ERR_CACHE_CLOSED, 'the block store is closed: close() was called on this instance');
}

export class BlockStore {
  #arena;
  #blockBytes;
  #mapped;
  #path;
  #handle;
  #closed = false;

  /**
   * A block store in a new SharedArrayBuffer (see BLOCK_DEFAULTS; memoryBytes
   * is required). attach() and open() pass the store they made under kAttach.
   * @param {{ memoryBytes: number, blockBytes?: number, stripes?: number }
   *   | { [kAttach]: { arena: BlockArena, path: string | null, mapped: boolean } }} options
   */
  constructor(options) {
    let arena;
    let path = null;
    let mapped = false;
    if (options !== null && typeof options === 'object' && Object.hasOwn(options, kAttach)) {
      ({ arena, path, mapped } = options[kAttach]);
    } else {
      if (options === undefined) throw new TypeError('options.memoryBytes is required: new BlockStore({ memoryBytes: 256 * 2 ** 20 })');
      const { plan } = resolveBlockOptions(options);
      arena = BlockArena.initialize(allocateSharedMemory(plan.memoryBytes), plan);
    }
    this.#arena = arena;
    this.#blockBytes = arena.blockBytes;
    this.#path = path;
    this.#mapped = mapped;
    this.#handle = Object.freeze({ type: HANDLE_TYPE, version: 1, buffer: arena.buffer, path });
  }

  /** Attaches to a store created in another thread, from its `handle`. */
  static attach(handle) {
    if (handle === null || typeof handle !== 'object' || handle.type !== HANDLE_TYPE || !(handle.buffer instanceof SharedArrayBuffer)) {
      throw new TypeError(`handle must be a BlockStore handle (store.handle) (got ${describe(handle)})`);
    }
    return attachBuffer(handle.buffer, (attachOptions, mapped) => {
      const arena = BlockArena.attach(handle.buffer, attachOptions);
      return new BlockStore({ [kAttach]: { arena, path: mapped ? handle.path : null, mapped } });
    });
  }

  /**
   * Opens the block store in the file at `path` (created with
   * options.memoryBytes when it does not exist); shared by every process
   * that opens it, and kept across restarts.
   */
  static open(path, options) {
    checkArenaPath(path);
    const { reset, mode, populate, defined } = splitFileOptions(options, BLOCK_OPEN_DEFAULTS);
    const resolved = defined.memoryBytes === undefined ? null : resolveBlockOptions(defined);
    requireNative('BlockStore.open()');
    const plan = resolved === null ? null : () => resolved.plan;
    const { arena, created } = openArenaFile(path, { plan, reset, mode, populate, kind: BLOCK_ARENA });
    if (!created) {
      for (const name of ['memoryBytes', 'blockBytes']) {
        if (defined[name] !== undefined && defined[name] !== arena.header[name]) {
          releaseMappedArena(arena);
          throw mismatchError(`block store file ${path}`, name, arena.header[name], defined[name]);
        }
      }
    }
    return new BlockStore({ [kAttach]: { arena, path, mapped: true } });
  }

  /** A structured-cloneable value that BlockStore.attach() turns back into a store. */
  get handle() {
    return this.#handle;
  }

  /** Bytes per block. */
  get blockBytes() {
    return this.#blockBytes;
  }

  /** The file's path for a file-backed store, else null. */
  get path() {
    return this.#path;
  }

  /**
   * Writes `data` at byte `position` of file `file` (an id, such as an inode
   * number); the blocks it touches become dirty.
   * @returns {this}
   */
  write(file, position, data) {
    if (this.#closed) throw closedError();
    checkFile(file);
    checkPosition(position, 'position');
    if (!(data instanceof Uint8Array)) throw new TypeError(`data must be a Buffer or Uint8Array (got ${describe(data)})`);
    const length = typedArrayByteLength(data);
    const blockBytes = this.#blockBytes;
    if (Math.floor((position + length) / blockBytes) > MAX_FILE_ID) {
      throw new RangeError(`position + data.length must stay below ${(MAX_FILE_ID + 1) * blockBytes} (block index 2^32) (got ${position + length})`);
    }
    const arena = this.#arena;
    forEachBlock(position, length, blockBytes, (index, offset, done, n) => {
      arena.writeBlock(file, index, offset, data, done, n);
      return true;
    });
    return this;
  }

  /**
   * `length` bytes of file `file` from `position`, or undefined unless all
   * of them are in the store.
   * @returns {Buffer | undefined}
   */
  read(file, position, length) {
    if (this.#closed) throw closedError();
    checkFile(file);
    checkPosition(position, 'position');
    checkPosition(length, 'length');
    const target = Buffer.allocUnsafe(length);
    const arena = this.#arena;
    const complete = forEachBlock(position, length, this.#blockBytes, (index, offset, done, n) => arena.readBlock(file, index, offset, n, target, done));
    return complete ? target : undefined;
  }

  /**
   * The dirty ranges to write back (of one file with `{ file }`): an array
   * of { file, position, length, block, generation }, one per dirty block,
   * in file and position order.
   * Hand each to markClean() once it is stored.
   */
  dirty(options) {
    if (this.#closed) throw closedError();
    let file = -1;
    if (options !== undefined) {
      checkObject(options, 'options');
      rejectUnknown(options, { file: undefined }, 'options');
      if (options.file !== undefined) {
        checkFile(options.file);
        file = options.file;
      }
    }
    const blockBytes = this.#blockBytes;
    return this.#arena
      .dirtyBlocks(file)
      .map(({ file: id, index, from, to, generation }) => ({ file: id, position: index * blockBytes + from, length: to - from, block: index, generation }))
      .sort((a, b) => a.file - b.file || a.position - b.position);
  }

  /**
   * Marks a range from dirty() clean: written back, so evictable. Returns
   * false (and keeps it dirty) when the block was written again since.
   */
  markClean(range) {
    if (this.#closed) throw closedError();
    if (range === null || typeof range !== 'object' || !Number.isInteger(range.block) || !Number.isInteger(range.generation)) {
      throw new TypeError(`range must be an entry of dirty() ({ file, block, generation, ... }) (got ${describe(range)})`);
    }
    checkFile(range.file);
    return this.#arena.markClean(range.file, range.block, range.generation);
  }

  /**
   * Runs `fn()` holding the lock of `file`, shared by every thread and
   * process of the store, and returns its result: for changes to several
   * blocks of a file that other users of the lock must see whole. `fn` must
   * be synchronous and must not take another file's lock. (The lock is
   * taken from a holder that has exited; a live one is waited for up to a
   * minute.) Locks are striped: files whose ids are equal modulo 256 share one.
   */
  exclusive(file, fn) {
    if (this.#closed) throw closedError();
    checkFile(file);
    if (typeof fn !== 'function') throw new TypeError(`fn must be a function (got ${describe(fn)})`);
    const arena = this.#arena;
    const held = arena.lockFile(file);
    let result;
    try {
      result = fn();
    } finally {
      arena.unlockFile(file, held);
    }
    if (result !== null && typeof result?.then === 'function') {
      throw new TypeError('fn must be synchronous: it returned a promise, and the lock was released before that promise settled');
    }
    return result;
  }

  /**
   * The sequence of `file`'s lock: it changes whenever the lock is taken or
   * released and is odd while it is held. The same even value before and
   * after some work means no exclusive() section of the file overlapped it.
   */
  fileVersion(file) {
    if (this.#closed) throw closedError();
    checkFile(file);
    return this.#arena.fileLockSequence(file);
  }

  /** Drops every block of `file`, dirty ones included (the file was deleted); returns how many. */
  drop(file) {
    if (this.#closed) throw closedError();
    checkFile(file);
    return this.#arena.dropFile(file);
  }

  /** How many blocks are dirty now (stats().dirtyBlocks without the counters' cost). */
  dirtyBlockCount() {
    if (this.#closed) throw closedError();
    return this.#arena.dirtyCount();
  }

  /** Counters of every attached thread and process, summed, and the block counts. */
  stats() {
    if (this.#closed) throw closedError();
    const { totals, used, dirty, lostDirty } = this.#arena.stats();
    const header = this.#arena.header;
    return {
      blockBytes: header.blockBytes,
      blocks: header.stripeCount * header.blocksPerStripe,
      usedBlocks: used,
      dirtyBlocks: dirty,
      lostDirtyBlocks: lostDirty,
      stripes: header.stripeCount,
      memoryBytes: header.memoryBytes,
      blockWrites: totals.sets,
      blockReads: totals.hits + totals.misses,
      blockHits: totals.hits,
      blockMisses: totals.misses,
      evictions: totals.evictions,
      droppedBlocks: totals.deletes,
      readRetries: totals.readRetries,
      lockWaits: totals.lockWaits,
      lockTimeouts: totals.lockTimeouts,
      lockRecoveries: totals.lockRecoveries,
      threadSlotRepairs: totals.threadSlotRepairs,
    };
  }

  /** Makes a file-backed store durable (msync + fdatasync, off the event loop). */
  async flush() {
    if (this.#closed) throw closedError();
    if (this.#mapped) await flushMapping(this.#arena.buffer, `block store file ${this.#path ?? '(attached)'}`);
  }

  /** Closes this instance; the last one of a process to close unmaps a file-backed store. */
  close() {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#mapped) releaseMappedArena(this.#arena);
  }
}

// File-backed arenas: the arena of a mapped file, shared by every process
// that opens the same path and surviving their restarts.
//
// Opening follows one protocol, built on an OFD lock of the arena's bytes
// (0 to 2^40: the whole arena, however large, but not the threads' liveness
// bytes past it, see liveness.js) that every opener holds shared for as
// long as its mapping lives (the kernel drops it when the process dies):
//
//   1. Open the file without following a symlink (creating it with
//      options.mode, 0600 by default, when asked to create), and check that
//      it is a regular file owned by this user that nobody else may write.
//   2. Try to take the lock exclusively. Whoever gets it is the only process
//      with the file open: it may create or reset the arena (sizing the file
//      and allocating its blocks before mapping, so nothing is ever mapped
//      beyond the end of the file: no SIGBUS), or recover an existing one
//      (locks, leases and flights of exited processes). It then downgrades
//      to shared, atomically.
//   3. Everyone else waits (bounded) for a shared lock, which is granted
//      once any exclusive holder has finished, then maps and validates.
//
// A file is never shrunk: only a sole user resets it.

import { readSync, unlinkSync } from 'node:fs';
import { ArenaCacheError, codes } from '../errors.js';
import {
  fileClose,
  fileLock,
  fileMap,
  fileOpen,
  fileResize,
  fileStat,
  LOCK_EXCLUSIVE,
  LOCK_SHARED,
  mappingRelease,
  POPULATE_NONE,
  POPULATE_READ,
  POPULATE_WRITE,
} from '../native/mapped-file.js';
import { Arena } from './arena.js';
import { HEADER_BYTES, MAGIC } from './layout.js';
import { mappedArenaOptions } from './mapped-options.js';

/** How long open() waits for another process to finish creating or recovering the file. */
export const OPEN_WAIT_MS = 10_000;
const FEATURE = 'SharedCache.open()';
const HEADER_CODES = new Set([codes.ERR_ARENA_NOT_ARENA, codes.ERR_ARENA_VERSION, codes.ERR_ARENA_TRUNCATED, codes.ERR_ARENA_CORRUPT]);
const SPACE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'ENOMEM']);
/**
 * Mode bits that let group or others write: a file with any of them is
 * refused (another user could change what this process reads), so no new
 * file may be created with them (see checkArenaFileMode in cache/options.js).
 */
export const FOREIGN_WRITE_BITS = 0o022;
/** Mode bits that let group or others read what the arena caches: allowed, with a warning at creation. */
export const FOREIGN_READ_BITS = 0o044;

function fileError(path, what, cause) {
  return new ArenaCacheError(codes.ERR_ARENA_FILE, `could not ${what} arena file ${path}: ${cause.message}`, { cause });
}

function openFile(path, createMode) {
  try {
    return fileOpen(path, createMode, FEATURE);
  } catch (cause) {
    if (cause instanceof ArenaCacheError) throw cause;
    if (cause.code === 'ENOENT' && createMode === 0) {
      throw new ArenaCacheError(codes.ERR_ARENA_FILE, `arena file ${path} does not exist; pass options.memoryBytes to create it`, { cause });
    }
    if (cause.code === 'ELOOP') {
      throw new ArenaCacheError(codes.ERR_ARENA_FILE, `arena file ${path} is a symbolic link; arena files are opened without following links`, { cause });
    }
    throw fileError(path, 'open', cause);
  }
}

function checkFile(path, stat, created) {
  if (!stat.regular) throw new ArenaCacheError(codes.ERR_ARENA_FILE, `arena file ${path} is not a regular file`);
  if (created) return;
  if (stat.uid !== stat.euid) {
    throw new ArenaCacheError(
      codes.ERR_ARENA_PERMISSIONS,
      `arena file ${path} belongs to user ${stat.uid}, not to this process's user ${stat.euid}; another user could change what this process reads`,
    );
  }
  if ((stat.mode & FOREIGN_WRITE_BITS) !== 0) {
    throw new ArenaCacheError(
      codes.ERR_ARENA_PERMISSIONS,
      `arena file ${path} has mode 0${stat.mode.toString(8)}, which lets other users write to it; chmod it to 600`,
    );
  }
}

/** Waits (bounded) for a shared lock: another process may be creating or recovering the file. */
function lockShared(path, fd) {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = performance.now() + OPEN_WAIT_MS;
  let sleepMs = 0.1;
  while (!fileLock(fd, LOCK_SHARED, false)) {
    if (performance.now() > deadline) {
      throw new ArenaCacheError(
        codes.ERR_ARENA_BUSY,
        `arena file ${path} stayed locked by another process for ${OPEN_WAIT_MS / 1000} s (it is creating, resetting or recovering the arena)`,
      );
    }
    Atomics.wait(pause, 0, 0, sleepMs);
    sleepMs = Math.min(sleepMs * 2, 20);
  }
}

/** True when the file has no arena header at all: new, or its creation never finished. */
/** Whether the open file `fd` starts with the arena magic `magic`. */
function startsWithMagic(fd, magic) {
  const bytes = Buffer.alloc(4);
  return readSync(fd, bytes, 0, 4, 0) === 4 && bytes.readUInt32LE(0) === magic >>> 0;
}

function headerIsBlank(fd, size) {
  if (size === 0) return true;
  if (size < HEADER_BYTES) return false;
  const header = Buffer.alloc(HEADER_BYTES);
  readSync(fd, header, 0, HEADER_BYTES, 0);
  return header.every((byte) => byte === 0);
}

function resize(path, fd, bytes) {
  try {
    fileResize(fd, bytes);
  } catch (cause) {
    if (SPACE_ERRORS.has(cause.code)) {
      throw new ArenaCacheError(
        codes.ERR_ARENA_ALLOC,
        `could not allocate ${bytes} bytes for arena file ${path} (${cause.message}); free space on its file system or lower options.memoryBytes`,
        { cause },
      );
    }
    throw fileError(path, 'size', cause);
  }
}

function map(path, fd, bytes, populate) {
  try {
    return fileMap(fd, bytes, populate);
  } catch (cause) {
    if (SPACE_ERRORS.has(cause.code)) {
      throw new ArenaCacheError(codes.ERR_ARENA_ALLOC, `could not map the ${bytes} bytes of arena file ${path} (${cause.message})`, { cause });
    }
    throw fileError(path, 'map', cause);
  }
}

function attach(path, kind, buffer) {
  try {
    return kind.attach(buffer, mappedArenaOptions(buffer));
  } catch (cause) {
    if (!HEADER_CODES.has(cause?.code)) throw cause;
    throw new ArenaCacheError(cause.code, `arena file ${path}: ${cause.message}; open it with { reset: true } to replace it with a new arena`, {
      cause,
    });
  }
}

/**
 * A kind of arena file content: its magic, and how a new one is written into
 * a mapped buffer (`plan`: what openArenaFile's options.plan() returned, in
 * the shape this kind's create takes), an existing one attached, and one left
 * by exited processes recovered.
 * @typedef {{ magic: number, create(buffer: SharedArrayBuffer, plan: unknown, options: object): object,
 *   attach(buffer: SharedArrayBuffer, options: object): object, recover(arena: object, options: { rebuildLocked: boolean }): number }} ArenaKind
 */

/**
 * The cache arena as a kind of file content: how a new one is written into
 * a mapped file, an existing one attached, and one left by exited processes
 * recovered. (BlockStore has a kind of its own: see blocks.js.)
 */
export const CACHE_ARENA = Object.freeze({
  magic: MAGIC,
  create: (buffer, { layout, settings }, options) => Arena.initialize(buffer, layout, settings, options),
  attach: (buffer, options) => Arena.attach(buffer, options),
  recover: (arena, options) => arena.recoverAfterRestart(options),
});

/**
 * Opens the arena in the file at `path`, creating or resetting it if asked.
 * @param {string} path
 * @param {{ plan: null | (() => { memoryBytes: number }), reset: boolean, mode: number, populate: boolean, kind?: ArenaKind }} options
 *   `plan` lays out a new arena (null: the caller gave no memoryBytes, so the
 *   file must hold one already) and is handed to kind.create; `reset`
 *   replaces whatever the file holds; `kind` says what the arena is.
 * @returns {{ arena: object, created: boolean, recovered: number }}
 *   The mapping counts one user (see mappingRelease) and owns the file.
 */
export function openArenaFile(path, { plan, reset, mode, populate, kind = CACHE_ARENA }) {
  const { fd, created } = openFile(path, plan === null ? 0 : mode);
  let buffer = null;
  try {
    checkFile(path, fileStat(fd), created);
    const sole = fileLock(fd, LOCK_EXCLUSIVE, false);
    if (!sole) {
      if (reset) {
        throw new ArenaCacheError(codes.ERR_ARENA_BUSY, `arena file ${path} cannot be reset while it is open elsewhere (in another process, or by another open() in this one)`);
      }
      lockShared(path, fd);
    }
    const size = fileStat(fd).size;
    const fresh = sole && (reset || created || headerIsBlank(fd, size));
    let arena;
    let recovered = 0;
    if (fresh) {
      if (plan === null) {
        throw new ArenaCacheError(codes.ERR_ARENA_FILE, `arena file ${path} holds no arena yet; pass options.memoryBytes to create one`);
      }
      const planned = plan();
      // Drop the old contents (a reset), then size and allocate: all zeros.
      if (size > 0) resize(path, fd, 0);
      resize(path, fd, planned.memoryBytes);
      buffer = map(path, fd, planned.memoryBytes, populate ? POPULATE_WRITE : POPULATE_NONE);
      arena = kind.create(buffer, planned, mappedArenaOptions(buffer));
    } else {
      if (size < HEADER_BYTES) {
        // Cut short (its magic is there) or something else altogether.
        throw new ArenaCacheError(
          size < 16 || !startsWithMagic(fd, kind.magic) ? codes.ERR_ARENA_NOT_ARENA : codes.ERR_ARENA_TRUNCATED,
          `arena file ${path} is ${size} bytes, too small for an arena header; open it with { reset: true } to replace it with a new arena`,
        );
      }
      buffer = map(path, fd, size, populate ? POPULATE_READ : POPULATE_NONE);
      arena = attach(path, kind, buffer);
      // Shards left locked are rebuilt where only process deaths can have
      // left them so (a file in memory) or where record checksums tell the
      // damage a machine crash leaves on disk (some of a shard's pages
      // written back and not others); otherwise reset.
      if (sole) recovered = kind.recover(arena, { rebuildLocked: fileStat(fd).memoryBacked });
    }
    if (sole) fileLock(fd, LOCK_SHARED, true);
    if (created && (mode & FOREIGN_READ_BITS) !== 0) {
      process.emitWarning(
        `arena file ${path} was created with mode 0o${mode.toString(8)}, which lets users other than its owner read what it caches; use mode 0o600 unless they must`,
        { code: 'ARENACACHE_ARENA_READABLE' },
      );
    }
    return { arena, created: fresh, recovered };
  } catch (error) {
    if (buffer !== null) mappingRelease(buffer);
    else fileClose(fd);
    if (created) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone or replaced: nothing of ours to clean up.
      }
    }
    throw error;
  }
}

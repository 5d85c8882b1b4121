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
//      it is a regular file owned by this user that nobody else may write,
//      and that it is empty or starts with the arena's magic: a file of any
//      other kind is refused and never written, reset or not (a wrong path
//      must not destroy a config file; root could otherwise wipe /etc/passwd).
//   2. Try to take the lock exclusively. Whoever gets it is the only process
//      with the file open: it may create or reset the arena (sizing the file
//      and allocating its blocks before mapping, so nothing is ever mapped
//      beyond the end of the file: no SIGBUS), or recover an existing one
//      (locks, leases and flights of exited processes). It then downgrades
//      to shared, atomically.
//   3. Everyone else waits (bounded) for a shared lock, which is granted
//      once any exclusive holder has finished, then maps and validates.
//
// A file is never shrunk: only a sole user resets it. A new or reset arena
// gets its magic (durably) before anything else, so that what a crash leaves
// of it is still recognisably ours (see writeMagic).
//
// Inspecting (inspectArenaFile) is another way in: the same checks of step
// 1 on a descriptor opened read-only, then a read-only mapping. It takes no
// lock at all, so it never makes itself the sole opener (whose recovery
// would change what it came to look at) and never keeps an opener from
// becoming one; it only asks the kernel whether an opener holds the arena
// exclusively (creating, resetting or recovering it) and waits, bounded,
// until it is done.

import { fdatasyncSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { ArenaCacheError, codes } from '../../errors.js';
import {
  fileClose,
  fileLock,
  fileLockHolder,
  fileMap,
  fileMapReadOnly,
  fileOpen,
  fileOpenReadOnly,
  fileResize,
  fileStat,
  LOCK_EXCLUSIVE,
  LOCK_NONE,
  LOCK_SHARED,
  mappingLockHolder,
  mappingRelease,
  POPULATE_NONE,
  POPULATE_READ,
  POPULATE_WRITE,
} from '../../native/mapped-file.js';
import { BLOCKS_MAGIC, HEADER_BYTES, MAGIC } from './layout.js';
import { mappedArenaOptions } from './mapped-options.js';
import { ThreadLiveness } from './liveness.js';
import { FOREIGN_READ_BITS, FOREIGN_WRITE_BITS } from '../../file-mode.js';

/** How long open() waits for another process to finish creating or recovering the file. */
export const OPEN_WAIT_MS = 10_000;
const FEATURE = 'SharedCache.open()';
const HEADER_CODES = new Set([codes.ERR_ARENA_NOT_ARENA, codes.ERR_ARENA_VERSION, codes.ERR_ARENA_TRUNCATED, codes.ERR_ARENA_CORRUPT]);
/** The advice for an arena that cannot be used as it is; never given for a file that is not an arena (see notArena). */
const RESET_HINT = 'open it with { reset: true } to replace it with a new arena';
const SPACE_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'ENOMEM']);

function fileError(path, what, cause) {
  return new ArenaCacheError(codes.ERR_ARENA_FILE, `could not ${what} arena file ${path}: ${cause.message}`, { cause });
}

/**
 * Opens the arena file: read-write, created with `createMode` when it is
 * more than 0 (see fileOpen); with `readOnly`, for reading only (`feature`
 * names the caller for the error without the addon).
 */
function openFile(path, createMode, readOnly = false, feature = FEATURE) {
  try {
    return readOnly ? { fd: fileOpenReadOnly(path, feature), created: false } : fileOpen(path, createMode, feature);
  } catch (cause) {
    if (cause instanceof ArenaCacheError) throw cause;
    if (cause.code === 'ENOENT' && createMode === 0) {
      const advice = readOnly ? '' : '; pass options.memoryBytes to create it';
      throw new ArenaCacheError(codes.ERR_ARENA_FILE, `arena file ${path} does not exist${advice}`, { cause });
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

/**
 * Waits (bounded) until `ready()`: another process may be creating,
 * resetting or recovering the file, holding its lock exclusively.
 */
function waitForOpener(path, ready) {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = performance.now() + OPEN_WAIT_MS;
  let sleepMs = 0.1;
  while (!ready()) {
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

/** Waits (bounded) for a shared lock: another process may be creating or recovering the file. */
function lockShared(path, fd) {
  waitForOpener(path, () => fileLock(fd, LOCK_SHARED, false));
}

/** Names of the arena kinds a file may hold, by magic, for the message that refuses another kind. */
const KIND_NAMES = new Map([
  [MAGIC >>> 0, 'SharedCache'],
  [BLOCKS_MAGIC >>> 0, 'BlockStore'],
]);

/**
 * What an existing file holds, from its first bytes:
 *   'empty'      nothing (new, or emptied by a reset that went no further);
 *   'unfinished' the magic followed by zeros: a creation or reset that
 *                stopped before the header was written (see writeMagic);
 *   'arena'      the magic and more, sound or not (attach() tells);
 *   'foreign'    anything else: another kind of file, which open() must
 *                never overwrite, whatever options.reset says.
 * `first` is the file's first 32-bit word (little-endian), or -1 if it is shorter.
 * @returns {{ content: 'empty' | 'unfinished' | 'arena' | 'foreign', first: number }}
 */
function contentOf(fd, size, magic) {
  if (size === 0) return { content: 'empty', first: -1 };
  const head = Buffer.alloc(Math.min(size, HEADER_BYTES));
  const read = readSync(fd, head, 0, head.length, 0);
  if (read < 4) return { content: 'foreign', first: -1 };
  const first = head.readUInt32LE(0);
  if (first !== magic >>> 0) return { content: 'foreign', first };
  // Every header written by kind.create has a version word, so a real
  // arena is never the magic followed by zeros, however damaged.
  return { content: head.subarray(4, read).every((byte) => byte === 0) ? 'unfinished' : 'arena', first };
}

/**
 * ERR_ARENA_NOT_ARENA for a file that is not an arena of `magic`'s kind
 * (see contentOf). The message names what the file is when it is another
 * kind of arena, and never suggests a reset, which refuses it too.
 */
function notArena(path, size, first, magic, caller = 'open()') {
  const expected = `0x${(magic >>> 0).toString(16)}`;
  let found;
  if (first < 0) found = `its ${size} bytes do not hold the magic ${expected}`;
  else if (KIND_NAMES.has(first)) found = `it is a ${KIND_NAMES.get(first)} arena`;
  else found = `it starts with 0x${first.toString(16).padStart(8, '0')}, not the magic ${expected}`;
  return new ArenaCacheError(
    codes.ERR_ARENA_NOT_ARENA,
    caller === 'open()'
      ? `arena file ${path} is not a ${KIND_NAMES.get(magic >>> 0)} arena (${found}); open() never overwrites another kind of file: remove it or choose another path`
      : `arena file ${path} is not a ${KIND_NAMES.get(magic >>> 0)} arena (${found})`,
  );
}

/**
 * Writes the magic at the start of the empty file `fd`, durably, before it
 * is grown and its header written: whatever a crash (of the process or the
 * machine) leaves from then on starts with the magic, so the next open()
 * knows the file for one of its own unfinished creations ('unfinished' in
 * contentOf), while a file that does not start with the magic is never
 * taken for one and overwritten.
 */
function writeMagic(path, fd, magic) {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(magic >>> 0, 0);
  try {
    writeSync(fd, bytes, 0, 4, 0);
    fdatasyncSync(fd);
  } catch (cause) {
    if (SPACE_ERRORS.has(cause.code)) {
      throw new ArenaCacheError(codes.ERR_ARENA_ALLOC, `could not write the magic of arena file ${path} (${cause.message}); free space on its file system`, { cause });
    }
    throw fileError(path, 'write', cause);
  }
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

/** Maps the file: read-write, prefaulted as `populate` says, or read-only (`populate` null). */
function map(path, fd, bytes, populate) {
  try {
    return populate === null ? fileMapReadOnly(fd, bytes) : fileMap(fd, bytes, populate);
  } catch (cause) {
    if (SPACE_ERRORS.has(cause.code)) {
      throw new ArenaCacheError(codes.ERR_ARENA_ALLOC, `could not map the ${bytes} bytes of arena file ${path} (${cause.message})`, { cause });
    }
    throw fileError(path, 'map', cause);
  }
}

/**
 * kind.attach(), or kind.inspect(buffer, `inspecting`) when given, with a
 * header's error worded for the file.
 * @param {string} path
 * @param {any} kind an ArenaKind, or for `inspecting` one with inspect()
 * @param {SharedArrayBuffer} buffer
 * @param {{ liveness: ThreadLiveness, users: () => boolean } | null} [inspecting]
 */
function attach(path, kind, buffer, inspecting = null) {
  try {
    return inspecting !== null ? kind.inspect(buffer, inspecting) : kind.attach(buffer, mappedArenaOptions(buffer));
  } catch (cause) {
    if (!HEADER_CODES.has(cause?.code)) throw cause;
    // Only a file that starts with the magic gets here (see contentOf): an
    // arena of another version or a damaged one, which a reset may replace.
    throw new ArenaCacheError(cause.code, `arena file ${path}: ${cause.message}; ${RESET_HINT}`, { cause });
  }
}

/**
 * What a kind may want to know of the file it creates or recovers: its
 * descriptor (owned by the mapping), identity, whether it lives in memory
 * only, and when open() started (performance.now()).
 * @typedef {{ fd: number, dev: number, ino: number, memoryBacked: boolean, startedAt: number }} ArenaFileFacts
 */
function fileFacts(fd, startedAt) {
  const { dev, ino, memoryBacked } = fileStat(fd);
  return { fd, dev, ino, memoryBacked, startedAt };
}

/**
 * A kind of arena file content: its magic, and how a new one is written into
 * a mapped buffer (`plan`: what openArenaFile's options.plan() returned, in
 * the shape this kind's create takes), an existing one attached, and one left
 * by exited processes recovered.
 * `inspect` (optional) reads an existing one through a read-only mapping
 * (see inspectArenaFile): `liveness` answers for claims (it holds none),
 * `users()` says whether processes have the file open (asked, not locked).
 * `file` describes the file to create and recover (see ArenaFileFacts).
 * `join` (optional) runs for an opener that is not alone with the file,
 * before it writes anything.
 * @typedef {{ magic: number, create(buffer: SharedArrayBuffer, plan: unknown, options: object, file: ArenaFileFacts): object,
 *   attach(buffer: SharedArrayBuffer, options: object): object,
 *   recover(arena: object, options: { rebuildLocked: boolean, file: ArenaFileFacts, [option: string]: unknown }): number,
 *   join?(arena: object, file: ArenaFileFacts): void,
 *   inspect?(buffer: SharedArrayBuffer, options: { liveness: ThreadLiveness, users: () => boolean }): object }} ArenaKind
 */

/**
 * Opens the arena in the file at `path`, creating or resetting it if asked.
 * @param {string} path
 * @param {{ plan: null | (() => { memoryBytes: number }), reset: boolean, mode: number, populate: boolean, kind?: ArenaKind, recovery?: object }} options
 *   `plan` lays out a new arena (null: the caller gave no memoryBytes, so the
 *   file must hold one already) and is handed to kind.create; `reset`
 *   replaces the arena the file holds (never a file that is not one: see
 *   contentOf); `kind` says what the arena is (CACHE_ARENA in
 *   cache/open.js, BLOCK_ARENA in blocks/blocks.js); `recovery` goes on to
 *   kind.recover() with the rest of its options.
 * @returns {{ arena: object, created: boolean, recovered: number }}
 *   The mapping counts one user (see mappingRelease) and owns the file.
 */
export function openArenaFile(path, { plan, reset, mode, populate, kind, recovery = {} }) {
  const startedAt = performance.now();
  const { fd, created } = openFile(path, plan === null ? 0 : mode);
  let buffer = null;
  try {
    checkFile(path, fileStat(fd), created);
    // Another kind of file is refused before any lock is waited for, so that
    // it gets its own code even while a program of its own holds a lock on
    // it. Without the lock this can be a file another opener is creating or
    // resetting: that one is empty or starts with the magic at every moment
    // (see writeMagic), except the zeros an older arenacache version leaves
    // while it creates, which are left to the check under the lock.
    if (!created) {
      const size = fileStat(fd).size;
      const { content, first } = contentOf(fd, size, kind.magic);
      if (content === 'foreign' && first > 0) throw notArena(path, size, first, kind.magic);
    }
    let sole = fileLock(fd, LOCK_EXCLUSIVE, false);
    if (!sole) {
      if (reset) {
        throw new ArenaCacheError(codes.ERR_ARENA_BUSY, `arena file ${path} cannot be reset while it is open elsewhere (in another process, or by another open() in this one)`);
      }
      lockShared(path, fd);
      // Whoever held the file may have been its last user, closing it, or
      // a sole opener that died recovering it: alone now, this opener
      // recovers it itself.
      sole = fileLock(fd, LOCK_EXCLUSIVE, false);
    }
    const size = fileStat(fd).size;
    // Under the lock, what the file holds cannot change under us (a file
    // we just created is empty). A reset replaces only what is an arena
    // already, or none yet: never another kind of file.
    const { content, first } = created ? { content: 'empty', first: -1 } : contentOf(fd, size, kind.magic);
    if (content === 'foreign') throw notArena(path, size, first, kind.magic);
    const blank = content === 'empty' || content === 'unfinished';
    if (blank && plan === null) {
      throw new ArenaCacheError(codes.ERR_ARENA_FILE, `arena file ${path} holds no arena yet; pass options.memoryBytes to create one`);
    }
    if (blank && !sole) {
      throw new ArenaCacheError(codes.ERR_ARENA_BUSY, `arena file ${path} holds no arena yet, and another process (or another open() in this one) has it open; only a sole user creates it, so open it again once they are done`);
    }
    const fresh = sole && (reset || blank);
    let arena;
    let recovered = 0;
    if (fresh) {
      const planned = plan();
      // Drop the old contents (a reset), mark the file as ours, then size
      // and allocate: all zeros past the magic.
      if (size > 0) resize(path, fd, 0);
      writeMagic(path, fd, kind.magic);
      resize(path, fd, planned.memoryBytes);
      buffer = map(path, fd, planned.memoryBytes, populate ? POPULATE_WRITE : POPULATE_NONE);
      arena = kind.create(buffer, planned, mappedArenaOptions(buffer), fileFacts(fd, startedAt));
    } else {
      if (size < HEADER_BYTES) {
        // The magic is there (contentOf), the rest of the header is not.
        throw new ArenaCacheError(codes.ERR_ARENA_TRUNCATED, `arena file ${path} is ${size} bytes, too small for an arena header; ${RESET_HINT}`);
      }
      buffer = map(path, fd, size, populate ? POPULATE_READ : POPULATE_NONE);
      arena = attach(path, kind, buffer);
      // Shards left locked are rebuilt where only process deaths can have
      // left them so (a file in memory) or where record checksums tell the
      // damage a machine crash leaves on disk (some of a shard's pages
      // written back and not others); otherwise reset.
      if (sole) {
        const file = fileFacts(fd, startedAt);
        recovered = kind.recover(arena, { rebuildLocked: file.memoryBacked, file, ...recovery });
      } else {
        kind.join?.(arena, fileFacts(fd, startedAt));
      }
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

/**
 * Reads the arena in the existing file at `path` without changing it:
 * kind.inspect() on a read-only mapping of a read-only descriptor, after
 * the checks open() makes (no symlink, a regular file of this user that
 * nobody else may write, an arena of `kind`). Takes no lock: runs no
 * recovery, never stands in an opener's way; waits (bounded, OPEN_WAIT_MS)
 * only while an opener holds the file exclusively (creating, resetting or
 * recovering it). `feature` names the caller in the error without the addon.
 * @param {string} path
 * @param {{ kind: { magic: number, inspect(buffer: SharedArrayBuffer, options: { liveness: ThreadLiveness, users: () => boolean }): object }, feature: string }} options
 * @returns {object} what kind.inspect() returned; its `buffer`'s mapping
 *   owns the descriptor (give it back with mappingRelease)
 */
export function inspectArenaFile(path, { kind, feature }) {
  const { fd } = openFile(path, 0, true, feature);
  let buffer = null;
  try {
    const found = fileStat(fd);
    checkFile(path, found, false);
    // Another kind of file is refused before waiting for an opener it has none of.
    const early = contentOf(fd, found.size, kind.magic);
    if (early.content === 'foreign' && early.first > 0) throw notArena(path, found.size, early.first, kind.magic, 'inspect');
    waitForOpener(path, () => fileLockHolder(fd) !== LOCK_EXCLUSIVE);
    const size = fileStat(fd).size;
    const { content, first } = contentOf(fd, size, kind.magic);
    if (content === 'foreign') throw notArena(path, size, first, kind.magic, 'inspect');
    if (content === 'empty' || content === 'unfinished') {
      throw new ArenaCacheError(codes.ERR_ARENA_FILE, `arena file ${path} holds no arena yet`);
    }
    if (size < HEADER_BYTES) {
      throw new ArenaCacheError(codes.ERR_ARENA_TRUNCATED, `arena file ${path} is ${size} bytes, too small for an arena header`);
    }
    buffer = map(path, fd, size, null);
    const mapped = buffer;
    return attach(path, kind, buffer, { liveness: new ThreadLiveness(buffer), users: () => mappingLockHolder(mapped) !== LOCK_NONE });
  } catch (error) {
    if (buffer !== null) mappingRelease(buffer);
    else fileClose(fd);
    throw error;
  }
}

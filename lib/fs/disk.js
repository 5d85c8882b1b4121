// A directory on disk as a CacheFS backing.
//
// The root is opened once and every operation is the addon's RootFiles on a
// path relative to that descriptor (src/native/root_files.h): resolved
// beneath the root by the kernel (openat2 RESOLVE_BENEATH) or one component
// at a time on descriptors, with *at calls for what changes a directory.
// Checking a path and then using it by name would let anyone who can write
// inside the root swap a directory for a symbolic link in between and lead
// the use outside; here there is no second lookup to race. Links are
// followed while they stay beneath the root, and refused
// (ERR_PATH_OUTSIDE_ROOT) where they leave it.
//
// Without the addon there is no such resolution in JavaScript, so a
// directory is not served at all (ERR_NATIVE_UNAVAILABLE): see docs/cache-fs.md.

import * as fs from 'node:fs';
import { promisify } from 'node:util';
import { ArenaCacheError, codes, describe } from '../errors.js';
import { requireNative } from '../native/addon.js';
import {
  closeRootDescriptor,
  ROOT_FORCE,
  ROOT_LOAD,
  ROOT_MKDIR,
  ROOT_OPEN,
  ROOT_READDIR,
  ROOT_RECURSIVE,
  ROOT_RENAME,
  ROOT_REWRITE,
  ROOT_RM,
  ROOT_STAT,
  ROOT_STORE,
  ROOT_UNLINK,
  rootFiles,
  rootFilesSync,
} from '../native/root-files.js';
import { CREATE, parseFlags } from '../fs-compat/open-flags.js';
import { outside, Root } from '../fs-compat/root.js';

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_TRUNC, O_APPEND, O_SYNC, O_DIRECTORY, O_NOFOLLOW } = fs.constants;

/** store()'s flags ('w' replaces, 'a' appends, CREATE only creates) as open(2) flags. */
const STORE_FLAGS = new Map(
  /** @type {[string | number, number][]} */ ([
    ['w', O_WRONLY | O_CREAT | O_TRUNC],
    ['a', O_WRONLY | O_CREAT | O_APPEND],
    [CREATE, CREATE],
  ]),
);

/** open(2) flags of parseFlags()'s answer. */
function openFlags(access) {
  let flags = access.read && access.write ? O_RDWR : access.write ? O_WRONLY : O_RDONLY;
  if (access.create) flags |= O_CREAT;
  if (access.exclusive) flags |= O_EXCL;
  if (access.truncate) flags |= O_TRUNC;
  if (access.append) flags |= O_APPEND;
  if (access.sync) flags |= O_SYNC;
  return flags;
}

/** The addon's ERR_PATH_OUTSIDE_ROOT and ERR_FS_SPECIAL_FILE as ArenaCacheErrors; node:fs's errors as they are. */
function ourError(error, root) {
  if (error instanceof ArenaCacheError) return error;
  if (error?.code === codes.ERR_PATH_OUTSIDE_ROOT) return outside(error.relative, root);
  if (error?.code === codes.ERR_FS_SPECIAL_FILE) {
    return new ArenaCacheError(codes.ERR_FS_SPECIAL_FILE, `path ${describe(error.relative)} is ${error.kind}, not a regular file: CacheFS reads, writes and opens regular files only`);
  }
  return error;
}

// A CacheFS dropped without close() would keep its root's descriptor for the
// life of the thread. Collected, it has no call in flight (each holds it).
const rootsLeftOpen = new FinalizationRegistry((fd) => fs.close(fd, () => {}));

export class DiskBacking extends Root {
  /** A file system's stamps are coarser than its writes (see racy.js). */
  coarseTimes = true;
  #fd;
  /** Calls on the thread pool not answered yet: the root's descriptor stays open until they are. */
  #pending = 0;
  #closing = false;

  /** @param {string} root an existing directory */
  constructor(root) {
    requireNative('CacheFS over a directory (it resolves every path beneath the root on descriptors)');
    const real = fs.realpathSync(root);
    super(real);
    this.id = real;
    // O_NOFOLLOW: the real path names no link, unless one was swapped in since.
    this.#fd = fs.openSync(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    rootsLeftOpen.register(this, this.#fd, this);
    const fd = this.#fd;
    const translate = (error) => ourError(error, real);
    const now = (op, target, dest = '', flags = 0, mode = 0, data = undefined) => {
      this.#checkOpen();
      try {
        return rootFilesSync(op, fd, real, target, dest, flags, mode, data);
      } catch (error) {
        throw translate(error);
      }
    };
    const settled = () => {
      if (--this.#pending === 0 && this.#closing) this.#release();
    };
    const later = (op, target, dest = '', flags = 0, mode = 0, data = undefined) => {
      this.#checkOpen();
      const answer = rootFiles(op, fd, real, target, dest, flags, mode, data);
      this.#pending++;
      return answer.then(
        (value) => {
          settled();
          return value;
        },
        (error) => {
          settled();
          throw translate(error);
        },
      );
    };
    this.sync = operations(now);
    this.async = {
      ...operations(later),
      open: async (target, flags, mode) => new DescriptorHandle(await later(ROOT_OPEN, target, '', openFlags(parseFlags(flags)), mode)),
    };
  }

  /**
   * Closes the root's descriptor once the calls in flight are answered (its
   * number, reused by another open meanwhile, would lead them elsewhere).
   * Later calls fail with ERR_FS_CLOSED.
   */
  close() {
    if (this.#closing) return;
    this.#closing = true;
    if (this.#pending === 0) this.#release();
  }

  #release() {
    rootsLeftOpen.unregister(this);
    fs.closeSync(this.#fd);
    this.#fd = -1;
  }

  #checkOpen() {
    if (this.#closing) throw new ArenaCacheError(codes.ERR_FS_CLOSED, `the CacheFS of ${this.path} is closed: close() was called on it`);
  }
}

// The same table for both forms; `call` is rootFilesSync or rootFiles.
function operations(call) {
  return {
    stat: (target) => call(ROOT_STAT, target),
    load: (target) => call(ROOT_LOAD, target),
    readdir: (target) => call(ROOT_READDIR, target),
    store: (target, data, flag, mode) => call(ROOT_STORE, target, '', STORE_FLAGS.get(flag), mode, data),
    rewrite: (target, data, mode) => call(ROOT_REWRITE, target, '', 0, mode, data),
    readFile: (target) => pick(call(ROOT_LOAD, target), 'data'),
    mkdir: (target, { recursive, mode }) => call(ROOT_MKDIR, target, '', recursive ? ROOT_RECURSIVE : 0, mode),
    unlink: (target) => call(ROOT_UNLINK, target),
    rename: (from, to) => call(ROOT_RENAME, from, to),
    rm: (target, { recursive, force }) => call(ROOT_RM, target, '', (recursive ? ROOT_RECURSIVE : 0) | (force ? ROOT_FORCE : 0)),
  };
}

/** `result[name]`, for a result that may be a promise of it. */
function pick(result, name) {
  return result instanceof Promise ? result.then((value) => value[name]) : result[name];
}

const readAsync = promisify(fs.read);
const writeAsync = promisify(fs.write);
const ftruncateAsync = promisify(fs.ftruncate);
const fstatAsync = promisify(fs.fstat);

// A handle dropped without close() would keep its descriptor open for the
// life of the thread: close it when the handle is collected, as node:fs does.
const unclosed = new FinalizationRegistry((fd) => {
  try {
    closeRootDescriptor(fd);
  } catch {
    // Closed with its thread already.
  }
  process.emitWarning(`a CacheFS file handle (descriptor ${fd}) was garbage-collected without close(); close() it when done`, { code: 'ARENACACHE_HANDLE_LEAK' });
});

// Handles with a call on the thread pool. node:fs FileHandle holds itself
// while a call is in flight; so must these: collected under a queued call,
// a handle's finalizer would close its descriptor before the call runs,
// which would then fail with EBADF, or read or write another file that was
// given the same number meanwhile. (close() waits for the calls in flight:
// see CacheFileHandle#close.)
const calling = new Set();

/**
 * A descriptor opened beneath the root, with the node:fs FileHandle methods
 * CacheFileHandle uses. It is the addon's, not node:fs's: the addon closes
 * it (node:fs would warn about a descriptor it did not open, in a worker),
 * and closes it with the thread that opened it if close() never comes.
 */
class DescriptorHandle {
  #fd;
  /** Calls in flight. */
  #calls = 0;

  constructor(fd) {
    this.#fd = fd;
    unclosed.register(this, fd, this);
  }

  get fd() {
    return this.#fd;
  }

  read(buffer, offset, length, position) {
    return this.#held(readAsync(this.#fd, buffer, offset, length, position));
  }

  write(buffer, offset, length, position) {
    return this.#held(writeAsync(this.#fd, buffer, offset, length, position));
  }

  truncate(length) {
    return this.#held(ftruncateAsync(this.#fd, length));
  }

  stat() {
    return this.#held(fstatAsync(this.#fd));
  }

  async close() {
    if (this.#fd < 0) return;
    unclosed.unregister(this);
    const fd = this.#fd;
    this.#fd = -1;
    closeRootDescriptor(fd);
  }

  /** `answer`, with this handle kept from collection until it settles. */
  #held(answer) {
    if (this.#calls++ === 0) calling.add(this);
    const settled = () => {
      if (--this.#calls === 0) calling.delete(this);
    };
    answer.then(settled, settled);
    return answer;
  }
}

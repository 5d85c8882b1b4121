// Disk I/O for CacheFS, in both forms node:fs offers.
//
// Each CacheFS operation is written once, as a generator that yields the
// storage operations it needs (['stat', path], ...); runSync() performs them
// with a backing's synchronous operations and runAsync() with its
// asynchronous ones, so readFile() and readFileSync() share every line of
// their caching logic. DISK_SYNC and DISK_ASYNC are a directory's (node:fs
// and node:fs/promises); an InodeFS brings its own (see backing.js).

import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import { loadFile } from '../native.js';

/** Open flags that create a missing file and leave an existing one as it is. */
export const CREATE = fs.constants.O_WRONLY | fs.constants.O_CREAT;

/**
 * Reads a whole file with the stats before and after, so that a file
 * changing while it is read is not cached under either version.
 */
function loadSync(path) {
  const fd = fs.openSync(path, 'r');
  try {
    const before = fs.fstatSync(fd);
    const data = fs.readFileSync(fd);
    return { before, data, after: fs.fstatSync(fd) };
  } finally {
    fs.closeSync(fd);
  }
}

async function loadAsync(path) {
  const handle = await fsp.open(path, 'r');
  try {
    const before = await handle.stat();
    const data = await handle.readFile();
    return { before, data, after: await handle.stat() };
  } finally {
    await handle.close();
  }
}

/** Writes all of `data` to `fd`, at `position` (null: the descriptor's position). */
function writeAllSync(fd, data, position) {
  for (let done = 0; done < data.length; ) done += fs.writeSync(fd, data, done, data.length - done, position === null ? null : position + done);
}

/**
 * Writes `data` to `path` opened with `flag` ('w' replaces, 'a' appends;
 * CREATE with no data only creates a missing file) and returns the
 * descriptor's stats right after the write: the version this write
 * produced, without another trip to the disk by path.
 */
function storeSync(path, data, flag, mode) {
  const fd = fs.openSync(path, flag, mode);
  try {
    writeAllSync(fd, data, null);
    return fs.fstatSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Makes `data` the whole contents of `path` (created with `mode` if
 * missing), in place: written first, then cut to size, so a failure leaves
 * old bytes past the new end, never a file shorter than both versions.
 * Returns its stats after the write.
 */
function rewriteSync(path, data, mode) {
  const fd = fs.openSync(path, CREATE, mode);
  try {
    writeAllSync(fd, data, 0);
    fs.ftruncateSync(fd, data.length);
    return fs.fstatSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

async function storeAsync(path, data, flag, mode) {
  const handle = await fsp.open(path, flag, mode);
  try {
    await handle.writeFile(data);
    // A synchronous fstat of an open descriptor takes a microsecond; through
    // the thread pool it would cost a round trip as long as the write's.
    return fs.fstatSync(handle.fd);
  } finally {
    await handle.close();
  }
}

export const DISK_SYNC = {
  stat: (path) => fs.statSync(path),
  load: loadSync,
  readdir: (path) => fs.readdirSync(path),
  store: storeSync,
  mkdir: (path, options) => fs.mkdirSync(path, options),
  unlink: (path) => fs.unlinkSync(path),
  rename: (from, to) => fs.renameSync(from, to),
  rm: (path, options) => fs.rmSync(path, options),
  rewrite: rewriteSync,
  readFile: (path) => fs.readFileSync(path),
};

export const DISK_ASYNC = {
  stat: (path) => fsp.stat(path),
  // The addon does the five calls in one trip to the thread pool.
  load: loadFile ?? loadAsync,
  readdir: (path) => fsp.readdir(path),
  store: storeAsync,
  mkdir: (path, options) => fsp.mkdir(path, options),
  unlink: (path) => fsp.unlink(path),
  rename: (from, to) => fsp.rename(from, to),
  rm: (path, options) => fsp.rm(path, options),
  open: (path, flags, mode) => fsp.open(path, flags, mode),
};

/** Runs an operation's generator with the synchronous operations `ops`. */
export function runSync(flow, ops) {
  let step = flow.next();
  while (!step.done) {
    const [name, ...args] = step.value;
    let result;
    try {
      result = ops[name](...args);
    } catch (error) {
      step = flow.throw(error);
      continue;
    }
    step = flow.next(result);
  }
  return step.value;
}

/** Runs an operation's generator with the asynchronous operations `ops`. */
export async function runAsync(flow, ops) {
  let step = flow.next();
  while (!step.done) {
    const [name, ...args] = step.value;
    let result;
    try {
      result = await ops[name](...args);
    } catch (error) {
      step = flow.throw(error);
      continue;
    }
    step = flow.next(result);
  }
  return step.value;
}

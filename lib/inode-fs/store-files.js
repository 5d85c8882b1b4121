// The files of an InodeFS store: the lmdb file at its path, and lmdb's lock
// file beside it (path + "-lock"). Between them they hold every file's
// content and metadata, and lmdb writes to both, so they get the policy of
// arena files (lib/arena/common/file.js): created with exactly `mode` (0o600 by
// default; the umask does not apply), never through a symbolic link, and
// refused when they exist but another user owns them or others may write to
// them. lmdb opens them by path and takes no descriptor, and left to itself
// would create them 0o664 less the umask and follow a link planted at
// either path (writing its lock table into the file the link names). So
// they are judged (or made) here first, without following links, and
// checked again once lmdb has opened them: the same files must be there.
// Someone who may rename entries in the store's directory could still swap
// a file for a link while lmdb opens it and back again: keep stores in a
// directory only their owner can write to (or a sticky one such as /tmp,
// where only a file's owner may rename it).

import { closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync } from 'node:fs';
import { ArenaCacheError, codes } from '../errors.js';
import { FOREIGN_READ_BITS, FOREIGN_WRITE_BITS } from '../file-mode.js';
import { storeError } from './store-errors.js';

const { O_RDWR, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

/** lmdb's lock file for the store at `path` (its naming without a subdirectory). */
export function lockFileOf(path) {
  return `${path}-lock`;
}

/** How messages about the store at `path` name `file`. */
function subject(path, file) {
  return file === path ? 'it' : `its lock file ${file}`;
}

/**
 * Readies the files of the store at `path` for lmdb: each existing one is
 * judged (all of them before any is created, so a refused store gets no new
 * file), each missing one created with exactly `mode`. Returns `identities`
 * for checkSameFiles() after lmdb has opened them, and whether the store
 * file is new (with a `mode` others may read, that warns: see warnReadable).
 */
export function prepareStoreFiles(path, mode) {
  const files = [path, lockFileOf(path)];
  const identities = files.map((file) => judge(path, file));
  let created = false;
  for (const [index, file] of files.entries()) {
    if (identities[index] !== null) continue;
    const made = create(path, file, mode);
    if (made !== null && index === 0) created = true;
    // Created by another opener meanwhile (O_EXCL): judged as any existing file.
    identities[index] = made ?? judge(path, file);
    if (identities[index] === null) throw replaced(path, file);
  }
  return { identities, created };
}

/** The store's files must still be the ones prepareStoreFiles() judged or made: lmdb opened them by path. */
export function checkSameFiles(path, identities) {
  for (const [index, file] of [path, lockFileOf(path)].entries()) {
    const now = judge(path, file);
    const then = identities[index];
    if (now === null || now.dev !== then.dev || now.ino !== then.ino) throw replaced(path, file);
  }
}

/** Someone else changed `file` between two looks at it. */
function replaced(path, file) {
  return storeError(path, `${subject(path, file)} was replaced while it was being opened; open it again`);
}

/** The warning of a new store whose `mode` lets others read it (accepted: reading changes nothing they do not own). */
export function warnReadable(path, mode) {
  if ((mode & FOREIGN_READ_BITS) === 0) return;
  process.emitWarning(
    `InodeFS store ${path} was created with mode 0o${mode.toString(8)}, which lets users other than its owner read the files and metadata it holds; use mode 0o600 unless they must`,
    { code: 'ARENACACHE_INODEFS_READABLE' },
  );
}

/**
 * { dev, ino } of existing store file `file`, or null if there is none.
 * Refuses a link (not followed), anything but a regular file, a file of
 * another user, and one others may write to: they could change what this
 * process reads, or what lmdb takes for its lock table.
 */
function judge(path, file) {
  let stats;
  try {
    stats = lstatSync(file);
  } catch (cause) {
    if (cause.code === 'ENOENT') return null;
    throw storeError(path, `${subject(path, file)} cannot be examined (${cause.message})`, cause);
  }
  if (stats.isSymbolicLink()) throw storeError(path, `${subject(path, file)} is a symbolic link; store files are opened without following links`);
  if (!stats.isFile()) throw storeError(path, `${subject(path, file)} is not a regular file`);
  const euid = process.geteuid();
  if (stats.uid !== euid) {
    throw new ArenaCacheError(
      codes.ERR_INODEFS_PERMISSIONS,
      `InodeFS store file ${file} belongs to user ${stats.uid}, not to this process's user ${euid}; another user could change what this process reads`,
    );
  }
  if ((stats.mode & FOREIGN_WRITE_BITS) !== 0) {
    throw new ArenaCacheError(
      codes.ERR_INODEFS_PERMISSIONS,
      `InodeFS store file ${file} has mode 0${(stats.mode & 0o7777).toString(8)}, which lets other users write to it; chmod it to 600`,
    );
  }
  return { dev: stats.dev, ino: stats.ino };
}

/** Creates `file` with exactly `mode` (before lmdb writes a byte to it): { dev, ino }, or null if it exists. */
function create(path, file, mode) {
  let fd;
  try {
    // O_EXCL creates through no link, and over no file that appeared since it was judged.
    fd = openSync(file, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  } catch (cause) {
    if (cause.code === 'EEXIST') return null;
    throw storeError(path, `${subject(path, file)} cannot be created (${cause.message})`, cause);
  }
  try {
    // The umask may have taken bits off `mode`: the mode asked for is set exactly.
    fchmodSync(fd, mode);
    const { dev, ino } = fstatSync(fd);
    return { dev, ino };
  } finally {
    closeSync(fd);
  }
}

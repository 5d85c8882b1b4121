// The options every open(path, options) of an arena file shares (a
// SharedCache's and a BlockStore's): one defaults object, and their checks.

import { checkBoolean, checkInteger, checkObject, rejectUnknown } from '../../validate.js';
import { FOREIGN_WRITE_BITS } from '../../file-mode.js';
import { MAX_MEMORY_BYTES, MIN_MEMORY_BYTES } from './layout.js';

/** The file options of open(path, options), with their defaults. */
export const FILE_OPTION_DEFAULTS = Object.freeze({
  /** Replace the arena the file holds with a new, empty one (needs memoryBytes, and no other process using it); never a file that is not an arena. */
  reset: false,
  /** File mode of a new arena file. */
  mode: 0o600,
  /** Fault every page in when mapping, so first writes do not pay for it. */
  populate: true,
});

/** How messages word the range of memoryBytes (of a SharedCache or a BlockStore). */
export const MEMORY_BYTES_RANGE = Object.freeze({ from: `1 MiB (${MIN_MEMORY_BYTES})`, to: `1 TiB (${MAX_MEMORY_BYTES})` });

/**
 * Validates the mode a new arena file is created with: exactly what open()
 * accepts of an existing file (owned, not writable by group or others; see
 * arena/file.js), so that every file it creates can be opened again. The
 * files of an InodeFS store follow the same rule (`files` names them).
 */
export function checkArenaFileMode(mode, name, files = 'the arena file') {
  checkInteger(mode, name, 0, 0o777, 'a file mode from 0 to 0o777, such as 0o600');
  if ((mode & 0o600) !== 0o600) {
    throw new RangeError(`${name} must let the owner read and write (0o600 or wider) (got 0o${mode.toString(8)})`);
  }
  if ((mode & FOREIGN_WRITE_BITS) !== 0) {
    throw new RangeError(`${name} must not let group or others write to ${files}, which open() would then refuse (got 0o${mode.toString(8)}); use 0o600`);
  }
}

/**
 * The options every open(path, options) shares (reset, mode, populate),
 * checked, and the others (`defined`: those not undefined) for the caller.
 * @param {object} known the caller's defaults, for unknown-option errors
 */
export function splitFileOptions(options, known) {
  const given = options ?? {};
  checkObject(given, 'options');
  rejectUnknown(given, known, 'options');
  const { reset = FILE_OPTION_DEFAULTS.reset, mode = FILE_OPTION_DEFAULTS.mode, populate = FILE_OPTION_DEFAULTS.populate, ...rest } = given;
  checkBoolean(reset, 'options.reset');
  checkBoolean(populate, 'options.populate');
  checkArenaFileMode(mode, 'options.mode');
  const defined = Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined));
  if (reset && defined.memoryBytes === undefined) {
    throw new TypeError('options.memoryBytes is required with options.reset: true (the size of the new arena)');
  }
  return { reset, mode, populate, defined };
}

// The rule for the arguments of the native addon: each is checked once per
// boundary. The addon checks every argument of every export itself
// (src/native/arguments.h): it is the crash guard, for whoever calls the
// binary, with its own errors ("fileOpen: argument 2 (createMode) must be
// an integer from 0 to 4095 (got -1)"). So the wrappers in this directory
// are thin and pass arguments straight through, except where a check in
// JavaScript is more than that guard: it gives the message the package's
// callers show users and the tests pin (the snapshot engine's paths, job
// columns and options in file-jobs.js, tree-scan.js, dir-exchange.js and
// fs-sync.js; CacheFS's calls beneath a root in root-files.js), or the
// wrapper has an answer without the addon (thread-identity.js). Those
// checks use the shared checkers of lib/validate.js (or the one below), and
// the addon keeps only its guard for them. The file, lock and mapping calls
// (mapped-file.js, futex.js, truncation-guard.js) take values the package
// computed itself (arena files and their locks, from options checked where
// the user gave them; the lock files of snapshots and InodeFS), and are left
// to the guard.

import { describe } from '../errors.js';

/** A file descriptor: an integer from 0 to 2^31 - 1 (RangeError otherwise, whatever the type). */
export function checkFd(fd) {
  if (!Number.isInteger(fd) || fd < 0 || fd > 0x7fffffff) throw new RangeError(`fd must be a file descriptor (got ${describe(fd)})`);
}

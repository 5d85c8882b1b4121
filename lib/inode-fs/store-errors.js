// Errors of an InodeFS store: one that cannot be opened, or has lost content.
// (Errors of calls, shaped as node:fs shapes them, are lib/fs-compat/fs-errors.js's.)

import { ArenaCacheError, codes } from '../errors.js';

/** The store at `path` cannot be opened as an InodeFS store, for the reason `message` gives. */
export function storeError(path, message, cause) {
  return new ArenaCacheError(codes.ERR_INODEFS_STORE, `${path} cannot be opened as an InodeFS store: ${message}`, cause === undefined ? undefined : { cause });
}

/** A file whose blobs are missing from the store: damage (fsck() says which). */
export function missingContent(path) {
  return new ArenaCacheError(codes.ERR_INODEFS_STORE, `the content of ${path} is missing from the store; run fsck()`);
}

// Snapshot ids, tags and worktree names: what users may pass and what may
// become part of a path inside the repository.
import { randomBytes } from 'node:crypto';
import { describe } from '../errors.js';

/** `20261122T101530123Z-3f9a1c`: sorts by creation time, then by chance. */
export const ID_PATTERN = /^\d{8}T\d{9}Z-[0-9a-f]{6}$/;
const SHORT_PATTERN = /^[0-9a-f]{6}$/;
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function newSnapshotId(now = new Date()) {
  const stamp = now.toISOString().replace(/[-:.]/g, ''); // 20261122T101530123Z
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

export function isSnapshotId(value) {
  return typeof value === 'string' && ID_PATTERN.test(value);
}

export function isShortId(value) {
  return SHORT_PATTERN.test(value);
}

/** The six hex digits users may type instead of a whole id. */
export function shortId(id) {
  return id.slice(-6);
}

/**
 * A reference to a snapshot as users write it: a whole id, its last six hex
 * digits, a tag, or "head". Never a path: it is only ever matched against
 * the ids in the repository.
 */
export function checkReference(value, name = 'id') {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string (got ${describe(value)})`);
  if (!isSnapshotId(value) && !NAME_PATTERN.test(value)) {
    throw new RangeError(`${name} must be a snapshot id, its last 6 hex digits, a tag or "head" (got ${describe(value)})`);
  }
}

export function isName(value) {
  return typeof value === 'string' && NAME_PATTERN.test(value);
}

/** Tags and worktree names: letters, digits, '.', '_' and '-', at most 64, not starting with a dot. */
export function checkName(value, name) {
  if (typeof value !== 'string') throw new TypeError(`${name} must be a string (got ${describe(value)})`);
  if (!NAME_PATTERN.test(value)) {
    throw new RangeError(`${name} must be 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit (got ${describe(value)})`);
  }
}

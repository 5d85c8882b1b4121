// A real reflink filesystem for tests: an XFS image made with reflink=1 and
// loop-mounted (root and xfsprogs needed; .ci/run installs xfsprogs). The
// test is skipped, saying why, only where the machine cannot do this.
import { loopMount, run } from './loop-mount.js';

/**
 * Mounts a fresh 512 MiB XFS (reflink=1) for test `t` and returns its mount
 * point, unmounted and deleted after the test; or null after t.skip(reason).
 */
export function reflinkMount(t, size = '512M') {
  return loopMount(t, { name: 'xfs', size, mkfs: ['mkfs.xfs', '-q', '-m', 'reflink=1'], what: 'an XFS image with reflink=1', aptPackage: 'xfsprogs' });
}

/** Whether `file`'s extents are marked shared (filefrag -v prints "shared" for reflinked extents). */
export function sharesExtents(file) {
  return /\bshared\b/.test(run('filefrag', ['-v', file]));
}

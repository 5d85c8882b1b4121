// A file system whose timestamps tick once a second, for tests of CacheFS's
// racily clean rule: an ext4 image made with 128-byte inodes (no room for
// the nanosecond fields, so the kernel stamps whole seconds, as on ext2/ext3)
// and loop-mounted (root and e2fsprogs needed). The test is skipped, saying
// why, only where the machine cannot do this.
import { rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { loopMount } from './loop-mount.js';

/**
 * Mounts a fresh ext4 with 1 s timestamps for test `t` and returns its mount
 * point, unmounted and deleted after the test; or null after t.skip(reason).
 */
export function coarseTimesMount(t, size = '64M') {
  const what = 'an ext4 image with 128-byte inodes (1 s timestamps)';
  const mountPoint = loopMount(t, { name: 'coarse', size, mkfs: ['mkfs.ext4', '-q', '-F', '-I', '128'], what, aptPackage: 'e2fsprogs' });
  if (mountPoint === null) return null;
  // The premise of the tests: every stamp is a whole second.
  const probe = path.join(mountPoint, '.probe');
  writeFileSync(probe, 'x');
  const { ctimeNs, mtimeNs } = statSync(probe, { bigint: true });
  rmSync(probe);
  if (ctimeNs % 1_000_000_000n !== 0n || mtimeNs % 1_000_000_000n !== 0n) {
    t.skip(`the ext4 image mounted here stamps sub-second times (ctime ${ctimeNs} ns): no 1 s timestamps to test with`);
    return null;
  }
  return mountPoint;
}

// A file system whose timestamps tick once a second, for tests of CacheFS's
// racily clean rule: an ext4 image made with 128-byte inodes (no room for
// the nanosecond fields, so the kernel stamps whole seconds, as on ext2/ext3)
// and loop-mounted (root and e2fsprogs needed). The test is skipped, saying
// why, only where the machine cannot do this.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function run(command, args) {
  return execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

/**
 * Mounts a fresh ext4 with 1 s timestamps for test `t` and returns its mount
 * point, unmounted and deleted after the test; or null after t.skip(reason).
 */
export function coarseTimesMount(t, size = '64M') {
  if (process.getuid?.() !== 0) {
    t.skip('needs root to loop-mount an ext4 image with 128-byte inodes (1 s timestamps)');
    return null;
  }
  const base = mkdtempSync(path.join(os.tmpdir(), 'arenacache-coarse-'));
  const image = path.join(base, 'ext4.img');
  const mountPoint = path.join(base, 'mnt');
  mkdirSync(mountPoint);
  try {
    run('truncate', ['-s', size, image]);
    run('mkfs.ext4', ['-q', '-F', '-I', '128', image]);
    run('mount', ['-o', 'loop', image, mountPoint]);
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    const reason = error.code === 'ENOENT' ? `${error.path} is not installed (apt-get install e2fsprogs)` : String(error.stderr || error.message).trim();
    t.skip(`cannot loop-mount an ext4 with 1 s timestamps on this machine: ${reason}`);
    return null;
  }
  t.after(() => {
    try {
      run('umount', [mountPoint]);
    } catch {
      run('umount', ['-l', mountPoint]);
    }
    rmSync(base, { recursive: true, force: true });
  });
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

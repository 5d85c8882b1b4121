// A real reflink filesystem for tests: an XFS image made with reflink=1 and
// loop-mounted (root and xfsprogs needed; .ci/run installs xfsprogs). The
// test is skipped, saying why, only where the machine cannot do this.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function run(command, args) {
  return execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

/**
 * Mounts a fresh 512 MiB XFS (reflink=1) for test `t` and returns its mount
 * point, unmounted and deleted after the test; or null after t.skip(reason).
 */
export function reflinkMount(t, size = '512M') {
  if (process.getuid?.() !== 0) {
    t.skip('needs root to loop-mount an XFS image with reflink=1');
    return null;
  }
  const base = mkdtempSync(path.join(os.tmpdir(), 'arenacache-xfs-'));
  const image = path.join(base, 'xfs.img');
  const mountPoint = path.join(base, 'mnt');
  mkdirSync(mountPoint);
  try {
    run('truncate', ['-s', size, image]);
    run('mkfs.xfs', ['-q', '-m', 'reflink=1', image]);
    run('mount', ['-o', 'loop', image, mountPoint]);
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    const reason = error.code === 'ENOENT' ? `${error.path} is not installed (apt-get install xfsprogs)` : String(error.stderr || error.message).trim();
    t.skip(`cannot make a reflink XFS on this machine: ${reason}`);
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
  return mountPoint;
}

/** Whether `file`'s extents are marked shared (filefrag -v prints "shared" for reflinked extents). */
export function sharesExtents(file) {
  return /\bshared\b/.test(run('filefrag', ['-v', file]));
}

// A file system image made for one test and loop-mounted (root and the
// image's mkfs needed), unmounted and deleted after the test: the common
// part of the XFS (reflink) and coarse-timestamp ext4 helpers. A test is
// skipped, saying why, only where the machine cannot do this.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function run(command, args) {
  return execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
}

/**
 * Makes an image of `size` with `mkfs` ([command, ...args], the image's
 * path appended), loop-mounts it for test `t` and returns its mount point;
 * or null after t.skip(). `what` names the file system in skip reasons and
 * `aptPackage` the package that has its mkfs.
 * @param {import('node:test').TestContext} t
 * @param {{ name: string, size: string, mkfs: string[], what: string, aptPackage: string }} image
 */
export function loopMount(t, { name, size, mkfs, what, aptPackage }) {
  if (process.getuid?.() !== 0) {
    t.skip(`needs root to loop-mount ${what}`);
    return null;
  }
  const base = mkdtempSync(path.join(os.tmpdir(), `arenacache-${name}-`));
  const image = path.join(base, `${name}.img`);
  const mountPoint = path.join(base, 'mnt');
  mkdirSync(mountPoint);
  try {
    run('truncate', ['-s', size, image]);
    run(mkfs[0], [...mkfs.slice(1), image]);
    run('mount', ['-o', 'loop', image, mountPoint]);
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    const reason = error.code === 'ENOENT' ? `${error.path} is not installed (apt-get install ${aptPackage})` : String(error.stderr || error.message).trim();
    t.skip(`cannot loop-mount ${what} on this machine: ${reason}`);
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

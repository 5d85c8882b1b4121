// Whether tests can start processes in a PID namespace of their own
// (`unshare -p -f --mount-proc`, as root), as containers sharing /dev/shm do.
import { execFileSync } from 'node:child_process';
import { nativeAvailable } from '../../lib/native/addon.js';

/** false when they can; otherwise the reason to skip. */
export function unshareMissing() {
  if (!nativeAvailable) return 'native addon unavailable';
  if (process.getuid?.() !== 0) return 'needs root (unshare -p)';
  try {
    execFileSync('unshare', ['-p', '-f', '--mount-proc', 'true'], { stdio: 'ignore' });
    return false;
  } catch (error) {
    return `unshare -p -f --mount-proc does not work here (${error.message.split('\n')[0]})`;
  }
}

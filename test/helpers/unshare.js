// Processes in PID namespaces of their own (`unshare -p -f --mount-proc`,
// as root), as containers sharing /dev/shm run them: node is pid 1 in each.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { nativeAvailable } from '../../lib/native/addon.js';

/** false when tests can start such processes; otherwise the reason to skip. */
export function unshareMissing() {
  if (!nativeAvailable) return 'native addon unavailable';
  if (process.getuid?.() !== 0) return 'needs root (unshare -p)';
  try {
    execFileSync('unshare', ['-p', '-f', '--mount-proc', '--kill-child', 'true'], { stdio: 'ignore' });
    return false;
  } catch (error) {
    return `unshare -p -f --mount-proc --kill-child does not work here (${error.message.split('\n')[0]})`;
  }
}

/**
 * Starts `node script argument` as pid 1 of a new PID namespace. Each JSON
 * line it prints on stdout arrives through next(); innerPid() resolves to its
 * pid as this namespace numbers it (to stop or kill it); kill() ends it (unshare
 * --kill-child passes SIGKILL on) and resolves once unshare has exited.
 */
export function startInNamespace(script, argument) {
  const child = spawn('unshare', ['-p', '-f', '--mount-proc', '--kill-child', process.execPath, script, JSON.stringify(argument)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    child,
    exited,
    /** The next JSON line it prints; rejects when it exits first. */
    async next() {
      const { value, done } = await lines.next();
      if (done) throw new Error(`the process in a new PID namespace exited before reporting (${JSON.stringify(argument)})`);
      const message = JSON.parse(value);
      if (message.error !== undefined) throw new Error(`the process in a new PID namespace failed: ${message.error}`);
      return message;
    },
    /**
     * Its pid as this namespace numbers it, once unshare has forked it (waits
     * up to 10 s). Never 0 or 1: process.kill(0, ...) would signal this test's
     * own process group, and a SIGSTOP there stops the test runner for good.
     */
    async innerPid() {
      const children = `/proc/${child.pid}/task/${child.pid}/children`;
      for (const started = performance.now(); ; await new Promise((resolve) => setTimeout(resolve, 5))) {
        let pid = Number.NaN;
        try {
          pid = Number(readFileSync(children, 'utf8').trim().split(/\s+/)[0] || Number.NaN);
        } catch {
          // unshare has exited, or not yet started.
        }
        if (Number.isSafeInteger(pid) && pid > 1) return pid;
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`unshare exited before its child could be named (${JSON.stringify(argument)})`);
        if (performance.now() - started > 10_000) throw new Error(`unshare did not start its child within 10 s (${JSON.stringify(argument)})`);
      }
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

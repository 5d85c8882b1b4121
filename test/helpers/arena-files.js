// Arena files for tests: unique paths in /dev/shm (tmpfs, like production
// use) that are removed when the test ends, and child processes on them.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';

const processFile = new URL('../fixtures/file-process.js', import.meta.url);
let counter = 0;

/** A fresh arena file path, removed after the test `t`. */
export function arenaPath(t, name = 'cache') {
  const path = `/dev/shm/arenacache-test-${process.pid}-${++counter}-${name}.arena`;
  t.after(() => rmSync(path, { force: true, recursive: true }));
  return path;
}

/** Forks test/fixtures/file-process.js in `mode`; resolves once it sent its first message. */
export async function startProcess(settings) {
  const child = fork(processFile, [JSON.stringify(settings)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [first] = await Promise.race([
    once(child, 'message'),
    once(child, 'exit').then(([code, signal]) => {
      throw new Error(`${settings.mode} process exited (${code ?? signal}) before reporting`);
    }),
  ]);
  return { child, first };
}

/** Runs a child in `mode` to completion and returns its first message. */
export async function runProcess(settings) {
  const { child, first } = await startProcess(settings);
  await once(child, 'exit');
  return first;
}

/** Sends 'stop' and resolves with the child's final report. */
export async function stopProcess(child) {
  const report = once(child, 'message');
  child.send('stop');
  const [message] = await report;
  await once(child, 'exit');
  return message;
}

/** Kills with SIGKILL and waits for the exit. */
export async function killProcess(child) {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

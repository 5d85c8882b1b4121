// Arena files for tests: unique paths in /dev/shm (tmpfs, like production
// use) that are removed when the test ends, and child processes on them.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { H32_CLEAN_MARK, H64_OPENED_INO } from '../../lib/arena/common/layout.js';

const processFile = new URL('../fixtures/file-process.js', import.meta.url);
let counter = 0;

/** The restart record's bytes: the clean mark, then the boot, device and inode the file was last opened under. */
const RECORD_FROM = H32_CLEAN_MARK * 4;
const RECORD_TO = H64_OPENED_INO * 8 + 8;

/**
 * Makes a closed arena file (at a path, or its bytes in a Buffer) look as
 * a machine crash leaves it: no clean mark, and last opened under no boot
 * this machine has (see lib/arena/entries/restart.js). Its next sole
 * opener checks every shard: what a test of damage from a crash, or from
 * flipped bytes, needs.
 * @param {string | Buffer} file
 */
export function forgetCleanClose(file) {
  const zeros = Buffer.alloc(RECORD_TO - RECORD_FROM);
  if (Buffer.isBuffer(file)) {
    zeros.copy(file, RECORD_FROM);
    return;
  }
  const fd = openSync(file, 'r+');
  try {
    writeSync(fd, zeros, 0, zeros.length, RECORD_FROM);
  } finally {
    closeSync(fd);
  }
}

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

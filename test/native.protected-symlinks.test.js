// fs.protected_symlinks: a link in a sticky, world-writable directory is
// followed only by its owner or when it belongs to the directory's owner.
// The kernel applies it to openat2; the component walk follows links
// itself and must apply it too. Needs root (to own a link as another user
// and to turn the sysctl on for the test, as it may be off).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync, writeFileSync } from 'node:fs';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { nativeAvailable } from '../lib/native/addon.js';

const SYSCTL = '/proc/sys/fs/protected_symlinks';
const child = fileURLToPath(new URL('./fixtures/protected-symlinks-child.js', import.meta.url));

function why() {
  if (!nativeAvailable) return 'the native addon is not loaded';
  if (process.getuid() !== 0) return 'needs root: to own a link as another user and to set fs.protected_symlinks';
  try {
    accessSync(SYSCTL, constants.W_OK);
  } catch {
    return `${SYSCTL} cannot be written here`;
  }
  return false;
}

test('a link another user owns in a sticky world-writable directory is not followed, by openat2 or the walk', { skip: why() }, () => {
  const before = readFileSync(SYSCTL, 'utf8').trim();
  writeFileSync(SYSCTL, '1');
  try {
    for (const openat2 of ['on', 'off']) {
      const { NODE_TEST_CONTEXT, ...env } = process.env;
      const output = execFileSync(process.execPath, [child], { env: { ...env, ARENACACHE_OPENAT2: openat2 }, encoding: 'utf8' });
      assert.deepEqual(JSON.parse(output), { foreign: 'EACCES', own: 'target' }, `ARENACACHE_OPENAT2=${openat2}`);
    }
  } finally {
    writeFileSync(SYSCTL, before);
  }
});

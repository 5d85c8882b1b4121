// Temporary directory trees for the CacheFS tests, removed after the test.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export function tempDir(t, name = 'tree') {
  const dir = mkdtempSync(path.join(os.tmpdir(), `arenacache-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every file and directory below `dir`: { 'a/b.txt': <hex of contents>, 'a/': 'dir' }. */
export function snapshotTree(dir, prefix = '') {
  const out = {};
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    const key = prefix + name;
    if (statSync(full).isDirectory()) {
      out[`${key}/`] = 'dir';
      Object.assign(out, snapshotTree(full, `${key}/`));
    } else {
      out[key] = readFileSync(full).toString('hex');
    }
  }
  return out;
}

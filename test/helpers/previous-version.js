// The library as an earlier commit had it, for tests of files that two
// versions share (an upgrade, or old and new processes on one file): lib/
// and package.json of that commit taken from this checkout's git history
// into a temporary directory, with this checkout's node_modules, build/ and
// prebuilds/ linked in (the native addon is the same). Where git or the
// commit is missing (an export without history, a shallow clone), the
// reason to skip instead. The directory is removed when the process exits.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const extracted = new Map();

/** { root } of the library at commit `rev` (its lib/index.js is root/lib/index.js), or { skip: reason }. */
export function previousVersion(rev) {
  const override = process.env.ARENACACHE_PREVIOUS_LIB;
  if (override) return existsSync(path.join(override, 'lib/index.js')) ? { root: override } : { skip: `ARENACACHE_PREVIOUS_LIB=${override} holds no lib/index.js` };
  if (extracted.has(rev)) return extracted.get(rev);
  let result;
  try {
    execFileSync('git', ['-C', repo, 'cat-file', '-e', `${rev}^{commit}`], { stdio: 'ignore' });
    const root = mkdtempSync(path.join(os.tmpdir(), `arenacache-${rev.slice(0, 7)}-`));
    process.on('exit', () => rmSync(root, { recursive: true, force: true }));
    const archive = execFileSync('git', ['-C', repo, 'archive', rev, 'lib', 'package.json'], { maxBuffer: 256 * 2 ** 20 });
    execFileSync('tar', ['-x', '-C', root], { input: archive });
    for (const name of ['node_modules', 'build', 'prebuilds']) {
      if (existsSync(path.join(repo, name))) symlinkSync(path.join(repo, name), path.join(root, name));
    }
    result = { root };
  } catch (error) {
    result = { skip: `the library at ${rev} cannot be taken from git here (${error.message.split('\n')[0]})` };
  }
  extracted.set(rev, result);
  return result;
}

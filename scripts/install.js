// npm install hook: make sure the native addon is loadable.
//
// 1. A prebuilt binary (prebuilds/<platform>-<arch>/) or an existing local
//    build that loads: nothing to do.
// 2. Otherwise build it with node-gyp. Node's headers are taken from the
//    local installation when they are there, so no download is needed.
// 3. If the build fails, say why. The in-memory cache works without the
//    addon, so this is a warning, unless ARENACACHE_REQUIRE_NATIVE=1 (CI),
//    where it fails the install.

import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { localNodeDir } from './node-headers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const required = process.env.ARENACACHE_REQUIRE_NATIVE === '1';

// Asks the runtime loader itself (in a fresh process, so that a binary built
// just now is seen), so install and runtime agree on what "loads" means:
// the right Node ABI and the addon ABI that lib/native/addon.js expects.
function loads() {
  const probe = `import(${JSON.stringify(new URL('../lib/native/addon.js', import.meta.url).href)})` +
    '.then((n) => process.exit(n.nativeAvailable ? 0 : 1), () => process.exit(1))';
  const env = { ...process.env };
  delete env.ARENACACHE_NATIVE;
  return spawnSync(process.execPath, ['--input-type=module', '-e', probe], { env, stdio: 'ignore' }).status === 0;
}

function tellTerminal(text) {
  try {
    const fd = openSync('/dev/tty', 'w');
    try {
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
  } catch {
    // No controlling terminal (CI, a service): stderr above is all there is.
  }
}

function nodeGypCommand() {
  const local = path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(local)) return [process.execPath, local];
  if (process.env.npm_config_node_gyp) return [process.execPath, process.env.npm_config_node_gyp];
  return ['node-gyp'];
}

if (process.env.ARENACACHE_SKIP_BUILD === '1') {
  console.log('arenacache: ARENACACHE_SKIP_BUILD=1, not building the native addon');
  process.exit(0);
}
if (!process.argv.includes('--force') && loads()) {
  console.log('arenacache: native addon present');
  process.exit(0);
}
const [command, ...prefixArgs] = nodeGypCommand();
const args = [...prefixArgs, 'rebuild'];
const nodeDir = localNodeDir();
const buildEnv = { ...process.env };
// A configured nodedir for another Node version would give a binary that
// does not load; without one that matches, node-gyp fetches the headers.
delete buildEnv.npm_config_nodedir;
if (nodeDir) args.push(`--nodedir=${nodeDir}`);
console.log(`arenacache: building the native addon (node-gyp ${args.slice(prefixArgs.length).join(' ')})`);
const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: buildEnv });
if (result.status === 0 && loads()) {
  console.log('arenacache: native addon built');
  process.exit(0);
}
const reason = result.error ? result.error.message : `node-gyp exited with status ${result.status}`;
const message =
  `arenacache: no prebuilt binary fits Node ${process.version} (ABI ${process.versions.modules}) on ` +
  `${process.platform}-${process.arch}, and the native addon could not be built (${reason}).\n` +
  '  Building needs python3, make and a C++ compiler (Debian: apt-get install python3 make g++).\n' +
  '  The in-memory SharedCache works without it; file-backed arenas, BlockStore files,\n' +
  '  CacheFS, workspace snapshots and fast dead-thread detection need it.\n' +
  '  Retry with: npm rebuild arenacache\n';
process.stderr.write(message);
// npm shows a dependency's install output only when the script fails; this
// one succeeds (the in-memory cache works), so tell the terminal directly.
if (!required) tellTerminal(message);
process.exit(required ? 1 : 0);

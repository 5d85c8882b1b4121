// npm install hook: make sure the native addon is loadable.
//
// 1. A prebuilt binary (prebuilds/<platform>-<arch>/) or an existing local
//    build that loads: nothing to do.
// 2. Otherwise build it with node-gyp. Node's headers are taken from the
//    local installation when they are there, so no download is needed.
// 3. If the build fails, say why. The in-memory cache works without the
//    addon, so this is a warning, unless ARENACACHE_REQUIRE_NATIVE=1 (CI),
//    where it fails the install.
//
// Whatever happens is recorded in build/arenacache-install.json (outcome,
// reason, the Node it ran with, the end of node-gyp's output), because npm
// shows nothing of a successful install script's output unless run with
// --foreground-scripts: lib/native/addon.js quotes the record in
// ERR_NATIVE_UNAVAILABLE, and `npx arenacache doctor` prints it and exits
// with 3, for a CI step or a Dockerfile RUN line. A missing record tells
// them the script never ran (npm 11 without approval, --ignore-scripts).
// The warning itself is also written to the stream npm's own output goes
// to (the CI log, the Docker build output, the terminal), found through
// /proc: see tellReader().

import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readFileSync, readlinkSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { localNodeDir } from './node-headers.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const required = process.env.ARENACACHE_REQUIRE_NATIVE === '1';
/** Where the outcome is recorded (lib/native/addon.js reads it; node-gyp rebuild and clean remove it with build/). */
const RECORD = path.join(root, 'build', 'arenacache-install.json');
/** How many of node-gyp's last output lines the record keeps. */
const LOG_LINES = 40;

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

/** Writes the record; an install must not fail because the package directory is read-only. */
function record(outcome, reason = null, log = []) {
  const value = {
    outcome,
    reason,
    node: process.version,
    abi: process.versions.modules,
    platform: process.platform,
    arch: process.arch,
    time: new Date().toISOString(),
    required,
    log,
  };
  try {
    mkdirSync(path.dirname(RECORD), { recursive: true });
    writeFileSync(RECORD, `${JSON.stringify(value, null, 2)}\n`);
  } catch (error) {
    process.stderr.write(`arenacache: could not record the outcome in ${RECORD} (${error.message})\n`);
  }
}

const fdTarget = (pid, fd) => {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return null;
  }
};

function parentOf(pid) {
  try {
    // The command name (field 2) is in parentheses and may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/**
 * Writes `text` where the person or log reading the install sees it. npm
 * (and pnpm, yarn) run this script with its output into a pipe and show it
 * only when the script fails; the package manager's own stderr is the CI
 * log, the Docker build output or the terminal. So: walk up from this
 * process (through the `sh -c` npm runs scripts with) to the first
 * ancestor whose stderr is not this script's, check that it is the
 * package manager, and write to its stderr when that is a
 * pipe or a terminal (see writeTo). When the ancestors share this script's
 * stderr (--foreground-scripts), stderr already reached the reader.
 * Otherwise the controlling terminal, when there is one, as before.
 */
function tellReader(text) {
  if (process.stderr.isTTY) return; // the terminal had it already (--foreground-scripts)
  const own = fdTarget('self', 2);
  let pid = process.ppid;
  for (let depth = 0; depth < 4 && own !== null && pid > 0; depth++) {
    const target = fdTarget(pid, 2);
    if (target === null) break;
    if (target !== own) {
      // `pid` reads this script's stderr; its own stderr is where the reader looks.
      if (isPackageManager(pid) && writeTo(`/proc/${pid}/fd/2`, text)) return;
      break;
    }
    pid = parentOf(pid);
  }
  writeTo('/dev/tty', text);
}

/** npm (its process title), or pnpm, yarn or bun (their command lines). */
function isPackageManager(pid) {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    return /(^|[\s/])(npm|npx|pnpm|yarn|bun)(\.c?js)?(\s|$)|npm-cli\.js/.test(command);
  } catch {
    return false;
  }
}

function writeTo(file, text) {
  try {
    const fd = openSync(file, 'a');
    try {
      // A pipe (CI runners, docker build) or a terminal only. A regular file
      // (npm install 2>log) has its own offset in npm's descriptor, so npm's
      // next write would overwrite this text: leave it to doctor.
      const stat = fstatSync(fd);
      if (!stat.isFIFO() && !stat.isCharacterDevice()) return false;
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    return true;
  } catch {
    return false;
  }
}

function nodeGypCommand() {
  const local = path.join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (existsSync(local)) return [process.execPath, local];
  if (process.env.npm_config_node_gyp) return [process.execPath, process.env.npm_config_node_gyp];
  return ['node-gyp'];
}

/** Runs node-gyp with its output passed through, keeping the last lines for the record. */
function build(command, args, env) {
  return new Promise((resolve) => {
    const lines = [];
    const keep = (chunk, stream) => {
      stream.write(chunk);
      lines.push(...chunk.toString('utf8').split('\n').filter((line) => line.trim() !== ''));
      if (lines.length > 4 * LOG_LINES) lines.splice(0, lines.length - LOG_LINES);
    };
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk) => keep(chunk, process.stdout));
    child.stderr.on('data', (chunk) => keep(chunk, process.stderr));
    child.on('error', (error) => resolve({ status: null, error, log: lines.slice(-LOG_LINES) }));
    child.on('close', (status) => resolve({ status, error: null, log: lines.slice(-LOG_LINES) }));
  });
}

/** The line of node-gyp's output that says what went wrong: a compiler error, a missing tool, node-gyp's own error. */
function cause(log) {
  const find = (pattern) => log.map((line) => pattern.exec(line)).find(Boolean);
  const compiler = find(/\b(?:fatal )?error: .*/);
  if (compiler) return compiler[0].trim();
  const tool = find(/^make(?:\[\d+\])?: .*(?:No such file|not found).*/);
  if (tool) return tool[0].trim();
  const stack = find(/^gyp ERR! stack (Error: .*)/);
  return stack ? stack[1].trim() : null;
}

if (process.env.ARENACACHE_SKIP_BUILD === '1') {
  console.log('arenacache: ARENACACHE_SKIP_BUILD=1, not building the native addon');
  record('skipped', 'ARENACACHE_SKIP_BUILD=1 was set');
  process.exit(0);
}
if (!process.argv.includes('--force') && loads()) {
  console.log('arenacache: native addon present');
  record('present');
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
const result = await build(command, args, buildEnv);
if (result.status === 0 && loads()) {
  console.log('arenacache: native addon built');
  record('built', null, result.log);
  process.exit(0);
}
let reason;
if (result.error) reason = `node-gyp could not be started: ${result.error.message}`;
else if (result.status === 0) reason = 'node-gyp succeeded, but the binary it built does not load';
else {
  const why = cause(result.log);
  reason = `node-gyp exited with status ${result.status}${why ? `: ${why}` : ''}`;
}
record('failed', reason, result.log);
const message =
  `arenacache: no prebuilt binary fits Node ${process.version} (ABI ${process.versions.modules}) on ` +
  `${process.platform}-${process.arch}, and the native addon could not be built (${reason}).\n` +
  '  Building needs python3, make and a C++ compiler (Debian: apt-get install python3 make g++).\n' +
  '  The in-memory SharedCache works without it; file-backed arenas, BlockStore files,\n' +
  '  CacheFS, workspace snapshots and fast dead-thread detection need it.\n' +
  '  Retry with: npm rebuild arenacache (add --foreground-scripts to see the build)\n' +
  '  Check with: npx arenacache doctor (exit code 3 while the addon is unavailable)\n' +
  (required ? '' : '  To make a failed build fail the install: ARENACACHE_REQUIRE_NATIVE=1\n');
process.stderr.write(message);
// A failing script's output is shown by npm; this one succeeds (the
// in-memory cache works), so npm would hide it: tell the reader directly.
if (!required) tellReader(message);
process.exit(required ? 1 : 0);

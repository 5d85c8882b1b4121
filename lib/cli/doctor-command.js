// arenacache doctor: does the native addon load here, and if not, why and
// how to fix it. Made for the places where an install's own output is not
// read: npm hides a successful install script's output (and the install
// succeeds without the addon, because the in-memory cache works), so a CI
// job or a Dockerfile runs `npx arenacache doctor` as a step, which fails
// (exit code 3) while the addon is unavailable. The reason is the loader's
// (lib/native/addon.js), which quotes what the install script recorded.
import { readFileSync } from 'node:fs';
import { nativeAvailable, nativeBinary, nativeInstallRecord, nativeUnavailableReason } from '../native/addon.js';
import { EXIT, parseCommand } from './common.js';

const USAGE = 'arenacache doctor [--json]';

export const DOCTOR_ABOUT =
  'Say whether the native addon loads here, which binary it is, and when it does not, why (as the install script recorded it) and how to fix it. Run it as a CI or Dockerfile step after npm install: it exits with 3 while the addon is unavailable.';

export const DOCTOR_EXIT_CODES = 'Exit codes: 0 the addon loads, 2 usage error, 3 the addon is unavailable (the in-memory SharedCache works; what needs files does not).';

const HELP = `Usage: ${USAGE}

${DOCTOR_ABOUT}

Options:
      --json      machine-readable output on stdout: { ok, version, node, native: { available, binary, reason }, install }
  -h, --help      this help

${DOCTOR_EXIT_CODES}`;

const NEEDS_ADDON = 'SharedCache.open(), BlockStore.open(), CacheFS on a directory, workspace snapshots and the arenacache file commands need it';

function version() {
  return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
}

/** What to do about it, by what the loader and the install record say. */
function fixFor(record) {
  if (process.env.ARENACACHE_NATIVE === 'off') return ['unset ARENACACHE_NATIVE (it disables the addon)'];
  const lines = [];
  if (record === null) lines.push('npm 11 runs the install script only when approved: npm install-scripts approve arenacache');
  lines.push(
    'install python3, make and a C++ compiler (Debian, Ubuntu: apt-get install python3 make g++; Alpine: apk add python3 make g++)',
    'then: npm rebuild arenacache --foreground-scripts (the build output is shown)',
  );
  return lines;
}

/** The human report: one line per fact, the reason and the fix indented. */
function describe(report) {
  const { node, native, install } = report;
  const lines = [`arenacache ${report.version} on Node ${node.version} (ABI ${node.abi}), ${node.platform}-${node.arch}`];
  if (native.available) {
    const kind = /[/\\]prebuilds[/\\]/.test(native.binary) ? 'a prebuilt binary' : 'the local build';
    lines.push(`native addon: loaded from ${native.binary} (${kind})`);
    return lines.join('\n');
  }
  lines.push('native addon: unavailable', `  why: ${native.reason}`);
  if (install !== null && install.outcome === 'failed' && Array.isArray(install.log) && install.log.length > 0) {
    lines.push('  end of the build output:', ...install.log.slice(-12).map((line) => `    ${line}`));
  }
  const [first, ...rest] = fixFor(install);
  lines.push(`  fix: ${first}`, ...rest.map((line) => `       ${line}`));
  lines.push(`  meanwhile: the in-memory SharedCache works; ${NEEDS_ADDON}`);
  return lines.join('\n');
}

/**
 * Runs `arenacache doctor` with the arguments after the command name.
 * @param {string[]} argv
 * @returns {{ result?: object, text: string, code: number }}
 */
export function runDoctorCommand(argv) {
  const { help } = parseCommand({ name: 'doctor', usage: USAGE, args: 0 }, argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (help) return { text: HELP, code: EXIT.ok };
  const report = {
    ok: nativeAvailable,
    version: version(),
    node: { version: process.version, abi: process.versions.modules, platform: process.platform, arch: process.arch },
    native: { available: nativeAvailable, binary: nativeBinary, reason: nativeUnavailableReason },
    install: nativeInstallRecord(),
  };
  return { result: report, text: describe(report), code: nativeAvailable ? EXIT.ok : EXIT.differs };
}

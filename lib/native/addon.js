// Loads the native addon: a prebuilt binary from prebuilds/<platform>-<arch>/
// for this Node ABI first (chosen by node-gyp-build's rules), then the local
// build in build/Release. (node-gyp-build's own loader tries the local build
// first; a package that ships prebuilds wants them used.)
// When neither loads, the in-memory cache still works; the features that need
// the addon throw ERR_NATIVE_UNAVAILABLE with the reason recorded here,
// which quotes what the install script (scripts/install.js) recorded in
// build/arenacache-install.json: why its build failed or was skipped, or,
// without a record, that it never ran. `arenacache doctor` prints the same.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ArenaCacheError, codes } from '../errors.js';

const require = createRequire(import.meta.url);
const packageRoot = fileURLToPath(new URL('../..', import.meta.url));
const EXPECTED_ABI = 8;

const BUILD_HINT = 'run "npm rebuild arenacache", which needs python3, make and a C++ compiler';
const INSTALL_RECORD = path.join(packageRoot, 'build', 'arenacache-install.json');

/** What scripts/install.js recorded, null when it has not run here, or { outcome: 'unreadable' }. */
function readInstallRecord() {
  let text;
  try {
    text = readFileSync(INSTALL_RECORD, 'utf8');
  } catch {
    return null;
  }
  try {
    const record = JSON.parse(text);
    if (record !== null && typeof record === 'object' && typeof record.outcome === 'string') return record;
  } catch {
    // fall through
  }
  return { outcome: 'unreadable', reason: `${INSTALL_RECORD} is not a record of scripts/install.js` };
}

/** What the install script's record adds to the reason there is no addon, or null. */
function installNote(record) {
  if (record === null) return 'the install script has not run here (npm 11 runs it only when approved: npm install-scripts approve arenacache)';
  const when = `${record.node}, ${record.time}`;
  if (record.outcome === 'failed') return `the install script could not build it (${when}): ${record.reason}`;
  if (record.outcome === 'skipped') return `the install script did not build it (${when}): ${record.reason}`;
  if (record.abi !== undefined && record.abi !== process.versions.modules) {
    return `the install script last ran with Node ${record.node} (ABI ${record.abi}), not this Node ${process.version}`;
  }
  if (record.outcome === 'unreadable') return record.reason;
  return null;
}

/** The prebuild in prebuilds/<platform>-<arch>/ that fits this Node (its ABI), or null. */
function findPrebuild() {
  const gypBuild = require('node-gyp-build');
  const folders = readdirOrEmpty(path.join(packageRoot, 'prebuilds')).map(gypBuild.parseTuple);
  const folder = folders.filter(gypBuild.matchTuple(process.platform, process.arch)).sort(gypBuild.compareTuples)[0];
  if (folder === undefined) return null;
  const directory = path.join(packageRoot, 'prebuilds', folder.name);
  const files = readdirOrEmpty(directory).map(gypBuild.parseTags).filter(Boolean);
  const best = files.filter(gypBuild.matchTags('node', process.versions.modules)).sort(gypBuild.compareTags('node'))[0];
  return best === undefined ? null : path.join(directory, best.file);
}

function readdirOrEmpty(directory) {
  try {
    return readdirSync(directory);
  } catch {
    return [];
  }
}

// A prebuilt binary first (what a published package ships), then the local
// build that `npm install` made; each failure is remembered for the reason.
function load() {
  if (process.env.ARENACACHE_NATIVE === 'off') {
    return { addon: null, reason: 'disabled by the environment variable ARENACACHE_NATIVE=off' };
  }
  const candidates = [findPrebuild(), path.join(packageRoot, 'build', 'Release', 'arenacache.node')];
  // The install record is read only when the addon is missing: a working load reads no more files.
  const hint = () => [installNote(readInstallRecord()), BUILD_HINT].filter(Boolean).join('; ');
  const failures = [];
  for (const binary of candidates) {
    if (binary === null || !existsSync(binary)) continue;
    let addon;
    try {
      addon = require(binary);
    } catch (error) {
      failures.push(`${binary} did not load (${error.message.split('\n')[0]})`);
      continue;
    }
    if (addon.abiVersion !== EXPECTED_ABI) {
      failures.push(`${binary} is stale (abi ${addon.abiVersion}, expected ${EXPECTED_ABI})`);
      continue;
    }
    return { addon, reason: null, binary };
  }
  if (failures.length > 0) return { addon: null, reason: `${failures.join('; ')}; ${hint()}` };
  return {
    addon: null,
    reason:
      `no prebuilt binary for ${process.platform}-${process.arch} (Node ABI ${process.versions.modules}) ` +
      `in prebuilds/ and no local build in build/Release; ${hint()}`,
  };
}

const { addon, reason, binary = null } = load();

/**
 * What the install script recorded in build/arenacache-install.json
 * (outcome 'present', 'built', 'failed' or 'skipped', reason, node, abi,
 * time, log), or null when it has not run in this package; read when asked.
 */
export function nativeInstallRecord() {
  return readInstallRecord();
}

/**
 * The addon's functions, or null when it did not load: for the wrappers
 * that have an answer without it. The others go through requireNative().
 */
export const loadedAddon = addon;

/** The path of the addon binary that loaded (a prebuild or build/Release), or null. */
export const nativeBinary = binary;

/** True when the native addon loaded. */
export const nativeAvailable = addon !== null;

/** Why the addon did not load, or null. */
export const nativeUnavailableReason = reason;

/**
 * Throws ERR_NATIVE_UNAVAILABLE unless the addon loaded.
 * @param {string} feature what the caller wanted, for the message
 */
export function requireNative(feature) {
  if (addon === null) {
    throw new ArenaCacheError(
      codes.ERR_NATIVE_UNAVAILABLE,
      `${feature} needs the arenacache native addon, which is unavailable: ${reason}`,
    );
  }
  return addon;
}

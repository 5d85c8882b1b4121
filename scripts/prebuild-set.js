// The prebuilt binaries a release must carry, and the checks that it does:
// one per Node major and CPU in scripts/node-targets.json, named as
// prebuildify names them (prebuilds/linux-<arch>/arenacache.abi<N>.glibc.node,
// N from node-abi, the table prebuildify itself uses). Used by
// scripts/check-prebuilds.js (npm's prepack hook) on prebuilds/ and by
// scripts/release.js on the packed tarball.
//
// A binary "looks loadable" when it is a 64-bit little-endian ELF shared
// object for its folder's CPU. That catches a missing, empty, truncated or
// cross-wired binary without running it; scripts/release.js also loads the
// binaries of this machine's CPU with their own Node, and
// scripts/check-install.js runs the arm64 ones under qemu.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

/** ELF e_machine for each CPU we build for, and its name in messages. */
const ELF_MACHINES = { x64: [62, 'x86-64'], arm64: [183, 'arm64'] };
const MACHINE_NAMES = new Map(Object.values(ELF_MACHINES));

/** The Node ABI of a release, by the table prebuildify names its files with. */
function abiOf(version) {
  const nodeAbi = createRequire(require.resolve('prebuildify'))('node-abi');
  return nodeAbi.getAbi(version, 'node');
}

/**
 * Every binary a release carries, x64 first, then by major.
 * @returns {{ major: string, version: string, abi: string, arch: string, path: string }[]}
 */
export function expectedPrebuilds(targetsFile = path.join(root, 'scripts', 'node-targets.json')) {
  const { majors, arches } = JSON.parse(readFileSync(targetsFile, 'utf8'));
  return arches.flatMap((arch) =>
    Object.entries(majors).map(([major, version]) => {
      const abi = abiOf(version);
      return { major, version, abi, arch, path: `prebuilds/linux-${arch}/arenacache.abi${abi}.glibc.node` };
    }),
  );
}

/**
 * What is wrong with a binary for `arch`, judged by its first bytes, or null.
 * @param {Buffer} header at least the first 20 bytes (fewer: too short)
 */
export function binaryProblem(header, arch) {
  if (header.length < 20) return header.length === 0 ? 'empty' : `too short for an ELF binary (${header.length} bytes)`;
  if (header.readUInt32BE(0) !== 0x7f454c46) return 'not an ELF binary';
  if (header[4] !== 2 || header[5] !== 1) return 'not a 64-bit little-endian ELF binary';
  if (header.readUInt16LE(16) !== 3) return 'an ELF file but not a shared object';
  const machine = header.readUInt16LE(18);
  const [expected, name] = ELF_MACHINES[arch];
  if (machine !== expected) return `an ELF binary for ${MACHINE_NAMES.get(machine) ?? `machine ${machine}`}, not ${name}`;
  return null;
}

const describe = (target, problem) => `${target.path}: ${problem} (Node ${target.major}, linux-${target.arch})`;

function readHeader(file) {
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(64);
    return header.subarray(0, readSync(fd, header, 0, 64, 0));
  } finally {
    closeSync(fd);
  }
}

/** The newest file of the C++ sources and the build file: a prebuild must be newer. */
function newestSource(packageRoot) {
  const files = ['binding.gyp', ...readdirOrEmpty(path.join(packageRoot, 'src', 'native')).map((name) => path.join('src', 'native', name))];
  let newest = null;
  for (const file of files) {
    const full = path.join(packageRoot, file);
    if (!existsSync(full)) continue;
    const mtime = statSync(full).mtimeMs;
    if (newest === null || mtime > newest.mtime) newest = { file, mtime };
  }
  return newest;
}

function readdirOrEmpty(directory) {
  try {
    return readdirSync(directory);
  } catch {
    return [];
  }
}

/**
 * The problems of the prebuilds in a checkout (missing, not loadable-looking,
 * older than the C++ sources), one line each; [] when the set is complete.
 */
export function checkPrebuildDir(packageRoot = root) {
  const source = newestSource(packageRoot);
  const problems = [];
  for (const target of expectedPrebuilds()) {
    const file = path.join(packageRoot, target.path);
    if (!existsSync(file)) {
      problems.push(describe(target, 'missing'));
      continue;
    }
    const problem = binaryProblem(readHeader(file), target.arch);
    if (problem !== null) problems.push(describe(target, problem));
    else if (source !== null && statSync(file).mtimeMs < source.mtime) problems.push(describe(target, `older than ${source.file}`));
  }
  return problems;
}

/**
 * The problems of a packed tarball's prebuilds (missing, not loadable-looking),
 * one line each; [] when it carries the full set.
 */
export function checkTarball(tarball) {
  const listing = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (listing.status !== 0) return [`${tarball}: tar could not list it (${listing.stderr.trim() || listing.error?.message})`];
  const entries = new Set(listing.stdout.split('\n'));
  const problems = [];
  for (const target of expectedPrebuilds()) {
    const entry = `package/${target.path}`;
    if (!entries.has(entry)) {
      problems.push(describe(target, 'missing'));
      continue;
    }
    const content = spawnSync('tar', ['xzOf', tarball, entry], { maxBuffer: 256 << 20 });
    const problem = content.status === 0 ? binaryProblem(content.stdout, target.arch) : `tar could not read it (${content.stderr})`;
    if (problem !== null) problems.push(describe(target, problem));
  }
  return problems;
}

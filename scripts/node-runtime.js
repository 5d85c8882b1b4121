// A Node release for this machine's platform, from the npm registry's
// node-linux-<arch> packages (full builds with their headers), so that
// prebuilds for other Node majors and other architectures are built, and the
// tests run on other Node majors, without downloads from nodejs.org. Each
// release is installed once into a cache directory and reused.
//
//   node scripts/node-runtime.js 22.23.3 [--arch x64]   prints the node binary's path
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The versions and architectures arenacache is built and tested for (scripts/node-targets.json). */
export const nodeTargets = JSON.parse(readFileSync(path.join(root, 'scripts', 'node-targets.json'), 'utf8'));

/** Where fetched Node releases are kept: ARENACACHE_NODE_CACHE, or ~/.cache/arenacache/node. */
export function runtimeCacheDir() {
  return process.env.ARENACACHE_NODE_CACHE || path.join(os.homedir(), '.cache', 'arenacache', 'node');
}

/**
 * Installs node-linux-<arch>@<version> (once) and returns where it is.
 * @param {string} version an exact release, such as '22.23.3'
 * @param {string} [arch] 'x64' or 'arm64'; default this machine's
 * @returns {{ version: string, arch: string, prefix: string, node: string }}
 *   prefix holds bin/node and include/node (a --nodedir for node-gyp)
 */
export function nodeRuntime(version, arch = process.arch) {
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new RangeError(`version must be an exact release such as 22.23.3 (got ${version})`);
  if (arch !== 'x64' && arch !== 'arm64') throw new RangeError(`arch must be 'x64' or 'arm64' (got ${arch})`);
  const packageName = `node-linux-${arch}`;
  const directory = path.join(runtimeCacheDir(), `${arch}-${version}`);
  const prefix = path.join(directory, 'node_modules', packageName);
  const node = path.join(prefix, 'bin', 'node');
  if (!existsSync(path.join(prefix, 'include', 'node', 'node_version.h')) || !existsSync(node)) {
    mkdirSync(directory, { recursive: true });
    // --force: the package declares its cpu, which npm refuses on another
    // architecture; --ignore-scripts: it needs none, and we run none.
    const args = ['install', '--no-save', '--no-package-lock', '--ignore-scripts', '--no-audit', '--no-fund', '--prefix', directory];
    if (arch !== process.arch) args.push('--force');
    const npm = process.env.npm_execpath
      ? [process.execPath, process.env.npm_execpath]
      : ['npm'];
    const result = spawnSync(npm[0], [...npm.slice(1), ...args, `${packageName}@${version}`], {
      // npm's report to stderr: stdout is the node path when run as a command.
      stdio: ['ignore', 2, 2],
    });
    if (result.status !== 0) {
      throw new Error(`could not install ${packageName}@${version} from the npm registry (npm exited with ${result.status ?? result.error?.message})`);
    }
  }
  return { version, arch, prefix, node };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [version] = process.argv.slice(2).filter((argument) => !argument.startsWith('--'));
  const archIndex = process.argv.indexOf('--arch');
  const runtime = nodeRuntime(version, archIndex === -1 ? process.arch : process.argv[archIndex + 1]);
  console.log(runtime.node);
}

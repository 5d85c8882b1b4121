// Runs the arenacache command line (bin/arenacache.js) as a user would, and
// the shape of a failure as it prints one: the cache command tests share these.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = fileURLToPath(new URL('../../bin/arenacache.js', import.meta.url));

/** Runs the command from the repository root; resolves with its exit code and output (independent runs go in parallel). */
export function cli(...args) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') reject(error);
      else resolve({ code: error === null ? 0 : error.code, stdout, stderr });
    });
  });
}

/** Runs the command with --json; `value` is what it printed, parsed. */
export async function cliJson(...args) {
  const result = await cli(...args, '--json');
  return { ...result, value: JSON.parse(result.stdout) };
}

/** A usage or failure as the command prints it: nothing on stdout, one line on stderr. */
export function cliFailure(code, message) {
  return { code, stdout: '', stderr: `arenacache: ${message}\n` };
}

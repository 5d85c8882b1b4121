// What every arenacache command shares: the exit codes, the usage error,
// flag parsing and the mapping from errors to exit codes.
import { parseArgs } from 'node:util';
import { codes } from '../errors.js';
import { formatTable } from '../text-table.js';

/** Exit codes (stable, for scripts): see docs/cli.md. */
export const EXIT = Object.freeze({ ok: 0, failed: 1, usage: 2, differs: 3, busy: 4, notFound: 5 });

/** A wrong command line: exit code 2, JSON error code ERR_USAGE. */
export class UsageError extends Error {}

/**
 * A failure the command line describes in its own words, with the exit code
 * it stands for. `code` is the library's error code (for --json).
 */
export class CommandError extends Error {
  constructor(code, message, exitCode, options) {
    super(message, options);
    this.code = code;
    this.exitCode = exitCode;
  }
}

const NOT_FOUND = new Set([codes.ERR_WORKSPACE_NOT_FOUND, codes.ERR_SNAPSHOT_NOT_FOUND, codes.ERR_SNAPSHOT_AMBIGUOUS]);
const BUSY = new Set([codes.ERR_WORKSPACE_BUSY, codes.ERR_ARENA_BUSY]);

export function exitCodeOf(error) {
  if (error instanceof CommandError) return error.exitCode;
  if (error instanceof UsageError || error instanceof TypeError || error instanceof RangeError) return EXIT.usage;
  if (BUSY.has(error.code)) return EXIT.busy;
  if (NOT_FOUND.has(error.code)) return EXIT.notFound;
  return EXIT.failed;
}

/**
 * parseArgs for one command: `options` plus `common`; an unknown option or a
 * missing value is a UsageError that names the command's --help.
 * `args` is a count or [min, max] of positionals.
 * @param {{ name: string, usage: string, options?: import('node:util').ParseArgsConfig['options'], args?: number | number[] }} command
 * @param {string[]} argv
 * @param {import('node:util').ParseArgsConfig['options']} common
 * @returns {{ values: { [option: string]: string | boolean | (string | boolean)[] | undefined }, positionals: string[], help: boolean }}
 */
export function parseCommand({ name, usage, options, args = 0 }, argv, common) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...options, ...common } });
  } catch (error) {
    throw new UsageError(`${error.message}; run arenacache ${name} --help`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { values, positionals, help: true };
  const [min, max] = Array.isArray(args) ? args : [args, args];
  if (positionals.length < min || positionals.length > max) {
    throw new UsageError(`${name} takes ${min === max ? min : `${min} to ${max}`} argument(s), got ${positionals.length}; usage: ${usage}`);
  }
  return { values, positionals, help: false };
}

/** Two columns, the first padded, with no header line. */
export function formatPairs(rows) {
  return formatTable(['', ''], rows).split('\n').slice(1).join('\n');
}

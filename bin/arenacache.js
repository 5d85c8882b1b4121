#!/usr/bin/env node
// The arenacache command line: workspace snapshot commands (lib/cli/snapshot-commands.js),
// cache file commands (lib/cli/cache-commands.js, loaded only for them), doctor
// (lib/cli/doctor-command.js, loaded only for it) and --version.
// Exit codes (stable, for scripts): see EXIT in lib/cli/common.js and docs/cli.md.
import { readFileSync } from 'node:fs';
import { EXIT, exitCodeOf, formatPairs, UsageError } from '../lib/cli/common.js';
import { COMMANDS, COMMON, runSnapshotCommand } from '../lib/cli/snapshot-commands.js';

function mainHelp() {
  const rows = Object.entries(COMMANDS).map(([name, command]) => [`  ${name}`, command.about.split('. ')[0]]);
  const cacheRows = [
    ['  cache stats <file>', "Print a cache file's counters and sizes"],
    ['  cache verify <file>', "Check a cache file's invariants (exit code 3 on problems)"],
    ['  cache keys <file>', "List a cache file's keys (--prefix <p>)"],
    ['  cache reset <file>', 'Remove every entry of a cache file; processes using it go on'],
  ];
  return [
    'Usage: arenacache <command> [options]',
    '       arenacache cache <stats|verify|keys|reset> <file> [--json]',
    '       arenacache doctor [--json]',
    '       arenacache --version',
    '',
    'Commands:',
    formatPairs(rows),
    '',
    'Cache file commands (a file made by SharedCache.open(); never created):',
    formatPairs(cacheRows),
    '',
    'Checking the install:',
    formatPairs([['  doctor', 'Say whether the native addon loads here, and if not why and how to fix it (exit code 3)']]),
    '',
    COMMON.replace('Common options:', 'Options of the workspace commands:'),
    '',
    'Options of the cache commands: --json, --codec <module>[#<export>], -h/--help (see arenacache cache --help).',
    '',
    'Other options:',
    '  -v, --version          print the version of arenacache',
    '',
    "Run arenacache <command> --help (or arenacache cache <command> --help) for a command's options.",
    'Exit codes: 0 ok, 1 failed, 2 usage error, 3 verify/status found differences, 4 workspace busy, 5 workspace or snapshot not found;',
    'for the cache commands, 3 cache verify found problems, 4 the cache file stayed locked by another process, 5 no such cache file.',
    'doctor exits with 3 when the native addon is unavailable.',
  ].join('\n');
}

function version() {
  return JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;
}

async function run(argv) {
  const [name, ...rest] = argv;
  // Asked for, help is the answer (exit 0); with nothing asked, the usage
  // goes to stderr as a usage error (exit 2), as the exit codes say.
  if (name === '-h' || name === '--help' || name === 'help') return { text: mainHelp(), code: EXIT.ok };
  if (name === undefined) return { usage: mainHelp(), code: EXIT.usage };
  if (name === '--version' || name === '-v') {
    const extra = rest.filter((arg) => arg !== '--json');
    if (extra.length > 0) throw new UsageError(`${name} takes no arguments (got ${JSON.stringify(extra[0])})`);
    const current = version();
    return { result: { version: current }, text: current };
  }
  if (name === 'cache') {
    const { runCacheCommand } = await import('../lib/cli/cache-commands.js');
    return runCacheCommand(rest);
  }
  if (name === 'doctor') {
    const { runDoctorCommand } = await import('../lib/cli/doctor-command.js');
    return runDoctorCommand(rest);
  }
  if (!Object.hasOwn(COMMANDS, name)) throw new UsageError(`unknown command ${JSON.stringify(name)}; run arenacache --help`);
  return runSnapshotCommand(name, rest);
}

// `arenacache cache keys FILE | head` closes the pipe early: that is not a failure.
process.stdout.on('error', (error) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
  throw error;
});

const argv = process.argv.slice(2);
const json = argv.includes('--json');
try {
  const { result, text = '', usage, warning, code = EXIT.ok } = await run(argv);
  // What the command could not do, while it did the rest (cache keys: shards that stayed busy).
  if (warning !== undefined) process.stderr.write(`arenacache: ${warning}\n`);
  if (usage !== undefined) process.stderr.write(`${usage}\n`);
  else if (json && result !== undefined) process.stdout.write(`${JSON.stringify(result, (key, value) => (typeof value === 'bigint' ? String(value) : value), 2)}\n`);
  else if (text !== '') process.stdout.write(`${text}\n`);
  process.exitCode = code;
} catch (error) {
  const code = exitCodeOf(error);
  if (code === EXIT.failed && !error.code) throw error;
  if (json) process.stdout.write(`${JSON.stringify({ error: { code: error.code ?? (code === EXIT.usage ? 'ERR_USAGE' : undefined), message: error.message } }, null, 2)}\n`);
  else process.stderr.write(`arenacache: ${error.message}\n`);
  process.exitCode = code;
}

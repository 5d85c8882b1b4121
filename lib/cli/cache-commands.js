// The cache file commands of the arenacache command line:
//
//   arenacache cache stats  <file>   the counters and sizes (stats())
//   arenacache cache verify <file>   the arena's invariants (verify()); exit 3 on problems
//   arenacache cache keys   <file>   the keys, optionally those with a prefix
//   arenacache cache reset  <file>   every entry removed (clear())
//
// Each opens an existing file with SharedCache.open() (never creating one:
// no memoryBytes is passed), so it works on a file that other processes are
// using: they go on, and see what it did (a reset empties the cache for
// them too; their instances stay valid). Values are never read, so the
// codec matters only because open() checks it: the default codec is built
// in, another one is loaded with --codec <module>[#<export>].
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { codes } from '../errors.js';
import { SharedCache } from '../cache/shared-cache.js';
import { formatBytes } from '../text-table.js';
import { CommandError, EXIT, exitCodeOf, formatPairs, parseCommand, UsageError } from './common.js';

const FILE_OPTIONS = `Options:
      --codec <module>[#<export>]  the codec the cache was created with, when not the default:
                                   the module's default export, or the named one (values are
                                   never decoded; open() only checks that the codec's name matches)
      --json                       machine-readable output on stdout
  -h, --help                       this help`;

const CODEC_USAGE = '[--codec <module>[#<export>]]';

export const CACHE_COMMANDS = {
  stats: {
    usage: `arenacache cache stats <file> ${CODEC_USAGE} [--json]`,
    about: "Print the cache's counters and sizes: stats(), summed over every thread of every process using the file. threads counts the file's other users, not this command. The invalidation bus counters (per process, always 0 here) are left out of the table; --json prints the whole stats() object.",
    options: {},
  },
  verify: {
    usage: `arenacache cache verify <file> ${CODEC_USAGE} [--json]`,
    about: "Check the arena's invariants (verify()), locking each shard briefly in turn. Exit code 3 when it finds problems, which are printed.",
    options: {},
  },
  keys: {
    usage: `arenacache cache keys <file> [--prefix <p>] ${CODEC_USAGE} [--json]`,
    about:
      'List the live keys, sorted, one per line: string keys as they are (JSON-quoted when they hold control characters or start with "hex:" or a double quote), Buffer keys as hex:<hex digits>. --prefix keeps string keys that start with <p>; a <p> of hex:<digits> also keeps the Buffer keys whose bytes start with those. --json prints [{ key, kind }], kind "string" or "buffer" (key in hex).',
    options: { prefix: { type: 'string' } },
  },
  reset: {
    usage: `arenacache cache reset <file> ${CODEC_USAGE} [--json]`,
    about:
      'Remove every entry (clear()), for every process using the file, and flush the file. The file and its options stay: processes using it go on working and find the cache empty. Counters are kept.',
    options: {},
  },
};

/** @type {import('node:util').ParseArgsConfig['options']} */
const COMMON_OPTIONS = {
  json: { type: 'boolean' },
  codec: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
};

export const CACHE_EXIT_CODES =
  'Exit codes: 0 ok, 1 failed (not a cache file, damaged header, another codec, no access), 2 usage error, 3 cache verify found problems, 4 the file stayed locked by another process (creating or recovering it), 5 no such cache file.';

function cacheHelp() {
  const rows = Object.entries(CACHE_COMMANDS).map(([name, command]) => [`  ${name} <file>`, command.about.split('. ')[0].split(': ')[0]]);
  return `Usage: arenacache cache <command> <file> [options]\n\nInspect or empty the cache in a file made by SharedCache.open(), whether processes use it or not. The file is never created.\n\nCommands:\n${formatPairs(rows)}\n\n${FILE_OPTIONS}\n\nRun arenacache cache <command> --help for a command's options.\n${CACHE_EXIT_CODES}`;
}

function commandHelp(name) {
  const command = CACHE_COMMANDS[name];
  return `Usage: ${command.usage}\n\n${command.about}\n\n${FILE_OPTIONS}\n\n${CACHE_EXIT_CODES}`;
}

const EXPORT_NAME = /^(.+)#([A-Za-z_$][\w$]*)$/;

/** The codec named by --codec <module>[#<export>]: a path (from the current directory) or a package name. */
async function loadCodec(spec) {
  const match = EXPORT_NAME.exec(spec);
  const [specifier, exportName] = match === null ? [spec, 'default'] : [match[1], match[2]];
  let module;
  try {
    // A path (from the current directory) when it names a file or looks like one, else a package.
    const isPath = specifier.startsWith('.') || path.isAbsolute(specifier) || existsSync(specifier);
    const file = isPath ? path.resolve(specifier) : createRequire(path.join(process.cwd(), 'noop.js')).resolve(specifier);
    module = await import(pathToFileURL(file).href);
  } catch (error) {
    throw new UsageError(`--codec ${spec}: could not load ${specifier}: ${error.message.split('\n')[0].replace(/ imported from .*$/, '')}`);
  }
  const codec = module[exportName];
  if (codec === undefined) throw new UsageError(`--codec ${spec}: ${specifier} has no export named ${exportName}`);
  if (codec === null || typeof codec !== 'object' || typeof codec.name !== 'string' || typeof codec.encode !== 'function' || typeof codec.decode !== 'function') {
    throw new UsageError(`--codec ${spec}: the export ${exportName} of ${specifier} is not a codec (an object with a name, encode() and decode())`);
  }
  return codec;
}

/** The library's advice on open() options, which means nothing on the command line. */
const API_HINT = /; (open it with \{ reset: true \}|pass options\.memoryBytes) .*$/s;
const CODEC_NAMES = /created with the codec "(.*)" but .* given "(.*)";/;

const NOT_ARENA = (file) => `${file} is not a cache file: it does not start with an arena header`;

/**
 * An error of SharedCache.open(file) in the words of the command line.
 * @param {NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException }} error what open() threw
 * @param {string} file
 * @param {boolean} codecGiven whether --codec named a codec
 */
function openError(error, file, codecGiven) {
  if (!(error instanceof Error) || typeof error.code !== 'string' || !error.code.startsWith('ERR_')) return error;
  /** @type {(message: string, exitCode?: number) => CommandError} */
  const fail = (message, exitCode = EXIT.failed) => new CommandError(error.code, message, exitCode, { cause: error });
  switch (error.code) {
    case codes.ERR_ARENA_FILE:
      if (error.cause?.code === 'ENOENT') return fail(`cache file ${file} does not exist`, EXIT.notFound);
      if (/holds no arena yet/.test(error.message)) return fail(`${file} is not a cache file: it holds no arena (it is empty, or its creation never finished)`);
      break;
    case codes.ERR_ARENA_NOT_ARENA:
      return fail(NOT_ARENA(file));
    case codes.ERR_CODEC_MISMATCH: {
      const names = CODEC_NAMES.exec(error.message);
      if (names === null) break;
      const [, stored, given] = names;
      return codecGiven
        ? fail(`${file} was created with the codec "${stored}", not "${given}" (the --codec module's)`)
        : fail(`${file} was created with the codec "${stored}"; pass --codec <module>[#<export>] naming a module that exports it (built in: only the default codec, "${given}")`);
    }
    default:
  }
  return fail(error.message.replace(API_HINT, ''), exitCodeOf(error));
}

/** Opens the existing cache file, runs `use(cache)` and closes it. */
async function withCache(file, codecSpec, use) {
  const codec = codecSpec === undefined ? undefined : await loadCodec(codecSpec);
  let cache;
  try {
    // No memoryBytes: open() never creates the file. No near cache: values
    // are never read. populate: false: a large file is not read in.
    cache = SharedCache.open(file, { nearCache: 0, populate: false, codec });
  } catch (error) {
    throw openError(error, file, codec !== undefined);
  }
  try {
    return await use(cache);
  } finally {
    cache.close();
  }
}

/** Counters of the invalidation bus: per process, so always 0 in the command's own. */
const PROCESS_COUNTERS = /^(udp|redis|invalidation)/;

function statsText(file, stats) {
  const rows = [];
  for (const [name, value] of Object.entries(stats)) {
    if (PROCESS_COUNTERS.test(name)) continue;
    let shown = String(value);
    if (name === 'hitRatio') shown = `${(value * 100).toFixed(1)}%`;
    else if (name.endsWith('Bytes') && value >= 1024) shown = `${value} (${formatBytes(value)})`;
    rows.push([name, shown]);
  }
  return `${file}\n${formatPairs(rows)}`;
}

function hex(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** A string key as printed: as it is unless it could be taken for a Buffer key, a quoted one, or span lines. */
function shownString(key) {
  // eslint-disable-next-line no-control-regex
  return key.startsWith('hex:') || key.startsWith('"') || /[\u0000-\u001f\u007f\u2028\u2029]/.test(key) ? JSON.stringify(key) : key;
}

function keyFilter(prefix) {
  if (prefix === undefined) return () => true;
  const bytesPrefix = prefix.startsWith('hex:') ? prefix.slice(4).toLowerCase() : null;
  return ({ key, kind }) => (kind === 'string' ? key.startsWith(prefix) : bytesPrefix !== null && key.startsWith(bytesPrefix));
}

const RUNNERS = {
  stats({ file, values }) {
    return withCache(file, values.codec, (cache) => {
      // This command's own open is one of the threads using the file: the
      // count it reports is of the file's other users.
      const own = cache.stats();
      const stats = { ...own, threads: Math.max(0, own.threads - 1) };
      return { result: stats, text: statsText(file, stats) };
    });
  },
  verify({ file, values }) {
    return withCache(file, values.codec, (cache) => {
      const result = cache.verify();
      const lines = result.ok ? [`ok      ${file}`] : [`FAILED  ${file}: ${result.problems.length} problem(s)`, ...result.problems.map((problem) => `  ${problem}`)];
      return { result, text: lines.join('\n'), code: result.ok ? EXIT.ok : EXIT.differs };
    });
  },
  keys({ file, values }) {
    return withCache(file, values.codec, (cache) => {
      const keep = keyFilter(values.prefix);
      const keys = [];
      for (const key of cache.keys()) {
        const entry = typeof key === 'string' ? { key, kind: 'string' } : { key: hex(key), kind: 'buffer' };
        if (keep(entry)) keys.push(entry);
      }
      // Strings first, then Buffers; each in code unit order (not the locale's).
      keys.sort((a, b) => (a.kind !== b.kind ? (a.kind === 'string' ? -1 : 1) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const text = keys.map(({ key, kind }) => (kind === 'string' ? shownString(key) : `hex:${key}`)).join('\n');
      return { result: keys, text };
    });
  },
  reset({ file, values }) {
    return withCache(file, values.codec, async (cache) => {
      const entriesBefore = cache.size;
      cache.clear();
      await cache.flush();
      return { result: { path: file, entriesBefore }, text: `Cleared ${file} (it held ${entriesBefore} entries)` };
    });
  },
};

/** Runs `arenacache cache <rest...>`. */
export async function runCacheCommand(rest) {
  const [name, ...args] = rest;
  if (name === '-h' || name === '--help' || name === 'help') return { text: cacheHelp(), code: EXIT.ok };
  if (name === undefined) return { usage: cacheHelp(), code: EXIT.usage };
  const command = Object.hasOwn(CACHE_COMMANDS, name) ? CACHE_COMMANDS[name] : undefined;
  if (command === undefined) throw new UsageError(`unknown cache command ${JSON.stringify(name)}; run arenacache cache --help`);
  const { values, positionals, help } = parseCommand({ name: `cache ${name}`, ...command, args: 1 }, args, COMMON_OPTIONS);
  if (help) return { text: commandHelp(name), code: EXIT.ok };
  return RUNNERS[name]({ file: positionals[0], values });
}

// The cache file commands of the arenacache command line:
//
//   arenacache cache stats  <file>   the counters and sizes (stats())
//   arenacache cache verify <file>   the arena's invariants (verify()); exit 3 on problems
//   arenacache cache keys   <file>   the keys, optionally those with a prefix
//   arenacache cache reset  <file>   every entry removed (clear())
//
// stats, keys and verify read the file with SharedCache.inspect(): opened
// and mapped read-only, no lock, no recovery, no thread slot, not a byte
// written. So they report the file as they find it, whether processes use
// it or not: verify the damage itself (an open() as the file's only user
// would first repair it, and report the repaired state), stats the
// counters of the threads that use it (never the command's own). Values
// of the default codec are decoded with the file's structures; values of
// another codec are shown as its bytes, or decoded when --codec loads it
// (--codec <module>[#<export>]: optional, used only to decode values).
//
// reset needs a writable open: SharedCache.open() of the existing file
// (never creating one: no memoryBytes is passed), so the processes using
// it go on and find the cache empty (their instances stay valid). clear()
// decodes nothing, so without --codec it opens the file under the name of
// the codec it was created with.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { codes } from '../errors.js';
import { SharedCache } from '../cache/shared-cache.js';
import { formatBytes } from '../text-table.js';
import { CommandError, EXIT, exitCodeOf, formatPairs, parseCommand, UsageError } from './common.js';

const FILE_OPTIONS = `Options:
      --codec <module>[#<export>]  optional: the codec the cache was created with, when not the
                                   default (the module's default export, or the named one), only
                                   to decode values for keys --values; without it they are shown
                                   as the codec's bytes. Its name must match the file's.
      --json                       machine-readable output on stdout
  -h, --help                       this help`;

const CODEC_USAGE = '[--codec <module>[#<export>]]';

export const CACHE_COMMANDS = {
  stats: {
    usage: `arenacache cache stats <file> ${CODEC_USAGE} [--json]`,
    about: "Print the cache's counters and sizes: stats(), summed over every thread that used the file, read without opening it as a cache (nothing is written). threads counts the threads alive in the processes using the file (this command is not one). The invalidation bus counters (per process, always 0 here) are left out of the table; --json prints the whole stats() object.",
    options: {},
  },
  verify: {
    usage: `arenacache cache verify <file> ${CODEC_USAGE} [--json]`,
    about:
      "Check the arena's invariants as found (SharedCache.inspect(file).verify()): read-only, with no lock and no recovery first, so damage is reported, not repaired, and writers are never held up. Exit code 3 when it finds problems, which are printed. A shard that stays busy (its lock held by a live thread, or changed by writers under every read) for 100 ms is listed as not checked, which is not a problem. --json prints { ok, problems, unchecked }.",
    options: {},
  },
  keys: {
    usage: `arenacache cache keys <file> [--prefix <p>] [--values] ${CODEC_USAGE} [--json]`,
    about:
      'List the live keys, sorted, one per line, read without opening the file as a cache: string keys as they are (JSON-quoted when they hold control characters or start with "hex:" or a double quote), Buffer keys as hex:<hex digits>. --prefix keeps string keys that start with <p>; a <p> of hex:<digits> also keeps the Buffer keys whose bytes start with those. --values adds each value after a tab: a string JSON-quoted, a number as it is, a Buffer as hex:<digits>, a value of the default codec (or of --codec\'s) decoded, one of another codec as <codec name> hex:<its bytes>. --json prints [{ key, kind }], kind "string" or "buffer" (key in hex), with --values also valueKind ("string", "number", "buffer", "codec" or "encoded") and value (hex for "buffer" and "encoded", which adds codec). Shards that stayed busy are named on stderr.',
    options: { prefix: { type: 'string' }, values: { type: 'boolean' } },
  },
  reset: {
    usage: `arenacache cache reset <file> ${CODEC_USAGE} [--json]`,
    about:
      'Remove every entry (clear()), for every process using the file, and flush the file: it opens the file with SharedCache.open(), as one more user (if no process has it open, the opener\'s recovery runs first). The file and its options stay: processes using it go on working and find the cache empty. Counters are kept.',
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
  return `Usage: arenacache cache <command> <file> [options]\n\nInspect (read-only) or empty the cache in a file made by SharedCache.open(), whether processes use it or not. The file is never created.\n\nCommands:\n${formatPairs(rows)}\n\n${FILE_OPTIONS}\n\nRun arenacache cache <command> --help for a command's options.\n${CACHE_EXIT_CODES}`;
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
      // Only a codec given with --codec can disagree (without it, the file's own is used).
      const names = CODEC_NAMES.exec(error.message);
      if (names === null || !codecGiven) break;
      const [, stored, given] = names;
      return fail(`${file} was created with the codec "${stored}", not "${given}" (the --codec module's)`);
    }
    default:
  }
  return fail(error.message.replace(API_HINT, ''), exitCodeOf(error));
}

/**
 * Runs `use(opened)` on what `open()` returns (its errors in the words of
 * the command line) and closes it afterwards.
 */
async function using(open, file, codecGiven, use) {
  let opened;
  try {
    opened = open();
  } catch (error) {
    throw openError(error, file, codecGiven);
  }
  try {
    return await use(opened);
  } finally {
    opened.close();
  }
}

/** Reads the existing cache file with SharedCache.inspect(), runs `use(inspector)` and closes it. */
async function withInspector(file, codecSpec, use) {
  const codec = codecSpec === undefined ? undefined : await loadCodec(codecSpec);
  return using(() => SharedCache.inspect(file, { codec }), file, codec !== undefined, use);
}

/** A codec under `name` for an open() that never encodes or decodes (reset's clear()). */
function namedOnly(name) {
  const refuse = () => {
    throw new Error(`arenacache cache reset does not encode or decode values of the codec "${name}"`);
  };
  return { name, encode: refuse, decode: refuse };
}

/** Opens the existing cache file for writing, runs `use(cache)` and closes it. */
async function withCache(file, codecSpec, use) {
  let codec = codecSpec === undefined ? undefined : await loadCodec(codecSpec);
  if (codec === undefined) {
    // The file's codec by name: clear() never needs the codec itself.
    const stored = await withInspector(file, undefined, (inspector) => (inspector.decodes ? undefined : inspector.codecName));
    if (stored !== undefined) codec = namedOnly(stored);
  }
  // No memoryBytes: open() never creates the file. No near cache: values
  // are never read. populate: false: a large file is not read in.
  return using(() => SharedCache.open(file, { nearCache: 0, populate: false, codec }), file, codecSpec !== undefined, use);
}

/** The lines naming shards that were not read, for stderr or the verify report. */
function uncheckedLines(unchecked) {
  return unchecked.map(({ shard, reason }) => `  shard ${shard}: not checked: ${reason}`);
}

/** Counters of the invalidation bus: per process, so always 0 in the command's own. */
const PROCESS_COUNTERS = /^(udp|redis|invalidation)/;

function statsText(file, stats) {
  const rows = [];
  for (const [name, value] of Object.entries(stats)) {
    if (PROCESS_COUNTERS.test(name)) continue;
    let shown = String(value);
    if (name === 'hitRatio' || name === 'smallShare') shown = `${(value * 100).toFixed(1)}%`;
    else if (name === 'lastOpen') shown = value === null ? 'not recorded' : lastOpenText(value);
    else if (name.endsWith('Bytes') && value >= 1024) shown = `${value} (${formatBytes(value)})`;
    rows.push([name, shown]);
  }
  return `${file}\n${formatPairs(rows)}`;
}

/** stats().lastOpen in one line: how the last recovering open found the file, and what it did. */
function lastOpenText({ how, ms, at, shardsChecked, shardsPending, shardsRepaired, entriesLost }) {
  const pending = shardsPending > 0 ? ` (${shardsPending} more left to check at first use)` : '';
  return `${how} (${new Date(at).toISOString()}, ${ms.toFixed(1)} ms): ${shardsChecked} shards checked${pending}, ${shardsRepaired} repaired, ${entriesLost} entries lost`;
}

/** A value as keys --values prints it (see the command's help). */
function shownValue({ valueKind, value, codec }) {
  if (valueKind === 'string') return JSON.stringify(value);
  if (valueKind === 'buffer') return `hex:${hex(value)}`;
  if (valueKind === 'encoded') return `<${codec}> hex:${hex(value)}`;
  return inspect(value, { depth: 6, breakLength: Infinity, compact: true });
}

/** A value as keys --values --json prints it: bytes in hex, a decoded value as it is. */
function jsonValue({ valueKind, value, codec, error }) {
  // A number as JSON has it (NaN and ±Infinity become null there: the text output shows them).
  if (valueKind === 'string' || valueKind === 'number' || valueKind === 'codec') return { valueKind, value };
  const shown = { valueKind, codec, value: hex(value), error };
  if (codec === undefined) delete shown.codec;
  if (error === undefined) delete shown.error;
  return shown;
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
    return withInspector(file, values.codec, (inspector) => {
      // The inspector is no user of the file: threads are the file's users'.
      const stats = inspector.stats();
      return { result: stats, text: statsText(file, stats) };
    });
  },
  verify({ file, values }) {
    return withInspector(file, values.codec, (inspector) => {
      const result = inspector.verify();
      const { problems, unchecked } = result;
      const skipped = unchecked.length === 0 ? '' : ` (${unchecked.length} of ${inspector.stats().shards} shards not checked)`;
      const lines = result.ok
        ? [`ok      ${file}${skipped}`]
        : [`FAILED  ${file}: ${problems.length} problem(s)${skipped}`, ...problems.map((problem) => `  ${problem}`)];
      lines.push(...uncheckedLines(unchecked));
      return { result, text: lines.join('\n'), code: result.ok ? EXIT.ok : EXIT.differs };
    });
  },
  keys({ file, values }) {
    return withInspector(file, values.codec, (inspector) => {
      const withValues = values.values === true;
      const read = withValues ? inspector.entries() : inspector.keys();
      const entries = withValues ? read.entries : read.keys.map((key) => ({ key }));
      const keep = keyFilter(values.prefix);
      const rows = [];
      for (const entry of entries) {
        const { key } = entry;
        const shown = typeof key === 'string' ? { key, kind: 'string' } : { key: hex(key), kind: 'buffer' };
        if (keep(shown)) rows.push({ shown, entry });
      }
      // Strings first, then Buffers; each in code unit order (not the locale's).
      rows.sort(({ shown: a }, { shown: b }) => (a.kind !== b.kind ? (a.kind === 'string' ? -1 : 1) : a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
      const lines = rows.map(({ shown: { key, kind }, entry }) => {
        const line = kind === 'string' ? shownString(key) : `hex:${key}`;
        return withValues ? `${line}\t${shownValue(entry)}` : line;
      });
      const result = rows.map(({ shown, entry }) => (withValues ? { ...shown, ...jsonValue(entry) } : shown));
      const unchecked = read.unchecked;
      const warning =
        unchecked.length === 0 ? undefined : `${file}: the keys of ${unchecked.length} shard(s) are not listed:\n${uncheckedLines(unchecked).join('\n')}`;
      return { result, text: lines.join('\n'), warning };
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

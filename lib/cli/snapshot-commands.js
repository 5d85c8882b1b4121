// The workspace snapshot commands of the arenacache command line
// (init, snapshot, restore, history, verify, status, gc, fork, pin): each
// parses its flags and calls arenacache/snapshot, which is loaded only when
// one of them runs (the help and the cache commands do without it).
import { formatBytes } from '../text-table.js';
import { EXIT, parseCommand, UsageError } from './common.js';

export const COMMON = `Common options:
  -C, --workspace <dir>  the workspace (default: the current directory)
      --json             machine-readable output on stdout
      --progress         show a progress bar on stderr (default when stderr is a terminal)
      --no-progress      never show one
  -h, --help             this help`;

export const COMMANDS = {
  init: {
    usage: 'arenacache init [dir] [--repository <path>] [--keep-last <n>] [--keep-within <duration>]',
    about: 'Make a directory a workspace (its repository goes in <dir>/.arenacache unless --repository says where, outside the tree).',
    options: { repository: { type: 'string' }, 'keep-last': { type: 'string' }, 'keep-within': { type: 'string' } },
    args: [0, 1],
  },
  snapshot: {
    usage: 'arenacache snapshot [-m <message>] [--tag <tag>]... [--engine auto|reflink|copy] [--threads <n>] [--no-durable]',
    about: 'Snapshot the worktree. Files unchanged since its head snapshot are not read again.',
    options: { message: { type: 'string', short: 'm' }, tag: { type: 'string', multiple: true }, engine: { type: 'string' }, threads: { type: 'string' }, 'no-durable': { type: 'boolean' } },
  },
  restore: {
    usage: 'arenacache restore <id> [--force] [--threads <n>]',
    about: 'Replace the worktree with a snapshot, in one atomic swap. Refuses over unsnapshotted changes unless --force.',
    options: { force: { type: 'boolean' }, threads: { type: 'string' } },
    args: 1,
  },
  history: {
    usage: 'arenacache history [--tag <tag>] [--limit <n>]',
    about: 'List snapshots, newest first (* marks worktree heads).',
    options: { tag: { type: 'string' }, limit: { type: 'string' } },
  },
  verify: {
    usage: 'arenacache verify [<id>|all] [--worktree] [--threads <n>]',
    about: "Recompute content hashes: of the stored snapshots (default 'all'), or with --worktree of this worktree against a snapshot. Exit code 3 when anything differs.",
    options: { worktree: { type: 'boolean' }, threads: { type: 'string' } },
    args: [0, 1],
  },
  status: {
    usage: 'arenacache status',
    about: 'What changed in the worktree since its head snapshot. Exit code 3 when anything did.',
    options: {},
  },
  gc: {
    usage: 'arenacache gc [--dry-run] [--keep-last <n>] [--keep-within <duration>]',
    about: 'Delete snapshots that are not pinned, not in an unfinished operation, not a worktree head or its ancestor, and older than the retention; then the stored files only they used.',
    options: { 'dry-run': { type: 'boolean' }, 'keep-last': { type: 'string' }, 'keep-within': { type: 'string' } },
  },
  fork: {
    usage: 'arenacache fork <id> <dir> [--name <name>]',
    about: 'Make a new worktree at <dir> from a snapshot, sharing this repository.',
    options: { name: { type: 'string' }, threads: { type: 'string' } },
    args: 2,
  },
  pin: {
    usage: 'arenacache pin <id> [--until <date>] | arenacache pin --remove <id>',
    about: 'Keep a snapshot from gc, for good or until a date (ISO 8601).',
    options: { until: { type: 'string' }, remove: { type: 'boolean' } },
    args: 1,
  },
};

/** @type {import('node:util').ParseArgsConfig['options']} */
const COMMON_OPTIONS = {
  workspace: { type: 'string', short: 'C' },
  json: { type: 'boolean' },
  progress: { type: 'boolean' },
  'no-progress': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

function commandHelp(name) {
  const command = COMMANDS[name];
  return `Usage: ${command.usage}\n\n${command.about}\n\n${COMMON}`;
}

function integer(value, flag) {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a whole number (got ${JSON.stringify(value)})`);
  return Number(value);
}

const UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
function duration(value, flag) {
  if (value === undefined) return undefined;
  const match = /^(\d+)(ms|s|m|h|d|w)?$/.exec(value);
  if (match === null) throw new UsageError(`--${flag} must be a duration such as 500ms, 30s, 15m, 12h, 7d or 2w (got ${JSON.stringify(value)})`);
  return Number(match[1]) * UNITS[match[2] ?? 'ms'];
}

/**
 * Progress on stderr: on a terminal one bar redrawn in place at most every
 * 100 ms; elsewhere (--progress into a file or a pipe) a plain line at most
 * every second and at the end of each phase, with no escape codes.
 */
function progressBar(enabled) {
  if (!enabled) return { onProgress: undefined, done() {} };
  const terminal = process.stderr.isTTY === true;
  const interval = terminal ? 100 : 1000;
  let last = 0;
  let drawn = false;
  return {
    onProgress({ phase, done, total, bytes }) {
      const now = Date.now();
      if (now - last < interval && done !== total) return;
      last = now;
      const width = 30;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      const line = `${phase.padEnd(8)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} files  ${formatBytes(bytes)}`;
      process.stderr.write(terminal ? `\r${line}\x1b[K` : `${line}\n`);
      drawn = true;
    },
    done() {
      if (drawn && terminal) process.stderr.write('\r\x1b[K');
    },
  };
}

function describeSnapshot(d) {
  const counts = Object.entries(d.engine.counts)
    .filter(([, n]) => n > 0)
    .map(([engine, n]) => `${engine} ${n}`)
    .join(', ');
  const lines = [
    `snapshot ${d.id}${d.tags.length ? ` [${d.tags.join(', ')}]` : ''}`,
    `  ${d.files} files, ${d.directories} directories, ${d.symlinks} symlinks, ${formatBytes(d.bytes)} (${formatBytes(d.storedBytes)} newly stored)`,
    `  engine: requested ${d.engine.requested}, used ${d.engine.used}${counts ? ` (${counts})` : ''}${d.engine.degraded ? ', DEGRADED: some files fell back from reflink' : ''}`,
  ];
  for (const { path, reason } of d.skipped) lines.push(`  skipped ${path} (${reason})`);
  for (const path of d.unstable) lines.push(`  changed while read: ${path}`);
  return lines.join('\n');
}

function describeDiff(report) {
  const lines = [];
  for (const item of report.differ) lines.push(`  differs  ${item.path} (${item.reason}${item.expected !== undefined ? `: expected ${item.expected}, found ${item.actual}` : ''})`);
  for (const item of report.missing) lines.push(`  missing  ${item}`);
  for (const item of report.extra) lines.push(`  extra    ${item}`);
  return lines;
}

/** arenacache/snapshot's Workspace, once a command needs it. */
let Workspace;

/** Runs workspace command `name` (a key of COMMANDS) with the arguments after it. */
export async function runSnapshotCommand(name, rest) {
  const command = COMMANDS[name];
  const { values, positionals, help } = parseCommand({ name, ...command }, rest, COMMON_OPTIONS);
  if (help) return { text: commandHelp(name), code: EXIT.ok };
  ({ Workspace } = await import('../snapshot/index.js'));
  const dir = values.workspace ?? process.cwd();
  const bar = progressBar(values['no-progress'] ? false : values.progress || (process.stderr.isTTY === true && !values.json));
  const threads = integer(values.threads, 'threads');
  try {
    return await COMMAND_RUNNERS[name]({ values, positionals, dir, threads, onProgress: bar.onProgress });
  } finally {
    bar.done();
  }
}

const COMMAND_RUNNERS = {
  async init({ values, positionals, dir }) {
    const workspace = await Workspace.init(positionals[0] ?? dir, {
      repository: values.repository,
      keepLast: integer(values['keep-last'], 'keep-last'),
      keepWithin: duration(values['keep-within'], 'keep-within'),
    });
    const result = { path: workspace.path, repository: workspace.repositoryPath, worktree: workspace.name };
    return { result, text: `Initialized workspace ${result.path} (repository ${result.repository})` };
  },
  async snapshot({ values, dir, threads, onProgress }) {
    const workspace = await Workspace.open(dir);
    const result = await workspace.snapshot({ message: values.message, tags: values.tag, engine: values.engine, threads, durable: values['no-durable'] ? false : undefined, onProgress });
    return { result, text: describeSnapshot(result) };
  },
  async restore({ values, positionals, dir, threads, onProgress }) {
    const workspace = await Workspace.open(dir);
    const result = await workspace.restore(positionals[0], { force: values.force === true, threads, onProgress });
    return { result, text: `Restored ${workspace.path} to ${result.id} (${result.files} files, ${formatBytes(result.bytes)})` };
  },
  async history({ values, dir }) {
    const workspace = await Workspace.open(dir);
    const options = { tag: values.tag, limit: integer(values.limit, 'limit') };
    return { result: workspace.history(options), text: workspace.history({ ...options, format: 'table' }) };
  },
  async verify({ values, positionals, dir, threads, onProgress }) {
    const workspace = await Workspace.open(dir);
    const result = await workspace.verify(positionals[0] ?? 'all', { worktree: values.worktree === true, threads, onProgress });
    const reports = result.snapshots ?? [result];
    const lines = [];
    for (const report of reports) {
      const subject = report.worktree ? `${report.worktree} against ${report.id}` : report.id;
      lines.push(`${report.ok ? 'ok    ' : 'FAILED'}  ${subject}  ${report.files} files, ${formatBytes(report.bytes)}`);
      if (report.descriptor && report.descriptor !== 'ok') lines.push(`  descriptor: ${report.descriptor}`);
      if (report.manifest && report.manifest !== 'ok') lines.push(`  manifest: ${report.manifest}`);
      lines.push(...describeDiff(report));
    }
    if (result.snapshots) for (const file of result.extra) lines.push(`extra in the repository: ${file}`);
    return { result, text: lines.join('\n') || 'no snapshots', code: result.ok ? EXIT.ok : EXIT.differs };
  },
  async status({ dir }) {
    const workspace = await Workspace.open(dir);
    const result = await workspace.status();
    const lines = result.ok ? [`clean (head ${workspace.head ?? 'none'})`] : [`changes since ${workspace.head ?? 'no snapshot'}:`, ...describeDiff(result)];
    return { result, text: lines.join('\n'), code: result.ok ? EXIT.ok : EXIT.differs };
  },
  async gc({ values, dir }) {
    const options = { dryRun: values['dry-run'] === true, keepLast: integer(values['keep-last'], 'keep-last'), keepWithin: duration(values['keep-within'], 'keep-within') };
    const workspace = await Workspace.open(dir);
    const result = await workspace.gc(options);
    const verb = result.dryRun ? 'would delete' : 'deleted';
    const lines = [`${verb} ${result.delete.length} snapshot(s) and ${result.files.length} stored file(s), ${formatBytes(result.bytes)}`];
    for (const id of result.delete) lines.push(`  ${verb} ${id}`);
    for (const { id, reasons } of result.keep) lines.push(`  keeps  ${id}: ${reasons.join('; ')}`);
    if (!result.sweep) lines.push(`  stored files not swept: ${result.sweepBlockedBy}`);
    return { result, text: lines.join('\n') };
  },
  async fork({ values, positionals, dir, threads, onProgress }) {
    const workspace = await Workspace.open(dir);
    const forked = await workspace.fork(positionals[0], positionals[1], { name: values.name, threads, onProgress });
    const result = { path: forked.path, worktree: forked.name, head: forked.head };
    return { result, text: `Forked ${result.head} into ${result.path} (worktree ${result.worktree})` };
  },
  async pin({ values, positionals, dir }) {
    const workspace = await Workspace.open(dir);
    if (values.remove) {
      const removed = await workspace.unpin(positionals[0]);
      return { result: { removed }, text: removed ? 'Unpinned' : 'It was not pinned' };
    }
    const result = await workspace.pin(positionals[0], { until: values.until });
    return { result, text: `Pinned ${result.id}${result.until ? ` until ${result.until}` : ''}` };
  },
};

// The arenacache command's workspace commands: help, usage errors (exit 2), a
// whole session (init, snapshot, history, status, verify, restore, fork,
// pin, gc), a busy workspace (exit 4), and progress only to a terminal or on
// request, never as escape codes into a pipe.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Workspace } from '../lib/snapshot/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { writeTree } from './helpers/workspace-tree.js';

const bin = fileURLToPath(new URL('../bin/arenacache.js', import.meta.url));

function cli(args, cwd) {
  const result = spawnSync(process.execPath, [bin, ...args], { cwd, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const json = (args, cwd) => {
  const result = cli([...args, '--json'], cwd);
  return { ...result, value: JSON.parse(result.stdout) };
};

test('help for the tool and for each command', () => {
  const main = cli(['--help']);
  assert.equal(main.code, 0);
  for (const command of ['init', 'snapshot', 'restore', 'history', 'verify', 'status', 'gc', 'fork', 'pin']) {
    assert.match(main.stdout, new RegExp(`^  ${command} `, 'm'));
    const help = cli([command, '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, new RegExp(`^Usage: arenacache ${command}`));
    assert.match(help.stdout, /--json/);
  }
  assert.match(main.stdout, /Exit codes: 0 ok, 1 failed, 2 usage error, 3 verify\/status found differences, 4 workspace busy, 5 workspace or snapshot not found/);
});

test('usage errors exit 2 and say what is wrong', (t) => {
  const dir = tempDir(t, 'cli');
  // Nothing asked: the usage, on stderr, as a usage error (help asked for exits 0, above).
  for (const args of [[], ['cache']]) {
    const bare = cli(args, dir);
    assert.equal(bare.code, 2, `arenacache ${args.join(' ')}`);
    assert.equal(bare.stdout, '');
    assert.match(bare.stderr, /^Usage: arenacache /);
  }
  assert.deepEqual(cli(['frobnicate'], dir), { code: 2, stdout: '', stderr: 'arenacache: unknown command "frobnicate"; run arenacache --help\n' });
  const missing = cli(['restore'], dir);
  assert.equal(missing.code, 2);
  assert.equal(missing.stderr, 'arenacache: restore takes 1 argument(s), got 0; usage: arenacache restore <id> [--force] [--threads <n>]\n');
  const threads = cli(['snapshot', '--threads', 'many'], dir);
  assert.equal(threads.code, 2);
  assert.equal(threads.stderr, 'arenacache: --threads must be a whole number (got "many")\n');
  const unknown = cli(['snapshot', '--colour'], dir);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^arenacache: Unknown option '--colour'.*; run arenacache snapshot --help\n$/);
  const within = cli(['gc', '--keep-within', 'soon'], dir);
  assert.equal(within.code, 2);
  assert.equal(within.stderr, 'arenacache: --keep-within must be a duration such as 500ms, 30s, 15m, 12h, 7d or 2w (got "soon")\n');
  const engine = json(['snapshot', '--engine', 'warp'], dir);
  assert.equal(engine.code, 5, 'no workspace here yet');
  assert.equal(engine.value.error.code, 'ERR_WORKSPACE_NOT_FOUND');
});

test('a session: init, snapshot, history, status, verify, restore, fork, pin, gc', async (t) => {
  const dir = tempDir(t, 'cli');
  writeTree(dir, { 'a.txt': 'a', 'src/b.txt': 'b', 'big.bin': Buffer.alloc(100 * 1024, 5) });
  const init = json(['init'], dir);
  assert.equal(init.code, 0);
  assert.deepEqual(init.value, { path: dir, repository: path.join(dir, '.arenacache'), worktree: 'main' });

  const first = json(['snapshot', '-m', 'first', '--tag', 'v1', '--no-durable'], dir);
  assert.equal(first.code, 0);
  assert.equal(first.value.message, 'first');
  assert.deepEqual(first.value.tags, ['v1']);
  assert.equal(first.value.files, 3);
  const human = cli(['snapshot', '-m', 'second'], dir);
  assert.equal(human.code, 0);
  assert.match(human.stdout, /^snapshot \d{8}T\d{9}Z-[0-9a-f]{6}\n {2}3 files, 1 directories, 0 symlinks, 100 KiB \(.+ newly stored\)\n {2}engine: requested auto, used /);

  const history = json(['history'], dir);
  assert.equal(history.value.length, 2);
  assert.equal(history.value[1].id, first.value.id);
  const table = cli(['history'], dir);
  assert.match(table.stdout, /^\s+ID\s+TIME\s+FILES/);
  assert.match(table.stdout, /v1/);

  assert.equal(cli(['status'], dir).code, 0);
  writeFileSync(path.join(dir, 'a.txt'), 'changed');
  const dirty = cli(['status'], dir);
  assert.equal(dirty.code, 3);
  assert.match(dirty.stdout, /differs {2}a\.txt \(size: expected 1, found 7\)/);

  const verified = json(['verify'], dir);
  assert.equal(verified.code, 0);
  assert.equal(verified.value.ok, true);
  const worktree = cli(['verify', 'v1', '--worktree'], dir);
  assert.equal(worktree.code, 3);
  assert.match(worktree.stdout, /^FAILED {2}.+ against \d{8}T/);

  const refused = cli(['restore', 'v1'], dir);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^arenacache: the worktree has 1 change\(s\) not in its head snapshot .+; snapshot them or pass \{ force: true \}\n$/);
  const restored = cli(['restore', 'v1', '--force'], dir);
  assert.equal(restored.code, 0);
  assert.match(restored.stdout, new RegExp(`^Restored ${dir} to ${first.value.id} \\(3 files, 100 KiB\\)`));
  assert.equal(cli(['status'], dir).code, 0);
  assert.equal(json(['restore', 'nosuchtag'], dir).code, 5);

  const forkDir = path.join(tempDir(t, 'cli-fork'), 'f');
  const fork = json(['fork', first.value.id.slice(-6), forkDir], dir);
  assert.deepEqual(fork.value, { path: forkDir, worktree: 'f', head: first.value.id });
  assert.equal(cli(['status', '-C', forkDir]).code, 0);

  const pin = json(['pin', 'v1', '--until', '2099-12-31'], dir);
  assert.equal(pin.value.until, '2099-12-31T00:00:00.000Z');
  assert.deepEqual(json(['pin', '--remove', 'v1'], dir).value, { removed: true });
  const plan = json(['gc', '--dry-run', '--keep-last', '0', '--keep-within', '0'], dir);
  assert.equal(plan.code, 0);
  assert.equal(plan.value.dryRun, true);
  assert.ok(Array.isArray(plan.value.delete));
});

test('a busy workspace exits 4', async (t) => {
  const dir = tempDir(t, 'cli');
  writeTree(dir, { 'a.txt': 'a' });
  const workspace = await Workspace.init(dir);
  const running = workspace.snapshot(); // holds the lock from its first step
  const busy = json(['snapshot'], dir);
  await running;
  assert.equal(busy.code, 4);
  assert.equal(busy.value.error.code, 'ERR_WORKSPACE_BUSY');
});

test('progress goes only to a terminal unless asked for, and never as escape codes into a pipe', (t) => {
  const dir = tempDir(t, 'cli');
  writeTree(dir, Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f/${i}.txt`, `file ${i}`])));
  assert.equal(cli(['init'], dir).code, 0);
  // stderr is a pipe here: no progress by default.
  const quiet = cli(['snapshot', '-m', 'quiet'], dir);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.equal(quiet.stderr, '');
  // --progress into a pipe: plain lines, one per update, no escape codes.
  writeTree(dir, Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`g/${i}.txt`, `new file ${i}`])));
  const forced = cli(['snapshot', '-m', 'forced', '--progress'], dir);
  assert.equal(forced.code, 0, forced.stderr);
  assert.ok(!forced.stderr.includes('\x1b') && !forced.stderr.includes('\r'), JSON.stringify(forced.stderr));
  assert.match(forced.stderr, /^\w+ +\[[#.]{30}\] \d+\/\d+ files {2}\S/m);
  assert.ok(forced.stderr.endsWith('\n'));
});

// The cache file commands of the arenacache command line (arenacache cache
// stats|verify|keys|reset FILE) and --version: output (human and --json),
// every error with its message and exit code, and the commands on a file
// that another process is using at the same time.
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Arena } from '../lib/arena/entries/arena.js';
import { STAMP_F64 } from '../lib/arena/entries/record.js';
import { SharedCache } from '../lib/index.js';
import { arenaPath } from './helpers/arena-files.js';
import { jsonCodec } from './helpers/codecs.js';
import { cli, cliFailure as failure, cliJson as json } from './helpers/cli.js';
import { tempDir } from './helpers/fs-tree.js';
import { MiB } from './helpers/units.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/cli-cache-child.js', import.meta.url));
const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));

/** A cache file holding a few string and Buffer keys, closed again. */
function cacheFile(t, options = {}) {
  const file = arenaPath(t, 'cli');
  const cache = SharedCache.open(file, { memoryBytes: 2 * MiB, ...options });
  cache.set('user:1', { name: 'ada' });
  cache.set('user:2', 'text');
  cache.set('session:9', Buffer.from('raw'));
  cache.set('hex:00', 'a string that looks like a Buffer key');
  cache.set('two\nlines', 'a key with a newline');
  cache.set(Buffer.from([0xab, 0x01]), 'buffer key');
  cache.set(Buffer.from([0x00, 0xff]), 'buffer key');
  cache.get('user:1');
  cache.get('user:3'); // a miss
  cache.close();
  return file;
}

const KEYS_TEXT = ['"hex:00"', 'session:9', '"two\\nlines"', 'user:1', 'user:2', 'hex:00ff', 'hex:ab01'].join('\n');
const KEYS_JSON = [
  { key: 'hex:00', kind: 'string' },
  { key: 'session:9', kind: 'string' },
  { key: 'two\nlines', kind: 'string' },
  { key: 'user:1', kind: 'string' },
  { key: 'user:2', kind: 'string' },
  { key: '00ff', kind: 'buffer' },
  { key: 'ab01', kind: 'buffer' },
];

test('--version and -v print the version of package.json', async () => {
  const [long, short, asJson, extra] = await Promise.all([cli('--version'), cli('-v'), json('--version'), cli('--version', 'extra')]);
  assert.deepEqual(long, { code: 0, stdout: `${version}\n`, stderr: '' });
  assert.deepEqual(short, { code: 0, stdout: `${version}\n`, stderr: '' });
  assert.equal(asJson.code, 0);
  assert.deepEqual(asJson.value, { version });
  assert.deepEqual(extra, failure(2, '--version takes no arguments (got "extra")'));
});

test('help: the main help lists the cache commands, and each has its own', async () => {
  const names = ['stats', 'verify', 'keys', 'reset'];
  const [main, bare, flag, ...commands] = await Promise.all([cli('--help'), cli('cache'), cli('cache', '--help'), ...names.map((name) => cli('cache', name, '--help')), cli('cache', 'keys', '-h')]);
  assert.equal(main.code, 0);
  for (const name of names) assert.match(main.stdout, new RegExp(`^  cache ${name} <file> +\\S`, 'm'));
  assert.match(main.stdout, /^ {2}-v, --version +print the version of arenacache$/m);
  assert.match(main.stdout, /for the cache commands, 3 cache verify found problems, 4 the cache file stayed locked by another process, 5 no such cache file\./);
  // `arenacache cache` with nothing asked is a usage error: the same help, on stderr, exit 2.
  assert.deepEqual(bare, { ...flag, code: 2, stdout: '', stderr: flag.stdout });
  assert.equal(flag.code, 0);
  assert.match(flag.stdout, /^Usage: arenacache cache <command> <file> \[options\]\n/);
  for (const name of names) assert.match(flag.stdout, new RegExp(`^  ${name} <file> +\\S`, 'm'));
  assert.match(flag.stdout, /Exit codes: 0 ok, 1 failed .*, 2 usage error, 3 cache verify found problems, 4 .*, 5 no such cache file\./);
  const short = commands.pop();
  names.forEach((name, i) => {
    assert.equal(commands[i].code, 0);
    assert.match(commands[i].stdout, new RegExp(`^Usage: arenacache cache ${name} <file> `));
    assert.match(commands[i].stdout, /--json/);
    assert.match(commands[i].stdout, /--codec <module>\[#<export>\]/);
  });
  assert.match(commands[2].stdout, /--prefix <p>/);
  assert.deepEqual(short, commands[2]);
});

test('cache stats: an aligned table, or stats() as JSON', async (t) => {
  const file = cacheFile(t);
  const [asJson, human] = await Promise.all([json('cache', 'stats', file), cli('cache', 'stats', file)]);
  assert.equal(asJson.code, 0);
  assert.equal(asJson.stderr, '');
  const stats = asJson.value;
  assert.equal(stats.policy, 'hybrid');
  assert.equal(stats.entries, 7);
  assert.equal(stats.sets, 7);
  assert.equal(stats.gets, 2);
  assert.equal(stats.hits, 1);
  assert.equal(stats.memoryBytes, 2 * MiB);
  // The two commands above ran at once, each a user of the file for the other: alone, one sees no other thread.
  assert.equal((await json('cache', 'stats', file)).value.threads, 0, 'nothing else uses the file: the command does not count itself');
  // The whole stats() object, invalidation counters included.
  assert.deepEqual(Object.keys(stats), Object.keys(new SharedCache({ memoryBytes: MiB }).stats()));

  assert.equal(human.code, 0);
  assert.equal(human.stderr, '');
  const [first, ...lines] = human.stdout.trimEnd().split('\n');
  assert.equal(first, file);
  const shown = Object.keys(stats).filter((name) => !/^(udp|redis|invalidation)/.test(name));
  assert.deepEqual(
    lines.map((line) => line.split(/\s+/)[0]),
    shown,
    'every field but the per-process invalidation counters, in stats() order',
  );
  const columns = new Set(lines.map((line) => /^\S+ +/.exec(line)[0].length));
  assert.equal(columns.size, 1, 'the values are aligned in one column');
  assert.match(human.stdout, /^policy +hybrid$/m);
  assert.match(human.stdout, /^entries +7$/m);
  assert.match(human.stdout, /^hitRatio +50\.0%$/m);
  assert.match(human.stdout, /^memoryBytes +2097152 \(2\.0 MiB\)$/m);
  assert.match(human.stdout, /^liveBytes +\d+$/m, 'under 1 KiB: no size in parentheses');
});

test('cache keys: sorted, Buffer keys as hex:, ambiguous strings quoted; --prefix; --json', async (t) => {
  const file = cacheFile(t);
  const [all, allJson, users, usersJson, hexAb, hexAll, hex00, none, noneJson] = await Promise.all([
    cli('cache', 'keys', file),
    json('cache', 'keys', file),
    cli('cache', 'keys', file, '--prefix', 'user:'),
    json('cache', 'keys', file, '--prefix=user:'),
    cli('cache', 'keys', file, '--prefix', 'hex:AB'),
    cli('cache', 'keys', file, '--prefix', 'hex:'),
    cli('cache', 'keys', file, '--prefix', 'hex:00'),
    cli('cache', 'keys', file, '--prefix', 'nobody:'),
    json('cache', 'keys', file, '--prefix', 'nobody:'),
  ]);
  assert.deepEqual(all, { code: 0, stdout: `${KEYS_TEXT}\n`, stderr: '' });
  assert.equal(allJson.code, 0);
  assert.deepEqual(allJson.value, KEYS_JSON);
  assert.deepEqual(users, { code: 0, stdout: 'user:1\nuser:2\n', stderr: '' });
  assert.deepEqual(usersJson.value, [
    { key: 'user:1', kind: 'string' },
    { key: 'user:2', kind: 'string' },
  ]);
  // hex:<digits> matches Buffer keys by their bytes (any case), and string keys that start with it.
  assert.deepEqual(hexAb, { code: 0, stdout: 'hex:ab01\n', stderr: '' });
  assert.deepEqual(hexAll, { code: 0, stdout: '"hex:00"\nhex:00ff\nhex:ab01\n', stderr: '' });
  assert.deepEqual(hex00, { code: 0, stdout: '"hex:00"\nhex:00ff\n', stderr: '' });
  // Nothing matches: no output at all (a count with wc -l is 0), exit 0.
  assert.deepEqual(none, { code: 0, stdout: '', stderr: '' });
  assert.deepEqual(noneJson.value, []);
});

test('cache verify: ok exits 0; problems are printed and exit 3', async (t) => {
  const file = cacheFile(t);
  // Damage a record while this process keeps the file open (the command
  // reads it read-only either way: test/cli.cache-inspect.test.js damages closed files).
  const damaged = arenaPath(t, 'cli-damaged');
  const cache = SharedCache.open(damaged, { memoryBytes: 2 * MiB, shards: 1 });
  t.after(() => cache.close());
  cache.set('a', 'first');
  cache.set('b', 'second');
  Arena.attach(cache.handle.buffer).shards[0].f64[STAMP_F64] = 1e9;
  const problem = 'shard 0: live record at 0 has write stamp 1000000000, outside [1, 2]';

  const [ok, okJson, failed, failedJson] = await Promise.all([
    cli('cache', 'verify', file),
    json('cache', 'verify', file),
    cli('cache', 'verify', damaged),
    json('cache', 'verify', damaged),
  ]);
  assert.deepEqual(ok, { code: 0, stdout: `ok      ${file}\n`, stderr: '' });
  assert.equal(okJson.code, 0);
  assert.deepEqual(okJson.value, { ok: true, problems: [], unchecked: [] });
  assert.deepEqual(failed, { code: 3, stdout: `FAILED  ${damaged}: 1 problem(s)\n  ${problem}\n`, stderr: '' });
  assert.equal(failedJson.code, 3);
  assert.deepEqual(failedJson.value, { ok: false, problems: [problem], unchecked: [] });
});

test('cache reset: clear() empties the cache and the file stays usable', async (t) => {
  const file = cacheFile(t);
  assert.deepEqual(await cli('cache', 'reset', file), { code: 0, stdout: `Cleared ${file} (it held 7 entries)\n`, stderr: '' });
  const again = await json('cache', 'reset', file);
  assert.equal(again.code, 0);
  assert.deepEqual(again.value, { path: file, entriesBefore: 0 });
  const [keys, stats] = await Promise.all([cli('cache', 'keys', file), json('cache', 'stats', file)]);
  assert.deepEqual(keys, { code: 0, stdout: '', stderr: '' });
  assert.equal(stats.value.entries, 0);
  assert.equal(stats.value.sets, 7, 'counters are kept');
  assert.equal(stats.value.memoryBytes, 2 * MiB, 'the same file, not a new one');
  const cache = SharedCache.open(file);
  t.after(() => cache.close());
  cache.set('after', 'works');
  assert.equal(cache.get('after'), 'works');
});

test('a file that does not exist: exit 5, and it is not created', async (t) => {
  const file = arenaPath(t, 'cli-missing');
  const below = path.join(file, 'below');
  const [stats, reset, asJson, inMissingDir] = await Promise.all([cli('cache', 'stats', file), cli('cache', 'reset', file), json('cache', 'keys', file), cli('cache', 'verify', below)]);
  assert.deepEqual(stats, failure(5, `cache file ${file} does not exist`));
  assert.deepEqual(reset, failure(5, `cache file ${file} does not exist`));
  assert.equal(asJson.code, 5);
  assert.deepEqual(asJson.value, { error: { code: 'ERR_ARENA_FILE', message: `cache file ${file} does not exist` } });
  assert.deepEqual(inMissingDir, failure(5, `cache file ${below} does not exist`));
  assert.throws(() => readFileSync(file), { code: 'ENOENT' });
});

test('files that are not cache files: exit 1 and say why; they are left untouched', async (t) => {
  const dir = tempDir(t, 'cli-cache');
  const text = path.join(dir, 'notes.txt');
  writeFileSync(text, 'hello world\n'.repeat(500));
  const small = path.join(dir, 'small');
  writeFileSync(small, 'hello');
  const empty = path.join(dir, 'empty');
  writeFileSync(empty, '');
  const directory = path.join(dir, 'sub');
  mkdirSync(directory);
  const short = path.join(dir, 'short.json'); // shorter than an arena header, longer than its magic
  writeFileSync(short, JSON.stringify({ name: 'not a cache' }).padEnd(2000));
  const cutShort = cacheFile(t);
  truncateSync(cutShort, 2000);
  const [textResult, textJson, smallResult, emptyResult, directoryResult, shortJson, cutShortJson] = await Promise.all([
    cli('cache', 'stats', text),
    json('cache', 'stats', text),
    cli('cache', 'keys', small),
    cli('cache', 'reset', empty),
    cli('cache', 'verify', directory),
    json('cache', 'keys', short),
    json('cache', 'keys', cutShort),
  ]);
  assert.deepEqual(textResult, failure(1, `${text} is not a cache file: it does not start with an arena header`));
  assert.equal(textJson.code, 1);
  assert.deepEqual(textJson.value, { error: { code: 'ERR_ARENA_NOT_ARENA', message: `${text} is not a cache file: it does not start with an arena header` } });
  assert.deepEqual(smallResult, failure(1, `${small} is not a cache file: it does not start with an arena header`));
  assert.deepEqual(emptyResult, failure(1, `${empty} is not a cache file: it holds no arena (it is empty, or its creation never finished)`));
  assert.deepEqual(directoryResult, failure(1, `arena file ${directory} is not a regular file`));
  assert.equal(shortJson.code, 1);
  assert.deepEqual(shortJson.value, { error: { code: 'ERR_ARENA_NOT_ARENA', message: `${short} is not a cache file: it does not start with an arena header` } });
  assert.equal(cutShortJson.code, 1, 'an arena file cut short is another failure');
  assert.deepEqual(cutShortJson.value, { error: { code: 'ERR_ARENA_TRUNCATED', message: `arena file ${cutShort} is 2000 bytes, too small for an arena header` } });
  assert.equal(readFileSync(text, 'utf8'), 'hello world\n'.repeat(500));
  assert.equal(readFileSync(small, 'utf8'), 'hello');
  assert.equal(readFileSync(empty).length, 0);
});

test('a damaged header, another layout version, a file others may write: exit 1 with the reason', async (t) => {
  const overwrite = (file, offset, u32) => {
    const fd = openSync(file, 'r+');
    const bytes = Buffer.alloc(4);
    bytes.writeUInt32LE(u32);
    writeSync(fd, bytes, 0, 4, offset);
    closeSync(fd);
  };
  const corrupt = cacheFile(t);
  overwrite(corrupt, 8, 1234); // the header size field
  const future = cacheFile(t);
  overwrite(future, 4, 99); // the layout version
  const shared = cacheFile(t);
  chmodSync(shared, 0o620);
  const [damaged, damagedJson, version99, version99Json, writable, writableJson] = await Promise.all([
    cli('cache', 'stats', corrupt),
    json('cache', 'stats', corrupt),
    cli('cache', 'keys', future),
    json('cache', 'keys', future),
    cli('cache', 'stats', shared),
    json('cache', 'stats', shared),
  ]);
  assert.deepEqual(damaged, failure(1, `arena file ${corrupt}: arena header size is 1234, expected 4096`));
  assert.equal(damagedJson.value.error.code, 'ERR_ARENA_CORRUPT');
  assert.equal(version99.code, 1);
  assert.match(version99.stderr, new RegExp(`^arenacache: arena file ${future}: arena layout version 99 is not supported; this arenacache reads versions? [\\d to]+\\n$`));
  assert.equal(version99Json.value.error.code, 'ERR_ARENA_VERSION');
  assert.deepEqual(writable, failure(1, `arena file ${shared} has mode 0620, which lets other users write to it; chmod it to 600`));
  assert.equal(writableJson.value.error.code, 'ERR_ARENA_PERMISSIONS');
});

test('usage errors exit 2: unknown subcommand or option, missing or extra FILE, missing option value', async (t) => {
  const file = cacheFile(t);
  const results = await Promise.all([
    cli('cache', 'frobnicate', file),
    cli('cache', 'toString', file),
    cli('cache', 'stats'),
    cli('cache', 'keys', file, 'other'),
    cli('cache', 'stats', file, '--colour'),
    cli('cache', 'keys', file, '--prefix'),
    cli('cache', 'verify', file, '--prefix', 'x'),
    cli('cache', 'stats', ''),
    json('cache', 'reset'),
  ]);
  const [unknownCommand, inherited, noFile, twoFiles, unknown, noValue, notForVerify, emptyPath, asJson] = results;
  assert.deepEqual(unknownCommand, failure(2, 'unknown cache command "frobnicate"; run arenacache cache --help'));
  assert.deepEqual(inherited, failure(2, 'unknown cache command "toString"; run arenacache cache --help'));
  assert.deepEqual(noFile, failure(2, 'cache stats takes 1 argument(s), got 0; usage: arenacache cache stats <file> [--codec <module>[#<export>]] [--json]'));
  assert.deepEqual(
    twoFiles,
    failure(2, 'cache keys takes 1 argument(s), got 2; usage: arenacache cache keys <file> [--prefix <p>] [--values] [--codec <module>[#<export>]] [--json]'),
  );
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stdout, '');
  assert.match(unknown.stderr, /^arenacache: Unknown option '--colour'.*; run arenacache cache stats --help\n$/);
  assert.deepEqual(noValue, failure(2, "Option '--prefix <value>' argument missing; run arenacache cache keys --help"));
  assert.equal(notForVerify.code, 2, '--prefix is for keys only');
  assert.match(notForVerify.stderr, /^arenacache: Unknown option '--prefix'.*; run arenacache cache verify --help\n$/);
  assert.deepEqual(emptyPath, failure(2, 'path must be a non-empty file path without NUL characters (got "")'));
  assert.equal(asJson.code, 2);
  assert.equal(asJson.value.error.code, 'ERR_USAGE');
  assert.match(asJson.value.error.message, /^cache reset takes 1 argument\(s\), got 0; /);
  assert.equal((await json('cache', 'keys', file)).value.length, 7, 'nothing was changed by the failed commands');
});

test('a cache made with another codec: no --codec needed; --codec <module>[#<export>] is checked and loaded', async (t) => {
  const file = cacheFile(t, { codec: jsonCodec });
  const emptied = cacheFile(t, { codec: jsonCodec });
  const plain = cacheFile(t);
  const codec = 'test/helpers/codecs.js#jsonCodec';
  const [stats, reset, asJson, keys, relative, absolute, wrong, nowhere, noPackage, noDefault, notCodec] = await Promise.all([
    json('cache', 'stats', file),
    cli('cache', 'reset', emptied),
    json('cache', 'keys', file),
    json('cache', 'keys', file, '--codec', codec),
    json('cache', 'stats', file, '--codec', `./${codec}`),
    cli('cache', 'verify', file, '--codec', path.join(root, codec)),
    cli('cache', 'stats', plain, '--codec', codec),
    cli('cache', 'stats', plain, '--codec', './nowhere.js'),
    cli('cache', 'stats', plain, '--codec', 'no-such-package-here'),
    cli('cache', 'stats', plain, '--codec', 'test/helpers/codecs.js'),
    cli('cache', 'stats', plain, '--codec', 'test/helpers/seeded-random.js#seededRandom'),
  ]);
  assert.equal(stats.code, 0);
  assert.equal(stats.value.entries, 7);
  // reset needs no codec either: clear() encodes and decodes nothing.
  assert.deepEqual(reset, { code: 0, stdout: `Cleared ${emptied} (it held 7 entries)\n`, stderr: '' });
  assert.deepEqual((await json('cache', 'keys', emptied)).value, []);
  const reopened = SharedCache.open(emptied, { codec: jsonCodec });
  reopened.set('again', { ok: true });
  assert.deepEqual(reopened.get('again'), { ok: true }, 'the reset file still belongs to its codec');
  reopened.close();
  assert.equal(asJson.code, 0);
  assert.deepEqual(asJson.value, KEYS_JSON);
  assert.deepEqual(keys.value, KEYS_JSON);
  assert.equal(relative.value.entries, 7);
  assert.deepEqual(absolute, { code: 0, stdout: `ok      ${file}\n`, stderr: '' });
  assert.deepEqual(wrong, failure(1, `${plain} was created with the codec "msgpackr-shared", not "json" (the --codec module's)`));
  assert.deepEqual(nowhere, failure(2, `--codec ./nowhere.js: could not load ./nowhere.js: Cannot find module '${path.join(root, 'nowhere.js')}'`));
  assert.deepEqual(noPackage, failure(2, "--codec no-such-package-here: could not load no-such-package-here: Cannot find module 'no-such-package-here'"));
  assert.deepEqual(noDefault, failure(2, '--codec test/helpers/codecs.js: test/helpers/codecs.js has no export named default'));
  assert.deepEqual(
    notCodec,
    failure(2, '--codec test/helpers/seeded-random.js#seededRandom: the export seededRandom of test/helpers/seeded-random.js is not a codec (an object with a name, encode() and decode())'),
  );
  const wrongReset = await cli('cache', 'reset', plain, '--codec', codec);
  assert.deepEqual(wrongReset, failure(1, `${plain} was created with the codec "msgpackr-shared", not "json" (the --codec module's)`));
});

test('on a file another process is using: stats, keys, verify and reset; the process goes on unharmed', async (t) => {
  const file = arenaPath(t, 'cli-live');
  const planted = SharedCache.open(file, { memoryBytes: 4 * MiB, shards: 4 });
  planted.set('planted:1', 'set before the other process started');
  planted.close();

  const keyCount = 200;
  const child = fork(childScript, [file, String(keyCount), '12345'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  t.after(() => child.exitCode === null && child.kill('SIGKILL'));
  const exited = once(child, 'exit');
  const next = async () => {
    const [message] = await Promise.race([
      once(child, 'message'),
      exited.then(([code, signal]) => {
        throw new Error(`the child exited (${code ?? signal}) early`);
      }),
    ]);
    return message;
  };
  assert.deepEqual(await next(), { ready: true });

  const [stats, human, keys, planted1, ...verified] = await Promise.all([
    json('cache', 'stats', file),
    cli('cache', 'stats', file),
    json('cache', 'keys', file),
    cli('cache', 'keys', file, '--prefix', 'planted:'),
    cli('cache', 'verify', file),
    cli('cache', 'verify', file),
  ]);
  assert.equal(stats.code, 0);
  assert.ok(stats.value.entries >= 1 + 10, `the planted, sticky and live keys (${stats.value.entries})`);
  assert.ok(stats.value.threads >= 1, `the other process's threads, not the command's (${stats.value.threads})`);
  assert.ok(stats.value.sets >= 1 + 10 + keyCount);
  assert.equal(human.code, 0);
  assert.equal(keys.code, 0);
  for (const { key, kind } of keys.value) {
    assert.equal(kind, 'string');
    assert.match(key, /^(planted:1|sticky:\d|live:\d+)$/);
  }
  assert.equal(keys.value.filter(({ key }) => key.startsWith('sticky:')).length, 10);
  assert.deepEqual(planted1, { code: 0, stdout: 'planted:1\n', stderr: '' });
  // No damage while the other process writes; a shard its writes kept busy may be left unchecked (read-only, verify never holds it up).
  const okLive = new RegExp(`^ok      ${file}( \\(\\d of 4 shards not checked\\)(\\n  shard \\d: not checked: .*)+)?\\n$`);
  for (const result of verified) {
    assert.equal(result.code, 0, 'verify is ok while the other process writes');
    assert.match(result.stdout, okLive);
    assert.equal(result.stderr, '');
  }

  child.send('check');
  const before = await next();
  assert.equal(before.sticky, 10, 'nothing was removed yet');
  assert.equal(before.roundFailures, 0);

  const reset = await json('cache', 'reset', file);
  assert.equal(reset.code, 0);
  assert.equal(reset.value.path, file);
  assert.ok(reset.value.entriesBefore >= 11);
  const [plantedAfter, stickyAfter] = await Promise.all([cli('cache', 'keys', file, '--prefix', 'planted:'), cli('cache', 'keys', file, '--prefix', 'sticky:')]);
  assert.deepEqual(plantedAfter, { code: 0, stdout: '', stderr: '' });
  assert.deepEqual(stickyAfter, { code: 0, stdout: '', stderr: '' });

  child.send('check');
  const after = await next();
  assert.equal(after.sticky, 0, 'the reset reached the other process, its near cache included');
  assert.equal(after.roundFailures, 0, 'after the reset, its sets and gets work');
  assert.ok(after.ops > before.ops, 'it went on working during the reset');
  const afterReset = await cli('cache', 'verify', file);
  assert.equal(afterReset.code, 0);
  assert.match(afterReset.stdout, okLive);

  child.send('stop');
  const final = await next();
  const [code, signal] = await exited;
  assert.equal(signal, null);
  assert.equal(code, 0);
  assert.equal(final.counts.torn, 0, 'no torn value');
  assert.equal(final.counts.foreign, 0, "no other key's value");
  assert.ok(final.counts.hits > 0);
  assert.ok(final.counts.ok === final.counts.hits, 'every hit was a whole value of its key');
  assert.deepEqual(final.verify, { ok: true, problems: [] });
});

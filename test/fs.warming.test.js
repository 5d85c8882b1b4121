// CacheFS warming: files read into the shared cache in the background, with
// a concurrency limit, progress events and cancellation.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';
import { untilCacheable } from './helpers/racy.js';

function setup(t) {
  const root = tempDir(t);
  mkdirSync(path.join(root, 'css/themes'), { recursive: true });
  mkdirSync(path.join(root, 'js'));
  writeFileSync(path.join(root, 'css/site.css'), 'body {}');
  writeFileSync(path.join(root, 'css/themes/dark.css'), 'body { color: white }');
  writeFileSync(path.join(root, 'css/notes.txt'), 'not css');
  writeFileSync(path.join(root, 'js/app.js'), 'main()');
  writeFileSync(path.join(root, 'index.html'), '<html>');
  const cache = new SharedCache({ memoryBytes: 4 * 2 ** 20 });
  return { root, cache, cfs: new CacheFS({ root, cache }) };
}

test('warm() reads the files into the cache, reporting each; a later read is a hit', async (t) => {
  const { cache, root, cfs } = setup(t);
  await untilCacheable(root);
  const job = cfs.warm(['index.html', 'css/site.css', 'missing.txt', '../outside']);
  const progress = [];
  const failed = [];
  job.on('progress', (event) => progress.push(event));
  job.on('failed', (event) => failed.push([event.path, event.error.code]));
  const summary = await job.finished;
  assert.deepEqual(summary, { total: 4, warmed: 2, failed: 2, skipped: 0, bytes: 13, cancelled: false });
  assert.deepEqual(progress.map((e) => e.path).sort(), ['css/site.css', 'index.html']);
  assert.ok(progress.every((e) => e.total === 4 && e.done >= 1));
  assert.deepEqual(failed.sort(), [['../outside', 'ERR_PATH_OUTSIDE_ROOT'], ['missing.txt', 'ENOENT']]);
  // Another CacheFS on the same cache (another thread, say) hits at once.
  const other = new CacheFS({ root, cache });
  assert.equal(await other.readFile('css/site.css', 'utf8'), 'body {}');
  assert.equal(other.stats().readHits, 1);
});

test('warmDir() walks a directory, recursively if asked, filtered by a glob', async (t) => {
  const { cfs } = setup(t);
  const warmed = async (dir, options) => {
    const paths = [];
    const job = cfs.warmDir(dir, options);
    job.on('progress', ({ path: p }) => paths.push(p));
    await job.finished;
    return paths.sort();
  };
  assert.deepEqual(await warmed('css'), ['css/notes.txt', 'css/site.css']);
  assert.deepEqual(await warmed('css', { recursive: true, pattern: '**/*.css' }), ['css/site.css', 'css/themes/dark.css']);
  assert.deepEqual(await warmed('', { recursive: true, pattern: '*.html' }), ['index.html']);
  await assert.rejects(cfs.warmDir('nope').finished, { code: 'ENOENT' });
});

test('warmFromList() warms the paths named in a list file; an AbortSignal cancels what has not started', async (t) => {
  const { root, cfs } = setup(t);
  const list = path.join(tempDir(t, 'list'), 'hot-files.txt');
  writeFileSync(list, '# most read yesterday\ncss/site.css\n\njs/app.js\nindex.html\n');
  const summary = await cfs.warmFromList(list, { concurrency: 1 }).finished;
  assert.equal(summary.warmed, 3);
  const controller = new AbortController();
  const job = cfs.warmFromList(list, { concurrency: 1, signal: controller.signal });
  job.once('progress', () => controller.abort());
  const cancelled = await job.finished;
  assert.equal(cancelled.cancelled, true);
  assert.equal(cancelled.warmed, 1);
  assert.equal(cancelled.skipped, 2);
  await assert.rejects(cfs.warmFromList(path.join(root, 'no-list.txt')).finished, { code: 'ENOENT' });
});

test('warming argument errors name what was expected', (t) => {
  const { cfs } = setup(t);
  assert.throws(() => cfs.warm('index.html'), { name: 'TypeError', message: 'paths must be an array of path strings (got "index.html")' });
  assert.throws(() => cfs.warm([], { concurrency: 0 }), { name: 'RangeError', message: 'options.concurrency must be an integer from 1 to 256 (got 0)' });
  assert.throws(() => cfs.warm([], { signal: {} }), { name: 'TypeError', message: 'options.signal must be an AbortSignal (got an instance of Object)' });
  assert.throws(() => cfs.warm([], { concurency: 2 }), { name: 'TypeError', message: 'options.concurency is not a known option; did you mean concurrency?' });
  assert.throws(() => cfs.warmDir('css', { recursive: 'yes' }), { name: 'TypeError', message: 'options.recursive must be a boolean (got "yes")' });
  assert.throws(() => cfs.warmDir('css', { pattern: /css/ }), { name: 'TypeError', message: "options.pattern must be a glob string such as '**/*.css' (got an instance of RegExp)" });
  assert.throws(() => cfs.warmDir('../x'), { code: 'ERR_PATH_OUTSIDE_ROOT' });
  assert.throws(() => cfs.warmFromList(5), { name: 'TypeError', message: 'listFile must be a string (got 5)' });
});

test('warmFromStats() warms the files the previous run read most, from its saved access statistics', async (t) => {
  const { root } = setup(t);
  await untilCacheable(root);
  const statsPath = path.join(tempDir(t, 'access'), 'access.json');
  const first = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * 2 ** 20 }), accessStatsPath: statsPath });
  for (let i = 0; i < 5; i++) await first.readFile('index.html');
  for (let i = 0; i < 3; i++) first.readFileSync('js/app.js');
  await first.readFile('css/site.css');
  // Warming reads are not accesses.
  await first.warm(['css/notes.txt']).finished;
  await first.close();
  const saved = JSON.parse(readFileSync(statsPath, 'utf8'));
  assert.equal(saved.version, 1);
  assert.equal(saved.root, first.root);
  assert.deepEqual(saved.files, [['index.html', 5], ['js/app.js', 3], ['css/site.css', 1]]);

  // The next run: a cold cache, warmed with the two most-read files.
  const next = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * 2 ** 20 }), accessStatsPath: statsPath });
  const job = next.warmFromStats({ limit: 2, concurrency: 1 });
  const warmed = [];
  job.on('progress', ({ path: p }) => warmed.push(p));
  assert.deepEqual(await job.finished, { total: 2, warmed: 2, failed: 0, skipped: 0, bytes: 12, cancelled: false });
  assert.deepEqual(warmed, ['index.html', 'js/app.js']);
  await next.readFile('index.html');
  await next.readFile('css/site.css');
  assert.equal(next.stats().readHits, 1, 'the warmed file is a hit, the other is not');
  await next.saveAccessStats();
  assert.deepEqual(JSON.parse(readFileSync(statsPath, 'utf8')).files, [['css/site.css', 1], ['index.html', 1]]);
  await next.close();
});

test('warmFromStats() errors: no statistics configured, unreadable or foreign statistics, bad options', async (t) => {
  const { root, cache, cfs } = setup(t);
  assert.throws(() => cfs.warmFromStats(), {
    name: 'ArenaCacheError',
    code: 'ERR_ACCESS_STATS',
    message: 'warmFromStats() needs access statistics: give new CacheFS() options.accessStatsPath',
  });
  await assert.rejects(cfs.saveAccessStats(), { code: 'ERR_ACCESS_STATS', message: 'saveAccessStats() needs access statistics: give new CacheFS() options.accessStatsPath' });
  const dir = tempDir(t, 'access');
  const missing = new CacheFS({ root, cache, accessStatsPath: path.join(dir, 'none.json') });
  assert.equal((await missing.warmFromStats().finished).total, 0, 'no statistics yet: nothing to warm');
  writeFileSync(path.join(dir, 'bad.json'), '{ not json');
  const bad = new CacheFS({ root, cache, accessStatsPath: path.join(dir, 'bad.json') });
  await assert.rejects(bad.warmFromStats().finished, { code: 'ERR_ACCESS_STATS', message: /^access statistics .*bad\.json are not valid JSON: / });
  writeFileSync(path.join(dir, 'other.json'), JSON.stringify({ version: 1, root: '/elsewhere', files: [['a', 1]] }));
  const other = new CacheFS({ root, cache, accessStatsPath: path.join(dir, 'other.json') });
  await assert.rejects(other.warmFromStats().finished, { code: 'ERR_ACCESS_STATS', message: `access statistics ${path.join(dir, 'other.json')} were saved for root /elsewhere, not ${other.root}` });
  writeFileSync(path.join(dir, 'old.json'), JSON.stringify({ version: 0, files: {} }));
  const old = new CacheFS({ root, cache, accessStatsPath: path.join(dir, 'old.json') });
  await assert.rejects(old.warmFromStats().finished, { code: 'ERR_ACCESS_STATS', message: /are not in the format of this version/ });
  assert.throws(() => missing.warmFromStats({ limit: 0 }), { name: 'RangeError', message: 'options.limit must be an integer from 1 to 10000000 (got 0)' });
  assert.throws(() => missing.warmFromStats({ top: 3 }), { name: 'TypeError' });
  assert.throws(() => new CacheFS({ root, cache, accessStatsPath: 5 }), { name: 'TypeError', message: 'options.accessStatsPath must be a file path (got 5)' });
  assert.throws(() => new CacheFS({ root, cache, accessStatsPath: 'x', accessStatsLimit: 0 }), {
    name: 'RangeError',
    message: 'options.accessStatsLimit must be an integer from 1 to 10000000 (got 0)',
  });
  for (const instance of [missing, bad, other, old]) await instance.close();
});

test('access statistics are saved when the process exits without close()', (t) => {
  const { root } = setup(t);
  const statsPath = path.join(tempDir(t, 'access'), 'access.json');
  const script = `
    import { SharedCache } from ${JSON.stringify(new URL('../lib/index.js', import.meta.url).href)};
    import { CacheFS } from ${JSON.stringify(new URL('../lib/fs/index.js', import.meta.url).href)};
    const cfs = new CacheFS({ root: ${JSON.stringify(root)}, cache: new SharedCache({ memoryBytes: 2 ** 20 }), accessStatsPath: ${JSON.stringify(statsPath)} });
    cfs.readFileSync('index.html');
    cfs.readFileSync('index.html');`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script]);
  assert.deepEqual(JSON.parse(readFileSync(statsPath, 'utf8')).files, [['index.html', 2]]);
});

test('saving access statistics never writes through a link planted at its path or its old temporary name', async (t) => {
  const root = tempDir(t, 'stats-root');
  const dir = tempDir(t, 'stats');
  const victim = path.join(tempDir(t, 'victim'), 'precious');
  fs.writeFileSync(victim, 'precious');
  const statsPath = path.join(dir, 'access.json');
  // Where the pid-named temporary file used to be, and at the path itself.
  fs.symlinkSync(victim, `${statsPath}.${process.pid}.tmp`);
  fs.symlinkSync(victim, statsPath);
  fs.writeFileSync(path.join(root, 'a.txt'), 'a');
  const cfs = new CacheFS({ root, cache: new SharedCache({ memoryBytes: 4 * 2 ** 20 }), accessStatsPath: statsPath });
  await cfs.readFile('a.txt');
  await cfs.saveAccessStats();
  await cfs.close();
  assert.equal(fs.readFileSync(victim, 'utf8'), 'precious');
  assert.equal(fs.lstatSync(statsPath).isFile(), true, 'the link was replaced by the file');
  assert.equal(fs.statSync(statsPath).mode & 0o777, 0o600);
  assert.deepEqual(JSON.parse(fs.readFileSync(statsPath, 'utf8')).files, [['a.txt', 1]]);
  assert.deepEqual(fs.readdirSync(dir).sort(), ['access.json', `access.json.${process.pid}.tmp`], 'no temporary file left behind');
});

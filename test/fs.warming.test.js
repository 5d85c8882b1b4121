// CacheFS warming: files read into the shared cache in the background, with
// a concurrency limit, progress events and cancellation.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { SharedCache } from '../lib/index.js';
import { CacheFS } from '../lib/fs/index.js';
import { tempDir } from './helpers/fs-tree.js';

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

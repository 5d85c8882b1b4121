// A process that starts a fetch() of one key in a file-backed cache whose
// loader resolves only when the parent says 'resolve' (or never, if the
// parent kills it first). Run by test/file.fetch-loaders.test.js, in this
// PID namespace or another.
import { createInterface } from 'node:readline';
import { SharedCache } from '../../lib/index.js';

const { path, key } = JSON.parse(process.argv[2]);
const cache = SharedCache.open(path);
let resolveLoader;
const loaded = cache.fetch(key, () => {
  process.stdout.write('loading\n');
  return new Promise((resolve) => {
    resolveLoader = resolve;
  });
});
createInterface({ input: process.stdin }).on('line', async (line) => {
  if (line !== 'resolve') return;
  resolveLoader('from the child');
  await loaded;
  cache.close();
  process.exit(0);
});

// The map of the sources (docs/architecture.md) and the lint rule that
// enforces it agree: the doc's layer table is scripts/layers.js, every folder
// of lib/ is on the map, every file the map names exists, and ESLint really
// refuses an import against the rule and an import cycle; and no two files
// of lib/ share a name (the entry points aside).

import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { LAYERS } from '../scripts/layers.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8');

/** The rows of the markdown table that follows `heading` text, as arrays of cells. */
function tableAfter(marker) {
  const lines = doc.slice(doc.indexOf(marker)).split('\n');
  const start = lines.findIndex((line) => line.startsWith('|'));
  const rows = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line.split('|').slice(1, -1).map((cell) => cell.trim()));
  }
  return rows;
}

const names = (cell) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);

test('the layer table of docs/architecture.md is the one scripts/layers.js enforces', () => {
  const rows = tableAfter('<!-- layers:');
  const documented = Object.fromEntries(rows.map(([folder, allowed]) => [names(folder)[0], names(allowed)]));
  assert.deepEqual(documented, { ...LAYERS });
});

test('every folder of lib/ is a layer and is on the map', () => {
  const folders = [];
  (function walk(dir) {
    for (const entry of readdirSync(path.join(root, 'lib', dir), { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const folder = dir === '' ? entry.name : `${dir}/${entry.name}`;
      const hasCode = readdirSync(path.join(root, 'lib', folder)).some((name) => name.endsWith('.js'));
      if (hasCode) folders.push(folder);
      walk(folder);
    }
  })('');
  const mapped = tableAfter('## Folders').flatMap(([folder]) => names(folder));
  for (const folder of folders) {
    assert.ok(Object.hasOwn(LAYERS, folder), `lib/${folder} is not in scripts/layers.js`);
    assert.ok(mapped.includes(`lib/${folder}/`), `lib/${folder}/ is not in the folder table of docs/architecture.md`);
  }
});

test('every file the map names exists', () => {
  const files = tableAfter('## Where each behaviour lives').flatMap(([, where]) => names(where));
  assert.ok(files.length > 20);
  for (const file of files) assert.ok(existsSync(path.join(root, 'lib', file)), `docs/architecture.md names lib/${file}, which does not exist`);
});

test('lint refuses an import against the layer rule, and an import cycle', async () => {
  const eslint = new ESLint({ cwd: root });
  const lint = async (file, code) => (await eslint.lintText(code, { filePath: path.join(root, file) }))[0].messages.map((message) => message.ruleId);
  // Upward: the cache may not know the invalidation bus built on it.
  assert.deepEqual(await lint('lib/cache/layer-probe.js', "import { InvalidationBus } from '../invalidation/bus.js';\nexport { InvalidationBus };\n"), ['import-x/no-restricted-paths']);
  // Sideways: the entry arena may not use the block arena.
  assert.deepEqual(await lint('lib/arena/entries/layer-probe.js', "import { BlockArena } from '../blocks/blocks.js';\nexport { BlockArena };\n"), ['import-x/no-restricted-paths']);
  // Skipping a layer: the bus goes through the cache, not the record format.
  assert.deepEqual(await lint('lib/invalidation/layer-probe.js', "import { KEY_STRING } from '../arena/entries/record.js';\nexport { KEY_STRING };\n"), ['import-x/no-restricted-paths']);
  // Allowed: down one layer.
  assert.deepEqual(await lint('lib/fs/layer-probe.js', "import { SharedCache } from '../cache/shared-cache.js';\nexport { SharedCache };\n"), []);
  // A circle: shard.js imports verify.js's importers; verify.js importing shard.js closes it.
  const cycle = await lint('lib/arena/entries/verify.js', `${readFileSync(path.join(root, 'lib/arena/entries/verify.js'), 'utf8')}\nimport { Shard as LayerProbe } from './shard.js';\nexport { LayerProbe };\n`);
  assert.ok(cycle.includes('import-x/no-cycle'), `no cycle reported: ${cycle}`);
});

test('no two files of lib/ share a name, except the entry points (index.js)', () => {
  const seen = new Map();
  (function walk(dir) {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const file = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(file);
      else if (entry.name.endsWith('.js') && entry.name !== 'index.js') {
        assert.ok(!seen.has(entry.name), `${file} and ${seen.get(entry.name)} share a name`);
        seen.set(entry.name, file);
      }
    }
  })('lib');
});

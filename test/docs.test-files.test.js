// CONTRIBUTING.md's rule for test files holds: every test file opens with a
// comment saying what it proves, and every helper and fixture with one
// saying its job, so a reader knows a file before reading its code.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import test from 'node:test';

const testDir = new URL('./', import.meta.url);

/** The .js files of test/ (or of a folder of it), as paths relative to test/. */
function jsFiles(folder = '') {
  return readdirSync(new URL(folder, testDir))
    .filter((name) => name.endsWith('.js'))
    .map((name) => `${folder}${name}`);
}

/** The comment lines a file opens with (`//` lines before anything else). */
function openingComment(file) {
  const lines = readFileSync(new URL(file, testDir), 'utf8').split('\n');
  const comment = [];
  for (const line of lines) {
    if (!line.startsWith('//')) break;
    comment.push(line.slice(2).trim());
  }
  return comment.join(' ').trim();
}

test('every test file opens with a comment saying what it proves', () => {
  const files = jsFiles().filter((name) => name.endsWith('.test.js'));
  assert.ok(files.length > 100, `${files.length} test files found`);
  const without = files.filter((file) => openingComment(file) === '');
  assert.deepEqual(without, [], 'test files without an opening comment (CONTRIBUTING.md, How to add a test)');
});

test('every helper and fixture opens with a comment saying its job', () => {
  const files = [...jsFiles('helpers/'), ...jsFiles('fixtures/')];
  assert.ok(files.length > 40, `${files.length} helpers and fixtures found`);
  const without = files.filter((file) => openingComment(file) === '');
  assert.deepEqual(without, [], 'helpers and fixtures without an opening comment');
});

// Every relative link in the documentation (README.md, CONTRIBUTING.md,
// docs/*.md) leads somewhere: the file or directory exists, and a #anchor
// names a heading of the target page (by GitHub's slug) or an explicit
// <a id>. Links inside code are not links; URLs with a scheme are not checked.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { anchors, documentationFiles, linkTargets, readDocumentation, REPO_ROOT } from './helpers/markdown.js';

const anchorsByFile = new Map();
function anchorsOf(file) {
  if (!anchorsByFile.has(file)) anchorsByFile.set(file, anchors(readDocumentation(file)));
  return anchorsByFile.get(file);
}

/** Why `target`, linked from `file`, leads nowhere, or null when it resolves. */
function brokenLink(file, target) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null;
  const [rawPath, anchor] = target.split('#', 2);
  const linkedPath = decodeURIComponent(rawPath);
  if (linkedPath.startsWith('/')) return 'is absolute: link relative to the page, as GitHub and npm render it';
  const resolved = linkedPath === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), linkedPath));
  if (resolved.startsWith('..')) return `leads outside the repository (${resolved})`;
  const absolute = path.join(REPO_ROOT, resolved);
  if (!existsSync(absolute)) return `${resolved} does not exist`;
  if (anchor === undefined) return null;
  if (!resolved.endsWith('.md') || statSync(absolute).isDirectory()) return `has an anchor, but ${resolved} is not a Markdown page`;
  if (anchor === '') return 'has an empty anchor';
  if (!anchorsOf(resolved).has(decodeURIComponent(anchor))) return `${resolved} has no heading with the anchor #${anchor}`;
  return null;
}

for (const file of documentationFiles()) {
  test(`${file}: every relative link and anchor resolves`, () => {
    const broken = [];
    for (const { line, target } of linkTargets(readDocumentation(file))) {
      const why = brokenLink(file, target);
      if (why) broken.push(`${file}:${line} (${target}): ${why}`);
    }
    assert.deepEqual(broken, []);
  });
}
